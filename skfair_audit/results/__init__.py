"""The result protocol shared by every audit of the library.

Every result object (:class:`skfair_audit.faith.FaithResult`, the results of
:mod:`skfair_audit.group`, including :class:`~skfair_audit.group.RKHSBoundsResult`, and
:class:`skfair_audit.monitor.MonitorResult`) is an :class:`AuditResult`: it answers the same
questions (its :meth:`~AuditResult.verdict`, its :meth:`~AuditResult.table`, its
:meth:`~AuditResult.confidence_interval`, its :meth:`~AuditResult.guarantee` in words, its
:meth:`~AuditResult.key_figures`, :meth:`~AuditResult.to_frame` and the notebook display), so
that the report (:mod:`skfair_audit.report`) and the command line present any of them without
asking which procedure produced it. The audit subpackages share nothing else: ``faith`` and
``group`` import from each other only through this module.
"""

from .._utils import ConfidenceInterval
from ._protocol import AuditResult, ResultTable, Verdict

__all__ = ["AuditResult", "ConfidenceInterval", "ResultTable", "Verdict"]
