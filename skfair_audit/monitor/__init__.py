"""Anytime-valid fairness monitoring of a deployed model's audit trail.

:class:`FairnessMonitor` follows the audit trail batch by batch (``partial_fit``) over the
group collections of :mod:`skfair_audit.group` (intersections of protected attributes,
intervals of a covariate) and keeps a confidence sequence for every group's rate of a 0/1
metric (selection rate, FPR, FNR, TPR, PPV, error rate ...), valid simultaneously over all
groups and all looks: flags and certificates may be read at any look. Betting confidence
sequences (Waudby-Smith & Ramdas 2024) by default, asymptotic ones as an option; FDR flags
by e-BH at the look you act on. The state is saved atomically (:meth:`FairnessMonitor.save`,
``.npz``, no pickle) and refused by a monitor with other parameters (:class:`StateFileError`).
:func:`simulate_crossings` is the count-level simulation behind the validity benchmarks.
"""

from ._betting import simulate_crossings
from ._monitor import FairnessMonitor
from ._result import MonitorResult
from ._state import StateFileError

__all__ = ["FairnessMonitor", "MonitorResult", "StateFileError", "simulate_crossings"]
