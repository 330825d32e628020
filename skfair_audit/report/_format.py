"""Helpers of the report's sections (shared with the results' notebook display)."""

from __future__ import annotations

# re-exported to the section builders and the renderers
from .._utils import format_value, json_safe  # noqa: F401

#: The extras of ``pyproject.toml`` (``pip install "skfair_audit[<extra>,...]"``); the
#: tests check this list against the project file.
EXTRAS = ("pandas", "plot", "dask", "progress", "skops", "fairlearn", "test", "docs", "all")


def install_command(version, extras=()):
    """The shell line that installs the ``skfair_audit`` version that wrote a report, with the
    extras the run used.

    A release is installed from the package index; a development or local version
    (``0.1.0.dev0``, ``1.0+abc``) is served by no index, so the line installs the checkout
    it came from.

    Parameters
    ----------
    version : str
    extras : sequence of str
        Extras of ``skfair_audit`` (see :data:`EXTRAS`), e.g. ``("pandas", "plot")``; any
        other name is a further package to install (e.g. ``"pyarrow"`` for Parquet files).

    Returns
    -------
    str

    Examples
    --------
    >>> install_command("1.0", ("plot", "pandas", "pyarrow"))
    'python -m pip install "skfair_audit[pandas,plot]==1.0" pyarrow'
    >>> install_command("1.1.dev0", ("pandas",))[:36]
    'python -m pip install ".[pandas]"  #'
    """
    ours = [e for e in EXTRAS if e in extras]
    others = sorted({e for e in extras if e not in EXTRAS})
    brackets = f"[{','.join(ours)}]" if ours else ""
    more = "".join(f" {p}" for p in others)
    if ".dev" in version or "+" in version:
        checkout = f'".{brackets}"' if brackets else "."
        return (f"python -m pip install {checkout}{more}  # from a checkout of "
                f"skfair_audit {version} (a development version: no package index serves it)")
    return f'python -m pip install "skfair_audit{brackets}=={version}"{more}'
