"""Optional dependencies, imported only when a feature needs them."""

from __future__ import annotations

import importlib

#: module name -> the pip extra that installs it
_EXTRAS = {
    "pandas": "pandas",
    "matplotlib": "plot",
    "matplotlib.pyplot": "plot",
    "dask": "dask",
    "dask.dataframe": "dask",
    "distributed": "dask",
}


def import_optional(name: str, purpose: str = ""):
    """Import ``name`` or raise an ImportError that says which extra installs it.

    Parameters
    ----------
    name : str
        Module to import, e.g. ``"pandas"`` or ``"matplotlib.pyplot"``.
    purpose : str
        What the caller wanted to do, for the message.
    """
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        extra = _EXTRAS.get(name, name.split(".")[0])
        what = f" to {purpose}" if purpose else ""
        raise ImportError(
            f"{name} is required{what}; install it with "
            f"`pip install 'skfair_audit[{extra}]'`."
        ) from exc
