"""Helpers of the report's sections (shared with the results' notebook display)."""

from __future__ import annotations

# re-exported to the section builders and the renderers
from ..utils import can_plot, format_value, json_safe  # noqa: F401


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
