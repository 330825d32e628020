"""Helpers of the report's sections (shared with the results' notebook display)."""

from __future__ import annotations

# re-exported to the section builders and the renderers
from ..utils import can_plot, format_value, json_safe  # noqa: F401
