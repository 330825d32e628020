"""The ``skfair-audit`` command line (also ``python -m skfair_audit``).

Subcommands: ``demo`` (the README's main job, :func:`skfair_audit.cli._demo.run_demo`), ``group``
(group audit of an audit-trail file) and ``faith`` (FaiTH audit of a saved model,
:mod:`skfair_audit.cli._faith`). The command line only parses options, calls the library and
prints: tables and models are read by :mod:`skfair_audit.cli._io`, and a group result tells its
own table, verdict and guarantee (:class:`skfair_audit.group.GroupAuditResult`).

Exit codes, usable as a gate in a CI pipeline:

* ``0`` — the audit ran and found nothing at the chosen level (``demo``: it ran);
* ``1`` — the audit ran and found the model unfair at the chosen level:
  ``faith``: the δ-fairness test rejects; ``group --procedure flag``: at least one group is
  flagged; ``group --procedure threshold``: some non-empty group is not certified;
  ``group --procedure bounds --epsilon0 E``: some non-empty group's bound does not certify
  the requested side of ``E`` (without ``--epsilon0`` bounds are descriptive: exit 0);
* ``2`` — an error (bad input, missing file or column, missing optional dependency, or a
  group audit that cannot fail: every non-empty group is the whole sample).
"""

from __future__ import annotations

import argparse
import json
import sys

from ._console import (
    EXIT_ERROR,
    EXIT_PASS,
    EXIT_UNFAIR,
    Progress,
    add_common,
    check_report_path,
    finite,
    in_option_words,
    positive_int,
    print_table,
    probability,
    run_extras,
    run_quietly,
    target_option,
    write_run_report,
)
from ._faith import add_parser as add_faith_parser
from ._io import (
    UserError,
    check_no_missing_values,
    check_numeric,
    first_line,
    parse_pos_label,
    read_table,
    require_columns,
    scores_to_labels,
)
from ._monitor import add_parser as add_monitor_parser
from ._ratio import add_parser as add_bias_audit_parser

__all__ = ["EXIT_ERROR", "EXIT_PASS", "EXIT_UNFAIR", "main"]

EXIT_CODES_TEXT = (
    "Exit codes: 0 pass (nothing found at the chosen level), 1 unfair at the chosen level, "
    "2 error."
)


def _add_demo(sub):
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
    demo.add_argument("--random-state", type=int, default=0, metavar="SEED",
                      help="seed of the split and of every bootstrap (default: 0)")
    demo.add_argument("--fast", action="store_true",
                      help="fewer resamples and candidates (for tests; same steps)")
    demo.add_argument("--no-report", action="store_true", help="do not write the report")
    demo.add_argument("--quiet", action="store_true", help="print only the summary")
    demo.set_defaults(handler=_run_demo)


def procedure_param(text):
    """A ``--procedure-param NAME=VALUE`` option: an option of the procedure or tilt class
    that has no option of its own (the value is read as an int, a float, or kept as text)."""
    name, sep, value = text.partition("=")
    if not sep or not name.isidentifier():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    for kind in (int, float):
        try:
            return name, kind(value)
        except ValueError:
            pass
    return name, value


def _add_group(sub):
    from ..group import get_procedure, registered_procedures

    procedures = registered_procedures("summary")
    tilts = registered_procedures("tilts")
    group = sub.add_parser(
        "group",
        help="group-fairness audit of an audit-trail file (CSV or Parquet)",
        description=(
            "Audit the predictions recorded in an audit trail for disparities over groups "
            "(Cherian & Candès 2024). The disparity of a group G is metric(G) - target. "
            "All intersections of the --protected columns (up to --depth at a time) are "
            "audited together: 'bounds' gives confidence bounds valid simultaneously for every "
            "group (level 1 - alpha); 'threshold' certifies disparity > / < / within epsilon0 "
            "for every group it can, all certificates true together with probability >= "
            "1 - alpha; 'flag' flags groups whose disparity exceeds epsilon0 (or is below it "
            "with --alternative less) with the false discovery rate controlled at q."
        ),
        epilog=(
            "Exit codes: 0 pass; 1 when --procedure flag flags at least one group, "
            "--procedure threshold leaves some non-empty group uncertified, or --procedure "
            "bounds with --epsilon0 E has a non-empty group whose bound does not certify the "
            "requested side of E (lower: lower bound > E; upper: upper bound < E; two-sided: "
            "-|E| < lower and upper < |E|); 2 on errors. "
            "Example: skfair-audit group trail.csv --label y --score p --threshold 0.5 "
            "--protected race sex --metric fpr --procedure flag --epsilon0 0.05"
        ),
    )
    group.add_argument("data", metavar="DATA", help="audit trail: .csv, or .parquet / .pq")
    group.add_argument("--label", required=True, metavar="COL", help="column of true outcomes")
    which = group.add_mutually_exclusive_group(required=True)
    which.add_argument("--prediction", metavar="COL", help="column of predicted labels")
    which.add_argument("--score", metavar="COL",
                       help="column of scores; predicted positive when score >= --threshold")
    group.add_argument("--threshold", type=finite, default=None, metavar="T",
                       help="decision threshold of --score")
    protected = group.add_mutually_exclusive_group(required=True)
    protected.add_argument("--protected", nargs="+", metavar="COL",
                           help="protected (sensitive) columns: their intersections are the "
                                "audited groups")
    protected.add_argument("--groups", nargs="+", dest="protected", help=argparse.SUPPRESS)
    group.add_argument("--depth", type=positive_int, default=None,
                       help="most attributes fixed at once (default: all; 1 = marginal groups)")
    group.add_argument("--min-size", type=int, default=0, metavar="N",
                       help="drop groups with fewer rows (default: 0)")
    group.add_argument("--metric", default=None,
                       help="metric name, e.g. fpr, fnr, tpr, ppv, npv, fdr, error_rate, "
                            "accuracy, selection_rate (default: false_positive_rate; the "
                            "ratio procedures: selection_rate)")
    group.add_argument("--pos-label", default=None, metavar="LABEL",
                       help="positive label of --label/--prediction (default: 1 for 0/1 data)")
    group.add_argument("--target", type=target_option, default="overall",
                       help="'overall' (default), 'constant:<v>' or 'group:<name>', e.g. "
                            "group:race=Caucasian")
    group.add_argument("--procedure", choices=procedures, default=None,
                       help="; ".join(f"{name}: {get_procedure(name).summary.splitlines()[0]}"
                                      for name in procedures)
                            + " (default flag; bounds with --tilts)")
    group.add_argument("--tilts", choices=tilts, default=None,
                       help="audit tilts of the --protected covariate(s) instead of groups "
                            "(bounds only): "
                            + "; ".join(f"{name}: {get_procedure(name).summary}"
                                        for name in tilts))
    group.add_argument("--direction", choices=("both", "increasing", "decreasing"),
                       default="both", help="--tilts monotone: direction (default both)")
    group.add_argument("--degree", type=positive_int, default=2,
                       help="--tilts polynomial: sums of squares of polynomials of this degree "
                            "(default 2)")
    group.add_argument("--bins", type=positive_int, default=50,
                       help="--tilts monotone: quantile bins of the covariate (default 50)")
    group.add_argument("--bandwidth", type=finite, default=None, metavar="SIGMA",
                       help="--tilts rkhs: bandwidth of the Gaussian kernel (required)")
    group.add_argument("--alternative", default=None,
                       help="; ".join(f"{p}: {' / '.join(get_procedure(p).alternatives)} "
                                      f"(default {get_procedure(p).default_alternative})"
                                      for p in procedures if get_procedure(p).alternatives))
    group.add_argument("--epsilon0", type=finite, default=None, metavar="E",
                       help="disparity threshold (threshold and flag: default 0; bounds: "
                            "optional, turns the bounds into a gate); the ratio threshold r0 "
                            "of certify_ratio and flag_ratios (default 0.8)")
    group.add_argument("--alpha", type=probability, default=0.1,
                       help="simultaneous error level of bounds / threshold (default 0.1)")
    group.add_argument("--q", type=probability, default=0.1,
                       help="false discovery rate of flag (default 0.1)")
    group.add_argument("--procedure-param", type=procedure_param, action="append", default=[],
                       metavar="NAME=VALUE",
                       help="another option of the procedure or of the tilts, e.g. "
                            "method=enumeration (threshold) or max_rank=200 (rkhs); repeatable")
    add_common(group)
    group.set_defaults(handler=_run_group)


def _build_parser() -> argparse.ArgumentParser:
    from .. import __version__

    parser = argparse.ArgumentParser(
        prog="skfair-audit",
        description="Fairness audits of black-box classifiers with statistical guarantees.",
        epilog=EXIT_CODES_TEXT,
    )
    parser.add_argument("--version", action="version", version=f"skfair_audit {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_demo(sub)
    _add_group(sub)
    add_faith_parser(sub)
    add_monitor_parser(sub)
    add_bias_audit_parser(sub)
    return parser


def _run_demo(args, argv=()) -> int:
    from ._demo import run_demo

    run_demo(data_home=args.data_home, output=args.output, random_state=args.random_state,
             fast=args.fast, report=not args.no_report, quiet=args.quiet, argv=argv)
    return EXIT_PASS


def _read_trail(args, progress):
    """The audit trail's outcomes, predictions and protected columns."""
    progress(f"reading {args.data}")
    frame = read_table(args.data)
    require_columns(frame, [args.label], "--label")
    prediction = args.prediction or args.score
    require_columns(frame, [prediction], "--prediction" if args.prediction else "--score")
    require_columns(frame, args.protected, "--protected")
    check_no_missing_values(frame, [args.label, prediction, *args.protected], "input")
    y = frame[args.label].to_numpy()
    pos_label = parse_pos_label(args.pos_label, frame[args.label])
    if args.score is not None:
        check_numeric(frame, args.score, "--score")
        y_pred = scores_to_labels(y, frame[args.score].to_numpy(), args.threshold, pos_label)
    else:
        y_pred = frame[args.prediction].to_numpy()
    return frame, y, y_pred, pos_label


def _summarise(args, progress, y, y_pred, protected, pos_label):
    """The audit summary; an audit that cannot fail is an error here, not a pass."""
    import warnings

    from ..group import AuditSummary, VacuousAuditWarning

    def summarise():
        with warnings.catch_warnings():
            warnings.simplefilter("error", VacuousAuditWarning)
            return AuditSummary.from_rows(y, y_pred, protected, metric=args.metric,
                                          target=args.target, pos_label=pos_label,
                                          depth=args.depth, min_size=args.min_size)

    try:
        return run_quietly(summarise, progress)
    except VacuousAuditWarning as exc:
        raise UserError(
            f"--protected {' '.join(args.protected)}: nothing to audit: {first_line(exc)} "
            "(an audit that cannot fail must not pass a gate)."
        ) from None


def _run_group(args, argv=()) -> int:
    from .._utils import json_safe
    from ..group import get_procedure

    progress = Progress(args.quiet)
    if args.tilts and args.procedure not in (None, "bounds"):
        raise UserError(f"--tilts gives simultaneous bounds: --procedure {args.procedure} is "
                        "not available for tilts.")
    procedure = args.procedure or ("bounds" if args.tilts else "flag")
    declaration = get_procedure(procedure)
    alternative = args.alternative or declaration.default_alternative
    if declaration.alternatives and alternative not in declaration.alternatives:
        raise UserError(
            f"--alternative {alternative!r} is not valid with --procedure {procedure}; "
            f"choose one of {', '.join(declaration.alternatives)}."
        )
    if args.score is None and args.threshold is not None:
        raise UserError("--threshold goes with --score (not with --prediction).")
    if args.score is not None and args.threshold is None:
        raise UserError("--score needs --threshold T (predicted positive when score >= T).")
    _check_procedure_options(args, declaration)
    frame, y, y_pred, pos_label = _read_trail(args, progress)
    takes = {p.key for p in declaration.parameters}
    epsilon0 = args.epsilon0
    if "epsilon0" in takes and epsilon0 is None:  # the procedure's default (or fallback)
        supplied = declaration.supplied("epsilon0").name  # e.g. the ratio threshold
        epsilon0 = declaration.resolve({"epsilon0": None})[supplied]
    given = dict(alternative=alternative, alpha=args.alpha, q=args.q, epsilon0=epsilon0,
                 n_resamples=args.n_resamples, random_state=args.random_state,
                 verbose=not args.quiet,  # a progress bar on stderr
                 **dict(args.procedure_param))
    if args.tilts:
        result = run_quietly(_run_tilts, progress, args, frame, y, y_pred, pos_label, given,
                             progress)
        audited = {"tilts audited": f"every {args.tilts} tilt of "
                                    f"{', '.join(args.protected)}"
                                    + (f" ({len(result.names)} extreme tilts shown)"
                                       if hasattr(result, "names") else "")}
    else:
        progress(f"{len(frame):,} rows; summarising the intersections of "
                 f"{', '.join(args.protected)}")
        summary = _summarise(args, progress, y, y_pred, frame[args.protected], pos_label)
        n_active = int(summary.active.sum())
        empty = summary.groups.n_groups - n_active
        progress(f"{procedure}: {n_active} non-empty groups"
                 + (f" ({empty} empty, left out)" if empty else "") + f", metric {args.metric}"
                 + (f", {args.n_resamples} bootstrap resamples" if declaration.bootstrap else ""))
        options = declaration.resolve(given)
        result = run_quietly(lambda: declaration.method(summary, **options), progress)
        audited = {"non-empty groups audited": n_active, "empty groups (left out)": empty}
    if args.tilts and not hasattr(result, "names"):
        # Bounds calibrated for tilts queried later (no named extreme tilts): not a gate.
        code = _print_calibration(args, result, alternative, epsilon0)
        if args.report:
            _write_report(args, argv, frame, result, procedure, audited,
                          f"{result.verdict().summary}.", None, progress)
        return code
    alternative = getattr(result, "alternative", alternative)
    verdict = result.verdict(epsilon0)
    code = EXIT_UNFAIR if verdict.unfair else EXIT_PASS
    progress("done")
    table = result.table()
    if args.json:
        payload = {
            "command": "group", "data": str(args.data), "procedure": procedure,
            "metric": result.metric, "alternative": alternative, "target": result.target,
            "target_spec": args.target, "epsilon0": epsilon0,
            "alpha": args.alpha if "alpha" in takes else None,
            "q": args.q if "q" in takes else None, "n": result.n,
            "unfair": verdict.unfair, "exit_code": code, "verdict": verdict.summary,
            "groups": table.records(),
        }
        print(json.dumps(json_safe(payload), indent=2, allow_nan=False))
    else:
        level = (f"FDR q={args.q:g}" if "q" in takes
                 else f"alpha={args.alpha:g} (simultaneous)")
        print(f"Group audit of {args.data}: {procedure}, metric {result.metric}, "
              f"alternative {alternative}, {level}")
        print((f"ratios to {result.denominator}" if hasattr(result, "ratios") else
               f"target theta = {result.target:.4g} ({args.target})")
              + f"; audit sample n = {result.n:,}; {len(table.rows)} "
              + ("extreme tilts" if args.tilts else "non-empty groups"))
        print_table(table.columns, table.rows)
        print(f"Result: {verdict.summary} -> exit code {code}")
    if args.report:
        _write_report(args, argv, frame, result, procedure, audited,
                      f"{verdict.summary} (exit code {code}).",
                      None if "epsilon0" in takes else args.epsilon0, progress)
    return code


def _check_procedure_options(args, declaration):
    """The metric's default, and the options a procedure cannot take: a ``--target`` for a
    procedure without one, a ``--procedure-param`` of an option of its own (e.g. the ratio
    threshold, which is ``--epsilon0``: ``--threshold`` is the score threshold), or of no
    option at all."""
    from ..group import get_procedure

    metric = declaration.parameter("metric")
    if args.metric is None:
        args.metric = ("false_positive_rate" if metric is None or metric.required
                       else metric.default)
    options = get_procedure(args.tilts) if args.tilts else declaration
    names = [p.name for p in options.parameters]
    unknown = [name for name, _ in args.procedure_param if name not in names]
    if unknown:
        raise UserError(f"--procedure-param {', '.join(unknown)}: not an option of "
                        f"{options.name!r} (its options: {', '.join(names)}).")
    if args.tilts:
        return
    if declaration.parameter("target") is None and args.target != "overall":
        raise UserError(f"--procedure {declaration.name} takes no --target"
                        + (" (the ratios' denominator is --procedure-param denominator=...)"
                           if declaration.parameter("denominator") else "") + ".")
    for name, _ in args.procedure_param:
        p = declaration.parameter(name)
        if p is not None and p.supplied_by:
            raise UserError(f"--procedure-param {name}: the {name} of --procedure "
                            f"{declaration.name} is --{p.supplied_by.replace('_', '-')}.")


def _write_report(args, argv, frame, result, procedure, audited, outcome, epsilon0, progress):
    """The HTML/Markdown/JSON report of a group or tilt audit (``--report``)."""
    from ..report import group_section

    prediction = (f"prediction column {args.prediction!r}" if args.prediction else
                  f"score column {args.score!r} thresholded at {args.threshold:g}")
    write_run_report(
        args, argv, progress, title="Group-fairness audit",
        audited=(f"The audit trail {args.data} ({len(frame):,} rows): label column "
                 f"{args.label!r}, {prediction}, "
                 + (f"{args.tilts} tilts of " if args.tilts else
                    "groups: intersections of ")
                 + f"{', '.join(args.protected)}."),
        outcome=outcome,
        data={"file": str(args.data), "rows": len(frame), "label": args.label,
              "prediction": prediction, "protected columns": ", ".join(args.protected),
              **audited},
        sections=(group_section(result, title=f"Group audit: {procedure}",
                                target_description=str(args.target), epsilon0=epsilon0),),
        extras=run_extras([args.data]),
    )


def _run_tilts(args, frame, y, y_pred, pos_label, given, progress):
    """Bounds over the tilts of the --protected covariate(s): the registered tilt class."""
    from ..group import get_procedure

    tilts = get_procedure(args.tilts)
    if args.target != "overall" and isinstance(args.target, str):
        raise UserError("--tilts have no named groups: --target must be 'overall' or "
                        "'constant:<v>'.")
    for column in args.protected:
        check_numeric(frame, column, "--protected")
    try:
        tilts.check_covariates(len(args.protected), f"--tilts {args.tilts}", "--protected column")
    except ValueError as exc:
        raise UserError(str(exc)) from None
    options = dict(given, metric=args.metric, target=args.target, pos_label=pos_label,
                   direction=args.direction, bins=args.bins, degree=args.degree,
                   bandwidth=args.bandwidth)
    missing = [p.name for p in tilts.parameters if p.required and p.name not in (
        "y", "y_pred") and options.get(p.name) is None]
    if missing:
        raise UserError(f"--tilts {args.tilts} needs "
                        + ", ".join(f"--{name.replace('_', '-')}" for name in missing) + ".")
    progress(f"{len(frame):,} rows; bounds over every {args.tilts} tilt of "
             f"{', '.join(args.protected)}, {args.n_resamples} bootstrap resamples")
    return tilts.run(y, y_pred, list(args.protected), [frame[c] for c in args.protected],
                     options)


def _print_calibration(args, result, alternative, epsilon0) -> int:
    """A tilt audit that calibrates bounds for tilts queried later (RKHS): its critical
    value and guarantee; not a gate."""
    from .._utils import json_safe

    if epsilon0 is not None:
        raise UserError(f"--tilts {args.tilts} calibrates bounds for tilts queried afterwards "
                        "(rkhs_tilt_bounds(...).bound): no --epsilon0 gate; use the library "
                        "to query tilts (--report shows tabulated ones).")
    figures = {"critical value": result.critical_value, "alpha": result.alpha,
               "alternative": alternative, "target": result.target, "n": result.n,
               "bandwidth": getattr(result, "bandwidth", None),
               "kernel factor rank": getattr(result, "rank", None),
               "refinement gap": getattr(result, "refinement_gap", None)}
    if args.json:
        payload = {"command": "group", "data": str(args.data), "procedure": "bounds",
                   "tilts": args.tilts, "target_spec": args.target, **{
                       k.replace(" ", "_"): v for k, v in figures.items()},
                   "guarantee": result.guarantee(), "unfair": False, "exit_code": EXIT_PASS}
        print(json.dumps(json_safe(payload), indent=2, allow_nan=False))
    else:
        print(f"Tilt audit of {args.data}: every {args.tilts} tilt of "
              f"{', '.join(args.protected)}, alternative {alternative}, "
              f"alpha={args.alpha:g} (simultaneous)")
        print_table(["figure", "value"], [[k, v] for k, v in figures.items() if v is not None])
        print(result.guarantee())
        print(f"Result: bounds calibrated (not a gate) -> exit code {EXIT_PASS}")
    return EXIT_PASS


def main(argv=None) -> int:
    """Run the command line (``skfair-audit``) and return its exit code.

    Parameters
    ----------
    argv : list of str, default=None
        The arguments after the program name (None: ``sys.argv[1:]``), e.g.
        ``["group", "trail.csv", "--label", "y", "--prediction", "y_pred", "--protected",
        "race"]``.

    Returns
    -------
    int
        0 when the audit passes, 1 when it finds the model unfair, 2 on a usage or data
        error (printed on standard error in one line).
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _build_parser()
    args = parser.parse_args(argv)
    try:
        if getattr(args, "report", None):
            check_report_path(args.report)
        if getattr(args, "output", None) and not getattr(args, "no_report", False):
            check_report_path(args.output, "--output")
        return args.handler(args, argv)
    except UserError as exc:
        print(f"skfair-audit: error: {exc}", file=sys.stderr)
    except ImportError as exc:
        print(f"skfair-audit: error: {first_line(exc)}", file=sys.stderr)
    except (ValueError, TypeError, KeyError) as exc:
        # The library's validation messages: bad values in the data or the options.
        print(f"skfair-audit: error: {in_option_words(first_line(exc))}", file=sys.stderr)
    except KeyboardInterrupt:
        print("skfair-audit: interrupted", file=sys.stderr)
    return EXIT_ERROR
