"""The command-line application: ``skfair-audit`` (``python -m skfair_audit``).

The subcommands (``demo``, ``group``, ``faith``, ``monitor``) read audit trails and models
from files, run the library's audits, print a table and a verdict, write reports and exit
with a code a CI pipeline can gate on (0 pass, 1 unfair, 2 usage or data error). The
application lives here, apart from the library: the console (progress, messages), file I/O
(tables, models) and the demo; it talks to results only through their shared protocol
(:mod:`skfair_audit.results`) and to reports through :mod:`skfair_audit.report`.
"""

from ._main import main

__all__ = ["main"]
