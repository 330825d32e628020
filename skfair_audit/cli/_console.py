"""Console output shared by the command line and the demo: progress, warnings, reports."""

from __future__ import annotations

import argparse
import re
import shlex
import sys
import time
import warnings
from pathlib import Path

from .._resampling import parse_memory_limit
from .._utils import POSITIVE_INT, PROBABILITY, Interval, format_value
from ._io import PARQUET_SUFFIXES, PICKLE_SUFFIXES, UserError, first_line

EXIT_PASS = 0
EXIT_UNFAIR = 1
EXIT_ERROR = 2


class Progress:
    """One-line progress messages on stderr with the elapsed time; silent when ``quiet``."""

    def __init__(self, quiet=False, stream=None):
        self.quiet = quiet
        self.stream = sys.stderr if stream is None else stream
        self.start = time.perf_counter()

    def __call__(self, message):
        if not self.quiet:
            elapsed = time.perf_counter() - self.start
            print(f"[{elapsed:6.1f}s] {message}", file=self.stream, flush=True)

    def warn(self, message):
        if not self.quiet:
            print(f"skfair-audit: warning: {message}", file=self.stream, flush=True)


REPORT_SUFFIXES = (".html", ".htm", ".json", ".md")


def check_report_path(path, option="--report"):
    """``--report``: a folder, or a file whose suffix names one of the report's formats.

    Checked before the audit runs, so that a typo (``rep.pdf``) does not cost the audit and
    is not silently written as a folder of that name.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix and suffix not in REPORT_SUFFIXES and not path.is_dir():
        raise UserError(
            f"{option} {str(path)!r}: a report is written as HTML, JSON or Markdown, not "
            f"{suffix}; give a file ending in {', '.join(REPORT_SUFFIXES)} or a folder (no "
            "suffix) for all three with the figures."
        )
    if path.exists() and not path.is_dir() and not suffix:
        raise UserError(f"{option} {str(path)!r} is an existing file, not a folder.")
    return path


def run_extras(tables=(), model=None):
    """The extras of ``skfair_audit`` a command-line run used, for its report's install line:
    pandas (reading tables), plot (the figures), skops (a ``.skops`` model) and pyarrow for
    Parquet files."""
    extras = ["pandas", "plot"]
    if model is not None and Path(model).suffix.lower() not in PICKLE_SUFFIXES:
        extras.append("skops")
    if any(t and Path(t).suffix.lower() in PARQUET_SUFFIXES for t in tables):
        extras.append("pyarrow")
    return tuple(extras)


def write_report(report, path, progress, option="--report"):
    """Write the report into ``path`` (a folder, or ``.html`` / ``.json`` / ``.md`` file).

    Folders that do not exist yet are created, and the progress says so; figures that could
    not be drawn (no matplotlib) are noted in the report and warned about on stderr.
    """
    path = check_report_path(path, option)
    suffix = path.suffix.lower()
    folder = path.parent if suffix else path
    missing_folder = next((p for p in (folder, *folder.parents) if p.exists()), None) != folder
    try:
        if suffix in (".html", ".htm"):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(report.to_html(), encoding="utf-8")
            written = [path]
        elif suffix == ".json":
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(report.to_json() + "\n", encoding="utf-8")
            written = [path]
        elif suffix == ".md":
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(report.to_markdown(), encoding="utf-8")
            written = [path]
        else:
            written = list(report.write(path).values())
    except OSError as exc:
        raise UserError(f"cannot write the report to {str(path)!r}: {first_line(exc)}") from None
    if missing_folder:
        progress(f"created the folder {str(folder)!r} ({option})")
    progress(f"report written: {', '.join(str(p) for p in written)}")
    missing = report.missing_figures
    if missing:
        progress.warn(
            f"{len(missing)} of {len(report.figures)} figures of the report not drawn: "
            "matplotlib is not installed (python -m pip install \"skfair_audit[plot]\"); the "
            "report notes where each would be."
        )
    return written


#: Parameters of the library that the command line spells as options: its error messages
#: name parameters (the library knows nothing of the command line), the command line's name
#: the options.
OPTION_NAMES = {
    "pos_label": "--pos-label", "epsilon0": "--epsilon0", "n_resamples": "--n-resamples",
    "random_state": "--random-state", "min_size": "--min-size",
    "confidence_level": "--confidence-level", "memory_limit": "--memory-limit",
}
_OPTION_PATTERN = re.compile(r"(?<![\w-])(" + "|".join(OPTION_NAMES) + r")(?![\w-])")
#: Parameters whose names are also plain words ("space", "method"): replaced only in the
#: Python spelling of a setting, ``space='empirical'`` (or ``FaithAuditor(space='grid')``).
SETTING_NAMES = ("space", "method", "epsilon", "delta", "alternative", "direction", "degree",
                 "bins", "depth", "alpha", "q")
_VALUE = r"=(?:'([^']*)'|\"([^\"]*)\"|([\w.+-]+))"
_SETTING_PATTERN = re.compile(r"\b(" + "|".join(SETTING_NAMES) + r")" + _VALUE)
_CALL_PATTERN = re.compile(r"\b[A-Z]\w*\((" + "|".join(SETTING_NAMES) + r")" + _VALUE + r"\)")


def _setting(match):
    name, *values = match.groups()
    value = next(v for v in values if v is not None)
    return f"--{name.replace('_', '-')} {value}"


def in_option_words(message):
    """A library message in the command line's words: parameter names replaced by the
    options, and Python settings (``space='empirical'``) by the options that make them
    (``--space empirical``).

    Examples
    --------
    >>> in_option_words("use the empirical sample space (space='empirical') or raise "
    ...                 "memory_limit")
    'use the empirical sample space (--space empirical) or raise --memory-limit'
    >>> in_option_words("use FaithAuditor(space='empirical') or 'auto'")
    "use --space empirical or 'auto'"
    """
    message = _SETTING_PATTERN.sub(_setting, _CALL_PATTERN.sub(_setting, message))
    return _OPTION_PATTERN.sub(lambda match: OPTION_NAMES[match.group(1)], message)


def command_line(argv):
    return "skfair-audit " + " ".join(shlex.quote(a) for a in argv)


def write_run_report(args, argv, progress, *, title, audited, outcome, data, sections,
                     extras=()):
    """Write the report of a subcommand's run into ``args.report``.

    Every run's report has the same frame: the title, what was audited and the outcome in a
    sentence each, a data section (the table ``data``), the audit's own ``sections``, the
    command line ``argv`` that reruns it and the extras it needs (:func:`run_extras`).
    """
    from ..report import AuditReport, data_section

    report = AuditReport(title=title, audited=audited, outcome=outcome,
                         sections=(data_section(data), *sections),
                         command=command_line(argv), extras=extras)
    write_report(report, args.report, progress)


def run_quietly(function, progress, *args, **kwargs):
    """Call ``function``, reporting the library's warnings as one line each."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = function(*args, **kwargs)
    seen = set()
    for w in caught:
        message = first_line(w.message)
        if message not in seen and not issubclass(w.category, (DeprecationWarning,
                                                                FutureWarning)):
            seen.add(message)
            progress.warn(message)
    return out


def print_table(columns, rows, stream=None):
    stream = sys.stdout if stream is None else stream
    cells = [[str(c) for c in columns]] + [[format_value(v) for v in row] for row in rows]
    widths = [max(len(r[k]) for r in cells) for k in range(len(columns))]
    for i, row in enumerate(cells):
        line = "  ".join(
            cell.ljust(w) if k == 0 else cell.rjust(w)
            for k, (cell, w) in enumerate(zip(row, widths, strict=True))
        )
        print(line.rstrip(), file=stream)
        if i == 0:
            print("  ".join("-" * w for w in widths), file=stream)


# -- argument types shared by the subcommands ---------------------------------------
def option_type(convert, constraint):
    """An argparse type: ``convert`` the text, then check it against a declarative
    constraint of the library (:mod:`skfair_audit._utils`), with its description as message."""

    def parse(text):
        try:
            value = convert(text)
        except ValueError:
            value = None
        if value is None or not constraint.is_satisfied_by(value):
            raise argparse.ArgumentTypeError(f"expected {constraint}, got {text!r}")
        return value

    parse.__name__ = convert.__name__
    return parse


#: Smaller memory budgets cannot hold even one step of the smallest audit: refused at once.
MIN_MEMORY_LIMIT = 64 * 2**10


def check_memory_size(text, option="--memory-limit"):
    """A memory budget option (``500MB``, ``4GiB``), checked by the library's own rule
    (:func:`~skfair_audit._resampling.parse_memory_limit`) before anything is loaded."""
    try:
        size = parse_memory_limit(text)
    except ValueError:
        raise UserError(
            f"{option} {text!r} is not a byte count: write a positive size such as 500MB, "
            "4GiB or 1000000 (bytes)."
        ) from None
    if size < MIN_MEMORY_LIMIT:
        raise UserError(
            f"{option} {text} is {size:,.0f} bytes: no audit fits in less than 64 KiB (the "
            "default is 2GiB); give a budget such as 500MB."
        )
    return text


probability = option_type(float, PROBABILITY)
non_negative = option_type(float, Interval("real", 0, None))
finite = option_type(float, Interval("real"))
positive_int = option_type(int, POSITIVE_INT)


def add_common(parser, *, report_default=None):
    parser.add_argument("--json", action="store_true",
                        help="print the result as JSON on stdout (instead of a table)")
    parser.add_argument(
        "--report", metavar="PATH", default=report_default,
        help="write the report: a folder (HTML + JSON + Markdown + figures) or a single "
             ".html / .json / .md file",
    )
    parser.add_argument("--quiet", action="store_true",
                        help="no progress or warnings on stderr")
    parser.add_argument("--n-resamples", type=positive_int, default=1000, metavar="B",
                        help="bootstrap resamples (default: 1000)")
    parser.add_argument("--random-state", type=int, default=0, metavar="SEED",
                        help="seed of the bootstrap (default: 0): same seed, same numbers")
    parser.add_argument("--seed", type=int, dest="random_state", help=argparse.SUPPRESS)


def target_option(text):
    """A ``--target`` option: ``overall``, ``constant:<v>`` or ``group:<name>`` (a reference
    group)."""
    if text == "overall":
        return "overall"
    kind, sep, value = text.partition(":")
    if sep and kind == "constant":
        return finite(value)
    if sep and kind == "group" and value:
        return value
    raise argparse.ArgumentTypeError(
        f"expected 'overall', 'constant:<number>' or 'group:<name>' (e.g. "
        f"'group:race=Caucasian'), got {text!r}"
    )
