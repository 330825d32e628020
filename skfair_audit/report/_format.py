"""Helpers of the report's sections."""

from __future__ import annotations

import importlib.util

from ..utils import format_value, json_safe  # noqa: F401 - re-exported to the renderers


def can_plot(plot):
    """Whether to embed a figure: asked for, and matplotlib installed."""
    return plot and importlib.util.find_spec("matplotlib") is not None
