"""Helpers shared by the renderers ``doc/_render_<name>.py``: where the results are, how a
results file is loaded, and the rst pieces (list tables, sections, percentages).
"""

from __future__ import annotations

import csv
import json
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent


RESULTS = ROOT / "benchmarks" / "results"


GUIDE = ROOT / "doc" / "user_guide"


GENERATED = (".. This file is written by doc/make_reproduction_tables.py from benchmarks/results.\n"
             "   Do not edit it by hand.\n")


def load(name):
    path = RESULTS / name
    if name.endswith(".csv"):
        with path.open(newline="", encoding="utf-8") as f:
            return list(csv.DictReader(f))
    return json.loads(path.read_text(encoding="utf-8"))


def pct(x, digits=1):
    return f"{100 * float(x):.{digits}f}%"


def num(x, digits=3):
    return f"{float(x):.{digits}f}"


def table(header, rows):
    """An rst list-table."""
    lines = [".. list-table::", "   :header-rows: 1", ""]
    for row in [header, *rows]:
        lines.append(f"   * - {row[0]}")
        lines.extend(f"     - {cell}" for cell in row[1:])
    return "\n".join(lines) + "\n"


def section(title, char="-"):
    return f"{title}\n{char * len(title)}\n"


def share(x):
    """A rate as a percentage with no decimals, e.g. for shares of splits."""
    return pct(x, 0)


def figure(name, alt, *, depth=1):
    """An rst image of ``benchmarks/results/<name>`` for a page ``depth`` folders below the
    repository root (1: ``doc/``, 2: ``doc/user_guide/``)."""
    return (f"\n.. image:: {'../' * depth}benchmarks/results/{name}\n"
            f"   :width: 100%\n   :alt: {alt}\n")
