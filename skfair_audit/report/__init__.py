"""Audit reports: one self-contained HTML file, plus Markdown and JSON forms for machines.

A :class:`AuditReport` is a list of :class:`Section` objects (text, key figures, tables and
matplotlib figures) with what was audited and how to rerun it. The section builders
(:func:`faith_section`, :func:`group_section`, :func:`selection_section`,
:func:`monitor_section`, :func:`ratio_section`) turn the result objects of
:mod:`skfair_audit.faith`, :mod:`skfair_audit.group`, :mod:`skfair_audit.model_selection` and
:mod:`skfair_audit.monitor` into sections that state each procedure's guarantee in
plain words; they talk to results only through the shared result protocol
(:class:`skfair_audit.results.AuditResult`), and :func:`group_section` takes any result of
it (the group results, the RKHS audit's included). Figures are embedded in the HTML as base64
PNG, so the file opens anywhere without network access.
"""

from ._faith import faith_section
from ._monitor import monitor_section
from ._ratio import ratio_section
from ._report import AuditReport, Figure, Section, Table
from ._sections import data_section, group_section, selection_section

__all__ = [
    "AuditReport",
    "Figure",
    "Section",
    "Table",
    "data_section",
    "faith_section",
    "group_section",
    "monitor_section",
    "ratio_section",
    "selection_section",
]
