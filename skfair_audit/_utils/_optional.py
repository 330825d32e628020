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


def user_stacklevel() -> int:
    """The ``stacklevel`` that makes a warning point at the first frame outside the library.

    Call it as the ``stacklevel`` argument of :func:`warnings.warn`: the call sites of the
    library sit at different depths (functions, summary methods, the estimator), and the
    user must see the line of *their* code.
    """
    import os
    import sys

    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(package):
        frame, level = frame.f_back, level + 1
    return level
