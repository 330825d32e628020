"""Helpers of the report's sections."""

from __future__ import annotations

import importlib.util

from ..utils import format_value, json_safe  # noqa: F401 - re-exported to the renderers


def can_plot(plot):
    """Whether to embed a figure: asked for, and matplotlib installed."""
    return plot and importlib.util.find_spec("matplotlib") is not None


def install_command(version):
    """The shell line that installs the ``skfair_audit`` version that wrote a report.

    A release is installed from the package index; a development or local version
    (``0.1.0.dev0``, ``1.0+abc``) is served by no index, so the line installs the checkout
    it came from.

    Parameters
    ----------
    version : str

    Returns
    -------
    str
    """
    if ".dev" in version or "+" in version:
        return (f"python -m pip install .  # from a checkout of skfair_audit {version} "
                "(a development version: no package index serves it)")
    return f"python -m pip install 'skfair_audit=={version}'"
