"""The ``skfair-audit`` command line (also ``python -m skfair_audit``).

Subcommands: ``demo`` (the README's main job: a complete audit of a model trained on COMPAS),
``group`` (group audit of an audit-trail file) and ``faith`` (FaiTH audit of a saved model).

Exit codes, usable as a gate in a CI pipeline:

* ``0`` — the audit ran and found nothing at the chosen level (``demo``: it ran);
* ``1`` — the audit ran and found the model unfair at the chosen level:
  ``faith``: the δ-fairness test rejects; ``group --procedure flag``: at least one group is
  flagged; ``group --procedure threshold``: some non-empty group is not certified;
  ``group --procedure bounds --epsilon0 E``: some non-empty group's bound does not certify
  the requested side of ``E`` (without ``--epsilon0`` bounds are descriptive: exit 0);
* ``2`` — an error (bad input, missing file or column, missing optional dependency).
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import sys
import time
import warnings
from pathlib import Path

EXIT_PASS = 0
EXIT_UNFAIR = 1
EXIT_ERROR = 2

#: Types outside skops' own trusted set that ``faith`` accepts without ``--trust``: fitted
#: internals of standard scikit-learn estimators (trees, boosting, calibration, MLP, kNN).
DEFAULT_TRUSTED_TYPES = (
    "sklearn.tree._tree.Tree",
    "sklearn.ensemble._hist_gradient_boosting.predictor.TreePredictor",
    "sklearn.calibration._CalibratedClassifier",
    "sklearn.calibration._SigmoidCalibration",
    "sklearn.isotonic.IsotonicRegression",
    "sklearn.neural_network._stochastic_optimizers.AdamOptimizer",
    "sklearn.neural_network._stochastic_optimizers.SGDOptimizer",
    "sklearn.neighbors._kd_tree.KDTree",
    "sklearn.neighbors._ball_tree.BallTree",
    "sklearn.metrics._dist_metrics.EuclideanDistance64",
)

PICKLE_SUFFIXES = (".pkl", ".pickle", ".joblib", ".jbl")
PARQUET_SUFFIXES = (".parquet", ".pq")

EXIT_CODES_TEXT = (
    "Exit codes: 0 pass (nothing found at the chosen level), 1 unfair at the chosen level, "
    "2 error."
)


class UserError(Exception):
    """A mistake of the user's: reported in one line, never as a traceback."""


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


# -- argument types ----------------------------------------------------------------------
def _probability(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1), got {text!r}") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1), got {text!r}")
    return value


def _non_negative(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}") from None
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"expected a finite number >= 0, got {text!r}")
    return value


def _finite(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _target(text):
    """``overall``, ``constant:<v>`` or ``group:<name>``."""
    if text == "overall":
        return "overall"
    kind, sep, value = text.partition(":")
    if sep and kind == "constant":
        return _finite(value)
    if sep and kind == "group" and value:
        return value
    raise argparse.ArgumentTypeError(
        f"expected 'overall', 'constant:<number>' or 'group:<name>' (e.g. "
        f"'group:race=Caucasian'), got {text!r}"
    )


# -- input files --------------------------------------------------------------------------
def read_table(path):
    """Read an audit-trail file (CSV, or Parquet by its suffix) into a DataFrame.

    Raises :class:`UserError` in one line for a missing or unreadable file.
    """
    from .utils import import_optional

    pd = import_optional("pandas", "read audit-trail files")
    path = Path(path)
    if not path.is_file():
        raise UserError(f"cannot read {str(path)!r}: no such file.")
    if path.suffix.lower() in PARQUET_SUFFIXES:
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise UserError(
                "reading Parquet files needs pyarrow: `pip install pyarrow` (or save the audit "
                "trail as CSV)."
            ) from None
        try:
            return pd.read_parquet(path)
        except Exception as exc:  # pyarrow raises its own error types
            raise UserError(f"cannot read {str(path)!r} as Parquet: {_first_line(exc)}") from None
    try:
        frame = pd.read_csv(path)
    except (UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise UserError(f"cannot read {str(path)!r} as CSV: {_first_line(exc)}") from None
    except OSError as exc:
        raise UserError(f"cannot read {str(path)!r}: {_first_line(exc)}") from None
    if frame.shape[1] < 2 or len(frame) == 0:
        raise UserError(
            f"{str(path)!r} does not look like an audit trail: {len(frame)} rows and "
            f"{frame.shape[1]} column(s) (expected a CSV with a header line)."
        )
    return frame


def _first_line(exc):
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


def require_columns(frame, columns, option):
    """Check that every column exists; the error names it and lists the available ones."""
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        available = ", ".join(map(str, frame.columns))
        raise UserError(
            f"{option}: column(s) {', '.join(map(repr, missing))} not found; available "
            f"columns: {available}."
        )


def _write_report(report, path, progress):
    """Write the report into ``path`` (a folder, or ``.html`` / ``.json`` / ``.md`` file)."""
    path = Path(path)
    suffix = path.suffix.lower()
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
        raise UserError(f"cannot write the report to {str(path)!r}: {_first_line(exc)}") from None
    progress(f"report written: {', '.join(str(p) for p in written)}")
    return written


def _command_line(argv):
    return "skfair-audit " + " ".join(shlex.quote(a) for a in argv)


def _run_quietly(function, progress, *args, **kwargs):
    """Call ``function``, reporting the library's warnings as one line each."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = function(*args, **kwargs)
    seen = set()
    for w in caught:
        message = _first_line(w.message)
        if message not in seen and not issubclass(w.category, (DeprecationWarning,
                                                                FutureWarning)):
            seen.add(message)
            progress.warn(message)
    return out


# -- parser -------------------------------------------------------------------------------
def _add_common(parser, *, report_default=None):
    parser.add_argument("--json", action="store_true",
                        help="print the result as JSON on stdout (instead of a table)")
    parser.add_argument(
        "--report", metavar="PATH", default=report_default,
        help="write the report: a folder (HTML + JSON + Markdown + figures) or a single "
             ".html / .json / .md file",
    )
    parser.add_argument("--quiet", action="store_true",
                        help="no progress or warnings on stderr")
    parser.add_argument("--n-resamples", type=_positive_int, default=1000, metavar="B",
                        help="bootstrap resamples (default: 1000)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the bootstrap (default: 0): same seed, same numbers")


def _build_parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = argparse.ArgumentParser(
        prog="skfair-audit",
        description="Fairness audits of black-box classifiers with statistical guarantees.",
        epilog=EXIT_CODES_TEXT,
    )
    parser.add_argument("--version", action="version", version=f"skfair_audit {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    demo = sub.add_parser(
        "demo",
        help="complete audit of a logistic regression trained on ProPublica COMPAS",
        description=(
            "The README's main job, on ProPublica's COMPAS data: train a logistic regression "
            "and audit it with FaiTH (individual fairness: δ-test and adversarial heat map); "
            "audit the COMPAS 'high risk' rule (decile_score >= 5) over race x sex x age "
            "groups (PPV certification, PPV and FPR flagging); select a δ-fair model along an "
            "l1 path; print a summary and write the report (HTML + JSON + Markdown)."
        ),
        epilog="Exit codes: 0 when the demonstration ran (it is not a gate), 2 on errors.",
    )
    demo.add_argument("--data-home", default=None,
                      help="folder holding compas/ (default: $SKFAIR_AUDIT_DATA or "
                           "~/skfair_audit_data; downloaded if missing)")
    demo.add_argument("--output", default="skfair_audit_report", metavar="DIR",
                      help="folder of the report (default: ./skfair_audit_report)")
    demo.add_argument("--random-state", type=int, default=0,
                      help="seed of the split and of every bootstrap (default: 0)")
    demo.add_argument("--fast", action="store_true",
                      help="fewer resamples and candidates (for tests; same steps)")
    demo.add_argument("--no-report", action="store_true", help="do not write the report")
    demo.add_argument("--quiet", action="store_true", help="print only the summary")
    demo.set_defaults(handler=_run_demo)

    group = sub.add_parser(
        "group",
        help="group-fairness audit of an audit-trail file (CSV or Parquet)",
        description=(
            "Audit the predictions recorded in an audit trail for disparities over groups "
            "(Cherian & Candès 2024). The disparity of a group G is metric(G) - target. "
            "All intersections of the --groups columns (up to --depth at a time) are audited "
            "together: 'bounds' gives confidence bounds valid simultaneously for every group "
            "(level 1 - alpha); 'threshold' certifies disparity > / < / within epsilon0 for "
            "every group it can, all certificates true together with probability >= 1 - alpha; "
            "'flag' flags groups whose disparity exceeds epsilon0 (or is below it with "
            "--alternative less) with the false discovery rate controlled at q."
        ),
        epilog=(
            "Exit codes: 0 pass; 1 when --procedure flag flags at least one group, "
            "--procedure threshold leaves some non-empty group uncertified, or --procedure "
            "bounds with --epsilon0 E has a non-empty group whose bound does not certify the "
            "requested side of E (lower: lower bound > E; upper: upper bound < E; two-sided: "
            "-|E| < lower and upper < |E|); 2 on errors. "
            "Example: skfair-audit group trail.csv --label y --score p --threshold 0.5 "
            "--groups race sex --metric fpr --procedure flag --epsilon0 0.05"
        ),
    )
    group.add_argument("data", metavar="DATA", help="audit trail: .csv, or .parquet / .pq")
    group.add_argument("--label", required=True, metavar="COL", help="column of true outcomes")
    which = group.add_mutually_exclusive_group(required=True)
    which.add_argument("--prediction", metavar="COL", help="column of predicted labels")
    which.add_argument("--score", metavar="COL",
                       help="column of scores; predicted positive when score >= --threshold")
    group.add_argument("--threshold", type=_finite, default=None, metavar="T",
                       help="decision threshold of --score")
    group.add_argument("--groups", nargs="+", required=True, metavar="COL",
                       help="sensitive attribute columns (their intersections are audited)")
    group.add_argument("--depth", type=_positive_int, default=None,
                       help="most attributes fixed at once (default: all; 1 = marginal groups)")
    group.add_argument("--min-size", type=int, default=0, metavar="N",
                       help="drop groups with fewer rows (default: 0)")
    group.add_argument("--metric", default="false_positive_rate",
                       help="metric name, e.g. fpr, fnr, tpr, ppv, npv, fdr, error_rate, "
                            "accuracy, selection_rate (default: false_positive_rate)")
    group.add_argument("--pos-label", default=None, metavar="LABEL",
                       help="positive label of --label/--prediction (default: 1 for 0/1 data)")
    group.add_argument("--target", type=_target, default="overall",
                       help="'overall' (default), 'constant:<v>' or 'group:<name>', e.g. "
                            "group:race=Caucasian")
    group.add_argument("--procedure", choices=("bounds", "threshold", "flag"), default="flag",
                       help="bounds (simultaneous bounds), threshold (certificates) or flag "
                            "(FDR-controlled flags; default)")
    group.add_argument("--alternative", default=None,
                       help="bounds: lower / upper / two-sided (default two-sided); threshold: "
                            "greater / less / within (default greater); flag: greater / less / "
                            "two-sided (default greater)")
    group.add_argument("--epsilon0", type=_finite, default=None, metavar="E",
                       help="disparity threshold (threshold and flag: default 0; bounds: "
                            "optional, turns the bounds into a gate)")
    group.add_argument("--alpha", type=_probability, default=0.1,
                       help="simultaneous error level of bounds / threshold (default 0.1)")
    group.add_argument("--q", type=_probability, default=0.1,
                       help="false discovery rate of flag (default 0.1)")
    _add_common(group)
    group.set_defaults(handler=_run_group)

    faith = sub.add_parser(
        "faith",
        help="individual-fairness (FaiTH) audit of a saved model on an audit file",
        description=(
            "Audit a trained binary classifier for individual fairness with the FaiTH "
            "statistic (Xue, Yurochkin & Sun 2020): the largest increase of the model's error "
            "rate when individuals may be moved at transport cost <= epsilon under a fair "
            "metric that makes changes of the protected attributes free. Tests H0: the model "
            "is delta-fair (statistic <= delta). The model is loaded safely with skops "
            "(pip install 'skfair_audit[skops]'); pickles are refused unless --unsafe-pickle."
        ),
        epilog=(
            "Exit codes: 0 when delta-fairness is not rejected, 1 when it is rejected at "
            f"level 1 - confidence, 2 on errors. Types trusted by default (beyond skops' own "
            f"scikit-learn/numpy set): {', '.join(DEFAULT_TRUSTED_TYPES)}. "
            "Example: skfair-audit faith --model model.skops --data audit.csv --label y "
            "--features race sex age_cat priors --protected race sex --epsilon 0 --delta 0.05"
        ),
    )
    faith.add_argument("--model", required=True, metavar="PATH",
                       help="trained model saved with skops.io.dump (.skops)")
    faith.add_argument("--data", required=True, metavar="PATH",
                       help="audit data: .csv, or .parquet / .pq (held out from training)")
    faith.add_argument("--label", required=True, metavar="COL", help="column of true labels")
    faith.add_argument("--features", nargs="+", required=True, metavar="COL",
                       help="features the model is queried on, as it was trained on them")
    faith.add_argument("--protected", nargs="+", required=True, metavar="COL",
                       help="protected attributes among --features")
    faith.add_argument("--epsilon", type=_non_negative, default=0.0,
                       help="transport budget (default 0: only changes of the protected "
                            "attributes and their proxies are free)")
    faith.add_argument("--delta", type=_non_negative, required=True,
                       help="tolerated increase of the error rate (H0: statistic <= delta)")
    faith.add_argument("--method", choices=("m-out-of-n", "numerical", "nonparametric",
                                            "subsampling"), default="m-out-of-n",
                       help="bootstrap scheme (default m-out-of-n, valid at kinks too)")
    faith.add_argument("--confidence", type=_probability, default=0.95,
                       help="confidence level (default 0.95: a 5%% test)")
    faith.add_argument("--space", choices=("grid", "empirical", "auto"), default="grid",
                       help="sample space: grid (every combination of the levels of discrete "
                            "features; default), empirical (the audit rows and their copies "
                            "with other protected levels: continuous features), auto (grid on "
                            "categorical columns, empirical on numeric ones)")
    faith.add_argument("--memory-limit", default="2GiB", metavar="SIZE",
                       help="memory budget of each step of the audit, e.g. 500MB or 4GiB "
                            "(default 2GiB): a step that needs more stops with an error "
                            "naming the amount and the option that avoids it")
    faith.add_argument("--metric-data", metavar="PATH", default=None,
                       help="data to learn the fair metric on (default: the audit data)")
    faith.add_argument("--trust", action="append", default=[], metavar="TYPE",
                       help="trust this type of the skops file (repeatable); inspect the file's "
                            "types first: the error message lists the untrusted ones")
    faith.add_argument("--unsafe-pickle", action="store_true",
                       help="allow loading a pickle / joblib file: this RUNS ANY CODE the file "
                            "contains; only for files you created yourself")
    _add_common(faith)
    faith.set_defaults(handler=_run_faith)
    return parser


# -- group ---------------------------------------------------------------------------------
_ALTERNATIVES = {
    "bounds": (("lower", "upper", "two-sided"), "two-sided"),
    # The same defaults as the library (certify_threshold, GroupDisparityAuditor).
    "threshold": (("greater", "less", "within"), "greater"),
    "flag": (("greater", "less", "two-sided"), "greater"),
}


def _parse_pos_label(text, *columns):
    """``--pos-label`` as the type of the columns (e.g. ``1`` for integer columns)."""
    if text is None:
        return None
    for column in columns:
        if column.dtype.kind in "iu":
            try:
                return int(text)
            except ValueError:
                break
        if column.dtype.kind == "b":
            return text.lower() in ("1", "true", "yes")
        if column.dtype.kind == "f":
            try:
                return float(text)
            except ValueError:
                break
    return text


def group_gate(result, procedure, epsilon0):
    """Whether a group audit fails the gate (exit code 1); see the module docstring."""
    import numpy as np

    active = np.asarray(result.sizes) > 0
    if procedure == "flag":
        return bool(np.any(result.flagged & active))
    if procedure == "threshold":
        return bool(np.any(active & ~np.asarray(result.certified)))
    if epsilon0 is None:
        return False
    lower, upper = np.asarray(result.lower), np.asarray(result.upper)
    if result.alternative == "lower":
        ok = lower > epsilon0
    elif result.alternative == "upper":
        ok = upper < epsilon0
    else:
        ok = (lower > -abs(epsilon0)) & (upper < abs(epsilon0))
    return bool(np.any(active & ~ok))


def _check_no_missing(frame, columns, option):
    for column in columns:
        missing = int(frame[column].isna().sum())
        if missing:
            raise UserError(
                f"{option}: column {column!r} has {missing} missing value(s); drop or fill "
                "them before auditing."
            )


def _check_numeric(frame, column, option):
    import pandas as pd

    if not pd.api.types.is_numeric_dtype(frame[column]) or pd.api.types.is_bool_dtype(
        frame[column]
    ):
        example = frame[column].iloc[0]
        raise UserError(
            f"{option}: column {column!r} must hold numbers, found {frame[column].dtype} values "
            f"such as {example!r}."
        )


def _scores_to_labels(y, scores, threshold, pos_label):
    """Predicted labels ``score >= threshold``, in the label coding of ``y``."""
    import numpy as np

    observed = set(np.unique(y).tolist())
    if pos_label is not None:
        positive = pos_label
        others = sorted(observed - {pos_label}, key=repr)
        negative = others[0] if others else None
        if negative is None:
            raise UserError(f"--label holds only the positive label {pos_label!r}.")
    elif observed <= {0, 1}:
        positive, negative = 1, 0
    elif observed <= {-1, 1}:
        positive, negative = 1, -1
    else:
        raise UserError(
            f"--label values {sorted(observed, key=repr)[:5]} are not 0/1 or -1/1: pass "
            "--pos-label to say which label is positive."
        )
    return np.where(np.asarray(scores) >= threshold, positive, negative)


def _group_rows(result):
    """Columns and one row per non-empty group, for the table and the JSON output."""
    import numpy as np

    kind = type(result).__name__
    columns = ["group", "size", "value", "disparity"]
    extra = {
        "GroupBoundsResult": (("lower", "upper"), ("lower", "upper")),
        "GroupCertificationResult": (("lower", "upper", "certified"),
                                     ("lower", "upper", "certified")),
        "GroupFlagResult": (("se", "pvalue", "adjusted_pvalue", "flagged"),
                            ("standard_errors", "pvalues", "adjusted_pvalues", "flagged")),
    }[kind]
    columns += list(extra[0])
    rows = []
    for j in np.flatnonzero(np.asarray(result.sizes) > 0):
        row = [result.names[j], int(result.sizes[j]), float(result.group_values[j]),
               float(result.estimates[j])]
        row += [getattr(result, attr)[j].item() for attr in extra[1]]
        rows.append(row)
    return columns, rows


def _print_table(columns, rows, stream=None):
    from .report._report import format_value

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


def _run_group(args, argv=()) -> int:
    from .group import certify_bounds, certify_threshold, flag_groups, intersections
    from .report import AuditReport, data_section, group_section
    from .report._report import json_safe

    progress = Progress(args.quiet)
    choices, default = _ALTERNATIVES[args.procedure]
    alternative = args.alternative or default
    if alternative not in choices:
        raise UserError(
            f"--alternative {alternative!r} is not valid with --procedure {args.procedure}; "
            f"choose one of {', '.join(choices)}."
        )
    if args.score is None and args.threshold is not None:
        raise UserError("--threshold goes with --score (not with --prediction).")
    if args.score is not None and args.threshold is None:
        raise UserError("--score needs --threshold T (predicted positive when score >= T).")

    progress(f"reading {args.data}")
    frame = read_table(args.data)
    require_columns(frame, [args.label], "--label")
    prediction_column = args.prediction or args.score
    require_columns(frame, [prediction_column], "--prediction" if args.prediction else "--score")
    require_columns(frame, args.groups, "--groups")
    _check_no_missing(frame, [args.label, prediction_column, *args.groups], "input")
    y = frame[args.label].to_numpy()
    pos_label = _parse_pos_label(args.pos_label, frame[args.label])
    if args.score is not None:
        _check_numeric(frame, args.score, "--score")
        y_pred = _scores_to_labels(y, frame[args.score].to_numpy(), args.threshold, pos_label)
    else:
        y_pred = frame[args.prediction].to_numpy()
    progress(f"{len(frame):,} rows; building the intersections of {', '.join(args.groups)}")
    groups = intersections(frame[args.groups], depth=args.depth, min_size=args.min_size)
    common = dict(metric=args.metric, target=args.target, pos_label=pos_label)
    epsilon0 = args.epsilon0
    progress(f"{args.procedure}: {groups.n_groups} groups, metric {args.metric}"
             + ("" if args.procedure == "flag" else f", {args.n_resamples} bootstrap resamples"))
    if args.procedure == "bounds":
        result = _run_quietly(
            certify_bounds, progress, y, y_pred, groups, alternative=alternative,
            alpha=args.alpha, n_resamples=args.n_resamples, random_state=args.seed, **common)
    elif args.procedure == "threshold":
        epsilon0 = 0.0 if epsilon0 is None else epsilon0
        result = _run_quietly(
            certify_threshold, progress, y, y_pred, groups, epsilon0=epsilon0,
            alternative=alternative, alpha=args.alpha, n_resamples=args.n_resamples,
            random_state=args.seed, **common)
    else:
        epsilon0 = 0.0 if epsilon0 is None else epsilon0
        result = _run_quietly(
            flag_groups, progress, y, y_pred, groups, epsilon0=epsilon0,
            alternative=alternative, q=args.q, **common)
    unfair = group_gate(result, args.procedure, epsilon0)
    code = EXIT_UNFAIR if unfair else EXIT_PASS
    progress("done")

    columns, rows = _group_rows(result)
    level = (f"FDR q={args.q:g}" if args.procedure == "flag"
             else f"alpha={args.alpha:g} (simultaneous)")
    verdict = {
        "flag": ("at least one group flagged" if unfair else "no group flagged"),
        "threshold": ("some groups not certified" if unfair else "every group certified"),
        "bounds": ("some bounds do not certify the requested side of epsilon0" if unfair
                   else ("every bound certifies the requested side of epsilon0"
                         if epsilon0 is not None else "bounds only (no --epsilon0: no gate)")),
    }[args.procedure]
    if args.json:
        payload = {
            "command": "group", "data": str(args.data), "procedure": args.procedure,
            "metric": result.metric, "alternative": alternative, "target": result.target,
            "target_spec": args.target, "epsilon0": epsilon0,
            "alpha": args.alpha if args.procedure != "flag" else None,
            "q": args.q if args.procedure == "flag" else None, "n": result.n,
            "unfair": unfair, "exit_code": code, "verdict": verdict,
            "groups": [dict(zip(columns, row, strict=True)) for row in rows],
        }
        print(json.dumps(json_safe(payload), indent=2, allow_nan=False))
    else:
        print(f"Group audit of {args.data}: {args.procedure}, metric {result.metric}, "
              f"alternative {alternative}, {level}")
        print(f"target theta = {result.target:.4g} ({args.target}); audit sample n = "
              f"{result.n:,}; {len(rows)} non-empty groups")
        _print_table(columns, rows)
        print(f"Result: {verdict} -> exit code {code}")
    if args.report:
        prediction = (f"prediction column {args.prediction!r}" if args.prediction else
                      f"score column {args.score!r} thresholded at {args.threshold:g}")
        audited = (f"The audit trail {args.data} ({len(frame):,} rows): label column "
                   f"{args.label!r}, {prediction}, groups: intersections of "
                   f"{', '.join(args.groups)}.")
        report = AuditReport(
            title="Group-fairness audit", audited=audited,
            outcome=f"{verdict} (exit code {code}).",
            sections=(
                data_section({"file": str(args.data), "rows": len(frame),
                              "label": args.label, "prediction": prediction,
                              "group attributes": ", ".join(args.groups),
                              "groups audited": groups.n_groups}),
                group_section(result, title=f"Group audit: {args.procedure}",
                              target_description=str(args.target)),
            ),
            command=_command_line(argv),
        )
        _write_report(report, args.report, progress)
    return code


# -- faith ---------------------------------------------------------------------------------
def load_model(path, *, trust=(), unsafe_pickle=False, progress=None):
    """Load a trained model safely: skops with an explicit allow-list; pickles only on request.

    Parameters
    ----------
    path : str or path-like
    trust : sequence of str
        Types the user trusts beyond skops' defaults and :data:`DEFAULT_TRUSTED_TYPES`.
    unsafe_pickle : bool
        Allow ``.pkl`` / ``.joblib`` files (arbitrary code execution on load).
    progress : Progress, optional

    Returns
    -------
    estimator
    """
    progress = progress or Progress(quiet=True)
    path = Path(path)
    if not path.is_file():
        raise UserError(f"cannot read the model {str(path)!r}: no such file.")
    if path.suffix.lower() in PICKLE_SUFFIXES:
        if not unsafe_pickle:
            raise UserError(
                f"refusing to load {str(path)!r}: pickle/joblib files run arbitrary code when "
                "loaded. Save the model with skops.io.dump(model, 'model.skops') instead, or, "
                "only for a file you created yourself, pass --unsafe-pickle."
            )
        # Loud on purpose, even with --quiet: this runs whatever code the file holds.
        print(
            f"skfair-audit: WARNING: loading {str(path)!r} with pickle (--unsafe-pickle): this "
            "executes any code the file contains. Never do this with a file from someone else.",
            file=sys.stderr, flush=True,
        )
        import joblib

        try:
            model = joblib.load(path)
        except Exception as exc:  # a broken pickle can raise almost anything
            raise UserError(f"cannot load {str(path)!r}: {_first_line(exc)}") from None
    else:
        try:
            import skops.io as sio
        except ImportError:
            raise UserError(
                "loading a model needs skops: `pip install 'skfair_audit[skops]'` (or "
                "`pip install skops`)."
            ) from None
        try:
            untrusted = sio.get_untrusted_types(file=path)
        except Exception as exc:  # not a zip / not a skops file
            raise UserError(
                f"cannot read {str(path)!r} as a skops file ({_first_line(exc)}); save the "
                "model with skops.io.dump."
            ) from None
        allowed = set(DEFAULT_TRUSTED_TYPES) | set(trust)
        refused = [t for t in untrusted if t not in allowed]
        if refused:
            raise UserError(
                f"{str(path)!r} contains type(s) that are not trusted: {', '.join(refused)}. "
                "Loading them may run their code; if you trust them, add "
                + " ".join(f"--trust {t}" for t in refused) + "."
            )
        if untrusted:
            progress(f"trusting type(s) beyond skops' defaults: {', '.join(untrusted)}")
        try:
            model = sio.load(path, trusted=untrusted)
        except Exception as exc:
            raise UserError(f"cannot load {str(path)!r}: {_first_line(exc)}") from None
    if not hasattr(model, "predict"):
        raise UserError(
            f"{str(path)!r} holds a {type(model).__name__}, not a classifier with predict()."
        )
    return model


def _run_faith(args, argv=()) -> int:
    from sklearn.frozen import FrozenEstimator

    from .faith import FaithAuditor, MemoryLimitError
    from .report import AuditReport, data_section, faith_section
    from .report._report import json_safe

    progress = Progress(args.quiet)
    progress(f"loading the model {args.model}")
    model = load_model(args.model, trust=args.trust, unsafe_pickle=args.unsafe_pickle,
                       progress=progress)
    progress(f"reading {args.data}")
    frame = read_table(args.data)
    require_columns(frame, [args.label], "--label")
    require_columns(frame, args.features, "--features")
    outside = [p for p in args.protected if p not in args.features]
    if outside:
        raise UserError(
            f"--protected: {', '.join(map(repr, outside))} must also be among --features "
            f"({', '.join(args.features)})."
        )
    _check_no_missing(frame, [args.label, *args.features], "input")
    X, y = frame[list(args.features)], frame[args.label]
    if args.metric_data:
        metric_frame = read_table(args.metric_data)
        require_columns(metric_frame, [args.label, *args.features], "--metric-data")
        _check_no_missing(metric_frame, [args.label, *args.features], "--metric-data")
        X_fit, y_fit = metric_frame[list(args.features)], metric_frame[args.label]
    else:
        X_fit, y_fit = X, y
    auditor = FaithAuditor(
        FrozenEstimator(model), features=list(args.features), protected=list(args.protected),
        epsilon=args.epsilon, delta=args.delta, method=args.method,
        n_resamples=args.n_resamples, confidence_level=args.confidence, random_state=args.seed,
        space=args.space, memory_limit=args.memory_limit,
    )
    progress("learning the fair metric" + (" and querying the model on the grid"
                                           if args.space == "grid" else ""))
    try:
        _run_quietly(auditor.fit, progress, X_fit, y_fit)
    except Exception as exc:  # bad settings, or the user's model failing on the grid
        raise UserError(
            f"cannot audit the model on the sample space of --features: {_first_line(exc)}"
        ) from None
    cells = (f"{auditor.space_.n_cells} cells" if auditor.space_kind_ == "grid"
             else "empirical sample space")
    progress(f"FaiTH audit: {cells}, {len(y):,} audit rows, "
             f"{args.n_resamples} {args.method} resamples")
    try:
        result = _run_quietly(auditor.audit, progress, X, y)
    except MemoryLimitError as exc:
        raise UserError(f"{exc} (--memory-limit)") from None
    unfair = bool(result.rejected)
    code = EXIT_UNFAIR if unfair else EXIT_PASS
    progress("done")
    if args.json:
        payload = {"command": "faith", "model": str(args.model), "data": str(args.data),
                   "features": list(args.features), "protected": list(args.protected),
                   **result.summary(), "unfair": unfair, "exit_code": code,
                   "moves": result.moves()[:20]}
        print(json.dumps(json_safe(payload), indent=2, allow_nan=False))
    else:
        print(result)
        verdict = ("the model is NOT delta-fair at this level" if unfair
                   else "delta-fairness is not rejected")
        print(f"Result: {verdict} -> exit code {code}")
    if args.report:
        metric_source = args.metric_data or "the audit data"
        report = AuditReport(
            title="Individual-fairness (FaiTH) audit",
            audited=(f"The model {args.model} ({type(model).__name__}) on {args.data} "
                     f"({len(y):,} rows), {auditor.space_kind_} sample space of "
                     f"{', '.join(args.features)}, protected {', '.join(args.protected)}; fair "
                     f"metric learned on {metric_source}."),
            outcome=f"{'rejected' if unfair else 'not rejected'}: δ-fairness for "
                    f"δ = {args.delta:g} (exit code {code}).",
            sections=(
                data_section({"file": str(args.data), "rows": len(y), "label": args.label,
                              "features": ", ".join(args.features),
                              "protected": ", ".join(args.protected)}),
                faith_section(result, heatmap_rows=list(args.protected)),
            ),
            command=_command_line(argv),
        )
        _write_report(report, args.report, progress)
    return code


# -- demo ----------------------------------------------------------------------------------
#: The grid features of the FaiTH COMPAS experiment (Xue, Yurochkin & Sun 2020, §5).
FAITH_FEATURES = ["sex", "race", "age_cat", "priors_cat", "c_charge_degree"]
#: The sensitive attributes of the group audit (Cherian & Candès 2024, §3.2.2 and §4.2.2).
GROUP_ATTRIBUTES = ["race", "sex", "age_cat"]
DEMO_EPSILON, DEMO_DELTA = 0.0, 0.04


def _demo_faith(X_train, X_audit, y_train, y_audit, settings, progress):
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    from .faith import FaithAuditor

    model = make_pipeline(OneHotEncoder(handle_unknown="ignore"),
                          LogisticRegression(max_iter=1000))
    auditor = FaithAuditor(
        model, protected=["race", "sex"], epsilon=DEMO_EPSILON, delta=DEMO_DELTA,
        n_resamples=settings["faith_resamples"], random_state=settings["seed"],
    )
    progress(f"training the logistic regression on {len(y_train):,} rows and learning the "
             "fair metric")
    _run_quietly(auditor.fit, progress, X_train, y_train)
    progress(f"FaiTH audit: {auditor.space_.n_cells} cells, {len(y_audit):,} audit rows, "
             f"{settings['faith_resamples']} m-out-of-n resamples")
    result = _run_quietly(auditor.audit, progress, X_audit, y_audit)
    return auditor, result


def _demo_group(propublica, settings, progress):
    from .group import certify_bounds, flag_groups

    frame = propublica.frame
    y = propublica.target.to_numpy()
    high_risk = (frame["decile_score"] >= 5).to_numpy().astype(int)
    attributes = frame[GROUP_ATTRIBUTES]
    progress(f"group audit of 'high risk' = decile_score >= 5 on {len(y):,} defendants: PPV "
             f"bounds ({settings['group_resamples']} resamples)")
    ppv_bounds = _run_quietly(
        certify_bounds, progress, y, high_risk, frame[["race"]], metric="ppv",
        target="race=Caucasian", alternative="two-sided", alpha=0.1,
        n_resamples=settings["group_resamples"], random_state=settings["seed"])
    progress("PPV and FPR flagging over race x sex x age_cat (FDR 10%)")
    ppv_flags = _run_quietly(flag_groups, progress, y, high_risk, attributes, metric="ppv",
                             epsilon0=-0.05, alternative="less", q=0.1)
    fpr_flags = _run_quietly(flag_groups, progress, y, high_risk, attributes, metric="fpr",
                             epsilon0=0.05, alternative="greater", q=0.1)
    return ppv_bounds, ppv_flags, fpr_flags


def _demo_selection(X_train, y_train, settings, progress):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    from .faith import FaithAuditor
    from .model_selection import FairModelSelector, default_c_path, l1_logistic_regression

    model = make_pipeline(OneHotEncoder(drop="first"), l1_logistic_regression())
    encoded = OneHotEncoder(drop="first").fit_transform(X_train)
    path = default_c_path(encoded, y_train, n_values=settings["n_candidates"])
    progress(f"delta-fair model selection: {len(path)} l1 logistic regressions, each audited "
             f"on a 30% validation split ({settings['selection_resamples']} resamples)")
    selector = FairModelSelector(
        model, param_grid={"logisticregression__C": [float(c) for c in path]},
        delta=DEMO_DELTA, protected=["race", "sex"], cv=0.3, on_none="fairest",
        auditor=FaithAuditor(None, epsilon=DEMO_EPSILON,
                             n_resamples=settings["selection_resamples"]),
        random_state=settings["seed"], verbose=0,
    )
    _run_quietly(selector.fit, progress, X_train, y_train)
    return selector


def _shares(series):
    shares = series.value_counts(normalize=True, sort=False)
    return ", ".join(f"{k} {v:.1%}" for k, v in shares.items() if v > 0)


def _run_demo(args, argv=()) -> int:
    import numpy as np
    from sklearn.model_selection import train_test_split

    from .datasets import fetch_compas

    progress = Progress(args.quiet)
    fast = args.fast
    settings = {
        "seed": args.random_state,
        "faith_resamples": 200 if fast else 1000,
        "group_resamples": 500 if fast else 2000,
        "selection_resamples": 100 if fast else 1000,
        "n_candidates": 6 if fast else 30,
    }
    progress("loading COMPAS (ProPublica's filter)")
    try:
        compas = fetch_compas(data_home=args.data_home, preprocessing="propublica_aa_caucasian")
        propublica = fetch_compas(data_home=args.data_home, preprocessing="propublica")
    except (OSError, ValueError) as exc:
        raise UserError(_first_line(exc)) from exc
    X, y = compas.data[FAITH_FEATURES], compas.target
    print(f"COMPAS (ProPublica filter, African-American and Caucasian): {len(y):,} defendants")
    print(f"  two-year recidivism rate: {y.mean():.3f}")
    for column in ("race", "sex"):
        print(f"  {column}: {_shares(compas.sensitive[column])}")
    X_train, X_audit, y_train, y_audit = train_test_split(
        X, y, test_size=0.3, random_state=args.random_state, stratify=y
    )

    # 1. Individual fairness of a logistic regression.
    auditor, faith_result = _demo_faith(X_train, X_audit, y_train, y_audit, settings, progress)
    accuracy = float(np.mean(auditor.estimator_.predict(X_audit) == y_audit))
    print()
    print(f"1. FaiTH audit of a logistic regression on {', '.join(FAITH_FEATURES)}")
    print(f"   trained on {len(y_train):,} rows, audit accuracy {accuracy:.3f} on "
          f"{len(y_audit):,} held-out rows")
    print(f"   epsilon = {DEMO_EPSILON:g}: only changes of race and sex (and their proxies) are "
          "free, so the statistic measures pure attribute-flip bias")
    print(f"   delta = {DEMO_DELTA:g}: an error rate inherent to the justice system (about 4% of "
          "convictions are wrongful, Gross et al., PNAS 2014)")
    print("   " + str(faith_result).replace("\n", "\n   "))

    # 2. Group fairness of the COMPAS rule.
    ppv_bounds, ppv_flags, fpr_flags = _demo_group(propublica, settings, progress)
    aa = ppv_bounds.bound("race=African-American")
    print()
    print(f"2. Group audit of the COMPAS rule 'high risk' = decile_score >= 5 "
          f"({len(propublica.target):,} defendants, ProPublica's filter)")
    print(f"   PPV, African-American minus Caucasian: {aa.estimate:+.4f}, 90% simultaneous "
          f"interval [{aa.lower:+.4f}, {aa.upper:+.4f}]")
    flagged_ppv = [n for n, f in zip(ppv_flags.names, ppv_flags.flagged, strict=True) if f]
    flagged_fpr = [n for n, f in zip(fpr_flags.names, fpr_flags.flagged, strict=True) if f]
    print(f"   PPV >= 5 points below overall ({ppv_flags.target:.3f}), FDR 10%: "
          f"{len(flagged_ppv)} group(s) flagged: {'; '.join(flagged_ppv) or 'none'}")
    print(f"   FPR >= 5 points above overall ({fpr_flags.target:.3f}), FDR 10%: "
          f"{len(flagged_fpr)} of {int(np.sum(fpr_flags.sizes > 0))} groups flagged")

    # 3. delta-fair model selection.
    selector = _demo_selection(X_train, y_train, settings, progress)
    results = selector.cv_results_
    best = selector.best_index_
    chosen_accuracy = float(np.mean(selector.predict(X_audit) == y_audit))
    print()
    print(f"3. delta-fair model selection along an l1 path ({len(results['params'])} "
          f"candidates, delta = {DEMO_DELTA:g})")
    print(f"   {int(np.sum(results['passes']))} candidates pass the delta-test; chosen "
          f"C = {results['params'][best]['logisticregression__C']:.4g} with validation error "
          f"{results['mean_test_error'][best]:.3f}; held-out accuracy {chosen_accuracy:.3f}")

    if not args.no_report:
        report = _demo_report(compas, propublica, accuracy, chosen_accuracy, faith_result,
                              (ppv_bounds, ppv_flags, fpr_flags), selector, argv, progress)
        paths = _write_report(report, args.output, progress)
        print()
        print(f"Report written to {paths[0]} (also {', '.join(str(p) for p in paths[1:])})")
    return EXIT_PASS


def _demo_report(compas, propublica, accuracy, chosen_accuracy, faith_result, group_results,
                 selector, argv, progress):
    from .report import (
        AuditReport,
        Table,
        data_section,
        faith_section,
        group_section,
        selection_section,
    )

    progress("building the report (figures)")
    ppv_bounds, ppv_flags, fpr_flags = group_results
    sensitive = propublica.sensitive
    shares = tuple(
        (column, str(level), int(count), count / len(sensitive))
        for column in GROUP_ATTRIBUTES
        for level, count in sensitive[column].value_counts(sort=False).items() if count > 0
    )
    data = data_section(
        {"FaiTH data (African-American and Caucasian)": len(compas.target),
         "group-audit data (all races)": len(propublica.target),
         "two-year recidivism rate": float(propublica.target.mean()),
         "high risk (decile_score >= 5)": int((propublica.frame["decile_score"] >= 5).sum())},
        paragraphs=(
            "ProPublica's COMPAS two-year recidivism data (Broward County, 2013-2014), "
            "ProPublica's standard filter. Label: charged with a new offence within two years.",
        ),
        tables=(Table("Audit population by attribute", ("attribute", "level", "rows", "share"),
                      shares),),
    )
    sections = (
        data,
        faith_section(
            faith_result, title="1. Individual fairness of a logistic regression (FaiTH)",
            description=(
                f"A logistic regression on {', '.join(FAITH_FEATURES)} (one-hot), trained on "
                f"70% of the data, audit accuracy {accuracy:.3f} on the other 30%. ε = 0: only "
                "changes of race and sex (and the directions that predict them) are free, so ψ "
                "is the increase of the error rate when defendants are moved to the other race "
                f"or sex — pure attribute-flip bias. δ = {DEMO_DELTA:g}: the model may err at "
                f"most {DEMO_DELTA:.0%} more often under such flips, an error rate inherent to "
                "the justice system (about 4% of convictions are wrongful, Gross et al., PNAS "
                "2014)."
            ),
            heatmap_rows=["race", "sex", "age_cat"],
            heatmap_columns=["priors_cat", "c_charge_degree"],
        ),
        group_section(
            ppv_bounds, key="ppv_bounds",
            title="2a. PPV of the COMPAS rule: African-American vs Caucasian",
            description=("The COMPAS rule 'high risk' = decile_score >= 5. Positive predictive "
                         "value (share of high-risk defendants who did reoffend) by race, minus "
                         "the PPV of Caucasian defendants (Cherian & Candès 2024, §3.2.2)."),
            target_description="PPV of Caucasian defendants",
        ),
        group_section(
            ppv_flags, key="ppv_flags",
            title="2b. Groups with a PPV at least 5 points below overall",
            description="Intersections of race, sex and age category (Cherian & Candès, §4.2.2).",
            target_description="overall PPV",
        ),
        group_section(
            fpr_flags, key="fpr_flags",
            title="2c. Groups with a false-positive rate at least 5 points above overall",
            description=("Among defendants who did not reoffend, the share labelled high risk; "
                         "intersections of race, sex and age category."),
            target_description="overall FPR",
        ),
        selection_section(
            selector, title="3. δ-fair model selection along an ℓ1 path",
            description=(
                "ℓ1-penalised logistic regressions along a path of C = 1/λ, fitted on the "
                "training part, each audited with FaiTH (ε = 0) on a 30% validation split; the "
                f"chosen model's accuracy on the held-out audit data is {chosen_accuracy:.3f} "
                f"(unpenalised logistic regression: {accuracy:.3f})."
            ),
        ),
    )
    return AuditReport(
        title="skfair_audit demonstration: COMPAS",
        audited=("A logistic regression trained on ProPublica's COMPAS data (individual "
                 "fairness, FaiTH), the COMPAS 'high risk' rule (group fairness over race × sex "
                 "× age), and a δ-fair choice along an ℓ1 path."),
        outcome=(f"FaiTH: δ-fairness {'rejected' if faith_result.rejected else 'not rejected'} "
                 f"(δ = {DEMO_DELTA:g}); {int(ppv_flags.flagged.sum())} PPV and "
                 f"{int(fpr_flags.flagged.sum())} FPR groups flagged at FDR 10%."),
        sections=sections,
        command=_command_line(argv),
    )


# -- entry point ---------------------------------------------------------------------------
def main(argv=None) -> int:
    """Run the command line; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _build_parser()
    args = parser.parse_args(argv)
    try:
        return args.handler(args, argv)
    except UserError as exc:
        print(f"skfair-audit: error: {exc}", file=sys.stderr)
    except ImportError as exc:
        print(f"skfair-audit: error: {_first_line(exc)}", file=sys.stderr)
    except (ValueError, TypeError, KeyError) as exc:
        # The library's validation messages: bad values in the data or the options.
        print(f"skfair-audit: error: {_first_line(exc)}", file=sys.stderr)
    except KeyboardInterrupt:
        print("skfair-audit: interrupted", file=sys.stderr)
    return EXIT_ERROR
