"""skfair_audit: fairness audits of black-box classifiers with statistical guarantees.

The public objects are imported lazily, so that ``import skfair_audit`` stays fast and never
imports pandas, matplotlib or dask.
"""

from __future__ import annotations

import importlib

from ._version import __version__

# public name -> subpackage that defines it
_LAZY = {
    "FaithAuditor": "faith",
    "GroupDisparityAuditor": "group",
    "FairModelSelector": "model_selection",
    "FairnessMonitor": "monitor",
    "datasets": None,
    "faith": None,
    "group": None,
    "model_selection": None,
    "monitor": None,
    "report": None,
    "results": None,
    "scale": None,
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module 'skfair_audit' has no attribute {name!r}")
    where = _LAZY[name]
    if where is None:
        return importlib.import_module(f".{name}", __name__)
    return getattr(importlib.import_module(f".{where}", __name__), name)


def __dir__():
    return sorted(__all__)
