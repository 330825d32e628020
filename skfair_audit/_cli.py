"""The ``skfair-audit`` command line (also ``python -m skfair_audit``).

Subcommands: ``demo`` (the README's main job, :func:`skfair_audit._demo.run_demo`), ``group``
(group audit of an audit-trail file) and ``faith`` (FaiTH audit of a saved model,
:mod:`skfair_audit._cli_faith`). The command line only parses options, calls the library and
prints: tables and models are read by :mod:`skfair_audit._io`, and a group result tells its
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

from ._cli_faith import add_parser as add_faith_parser
from ._cli_monitor import add_parser as add_monitor_parser
from ._cli_ratio import add_parser as add_bias_audit_parser
from ._console import (
    EXIT_ERROR,
    EXIT_PASS,
    EXIT_UNFAIR,
    Progress,
    add_common,
    check_report_path,
    command_line,
    finite,
    in_option_words,
    positive_int,
    print_table,
    probability,
    run_extras,
    run_quietly,
    target_option,
    write_report,
)
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


def _add_group(sub):
    from .group._summary import ALTERNATIVES, DEFAULT_ALTERNATIVES

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
    group.add_argument("--metric", default="false_positive_rate",
                       help="metric name, e.g. fpr, fnr, tpr, ppv, npv, fdr, error_rate, "
                            "accuracy, selection_rate (default: false_positive_rate)")
    group.add_argument("--pos-label", default=None, metavar="LABEL",
                       help="positive label of --label/--prediction (default: 1 for 0/1 data)")
    group.add_argument("--target", type=target_option, default="overall",
                       help="'overall' (default), 'constant:<v>' or 'group:<name>', e.g. "
                            "group:race=Caucasian")
    group.add_argument("--procedure", choices=tuple(ALTERNATIVES), default=None,
                       help="bounds (simultaneous bounds), threshold (certificates) or flag "
                            "(FDR-controlled flags; default, bounds with --tilts)")
    group.add_argument("--tilts", choices=("monotone", "polynomial"), default=None,
                       help="audit tilts of the --protected covariate(s) instead of groups: "
                            "every monotone tilt of one numeric column, or every non-negative "
                            "polynomial tilt of one or two (bounds only)")
    group.add_argument("--direction", choices=("both", "increasing", "decreasing"),
                       default="both", help="--tilts monotone: direction (default both)")
    group.add_argument("--degree", type=positive_int, default=2,
                       help="--tilts polynomial: sums of squares of polynomials of this degree "
                            "(default 2)")
    group.add_argument("--bins", type=positive_int, default=50,
                       help="--tilts monotone: quantile bins of the covariate (default 50)")
    group.add_argument("--alternative", default=None,
                       help="; ".join(f"{p}: {' / '.join(a)} (default "
                                      f"{DEFAULT_ALTERNATIVES[p]})"
                                      for p, a in ALTERNATIVES.items()))
    group.add_argument("--epsilon0", type=finite, default=None, metavar="E",
                       help="disparity threshold (threshold and flag: default 0; bounds: "
                            "optional, turns the bounds into a gate)")
    group.add_argument("--alpha", type=probability, default=0.1,
                       help="simultaneous error level of bounds / threshold (default 0.1)")
    group.add_argument("--q", type=probability, default=0.1,
                       help="false discovery rate of flag (default 0.1)")
    add_common(group)
    group.set_defaults(handler=_run_group)


def _build_parser() -> argparse.ArgumentParser:
    from . import __version__

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

    from .group import AuditSummary, VacuousAuditWarning

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
    from .group._summary import ALTERNATIVES, DEFAULT_ALTERNATIVES
    from .report import AuditReport, data_section, group_section
    from .utils import json_safe

    progress = Progress(args.quiet)
    if args.tilts and args.procedure not in (None, "bounds"):
        raise UserError(f"--tilts gives simultaneous bounds: --procedure {args.procedure} is "
                        "not available for tilts.")
    procedure = args.procedure or ("bounds" if args.tilts else "flag")
    alternative = args.alternative or DEFAULT_ALTERNATIVES[procedure]
    if alternative not in ALTERNATIVES[procedure]:
        raise UserError(
            f"--alternative {alternative!r} is not valid with --procedure {procedure}; "
            f"choose one of {', '.join(ALTERNATIVES[procedure])}."
        )
    if args.score is None and args.threshold is not None:
        raise UserError("--threshold goes with --score (not with --prediction).")
    if args.score is not None and args.threshold is None:
        raise UserError("--score needs --threshold T (predicted positive when score >= T).")
    frame, y, y_pred, pos_label = _read_trail(args, progress)
    epsilon0 = args.epsilon0 if procedure == "bounds" or args.epsilon0 is not None else 0.0
    bootstrap = dict(n_resamples=args.n_resamples, random_state=args.random_state,
                     verbose=not args.quiet)  # a progress bar on stderr
    if args.tilts:
        result = run_quietly(_run_tilts, progress, args, frame, y, y_pred, pos_label,
                             alternative, bootstrap, progress)
        audited = {"tilts audited": f"every {args.tilts} tilt of "
                                    f"{', '.join(args.protected)} "
                                    f"({len(result.names)} extreme tilts shown)"}
    else:
        progress(f"{len(frame):,} rows; summarising the intersections of "
                 f"{', '.join(args.protected)}")
        summary = _summarise(args, progress, y, y_pred, frame[args.protected], pos_label)
        n_active = int(summary.active.sum())
        empty = summary.groups.n_groups - n_active
        progress(f"{procedure}: {n_active} non-empty groups"
                 + (f" ({empty} empty, left out)" if empty else "") + f", metric {args.metric}"
                 + ("" if procedure == "flag" else f", {args.n_resamples} bootstrap resamples"))
        run = {
            "bounds": lambda: summary.certify_bounds(alternative=alternative, alpha=args.alpha,
                                                     **bootstrap),
            "threshold": lambda: summary.certify_threshold(epsilon0=epsilon0, alpha=args.alpha,
                                                           alternative=alternative,
                                                           **bootstrap),
            "flag": lambda: summary.flag_groups(epsilon0=epsilon0, alternative=alternative,
                                                q=args.q),
        }[procedure]
        result = run_quietly(run, progress)
        audited = {"non-empty groups audited": n_active, "empty groups (left out)": empty}
    verdict = result.verdict(epsilon0)
    code = EXIT_UNFAIR if verdict.unfair else EXIT_PASS
    progress("done")
    table = result.table()
    if args.json:
        payload = {
            "command": "group", "data": str(args.data), "procedure": procedure,
            "metric": result.metric, "alternative": alternative, "target": result.target,
            "target_spec": args.target, "epsilon0": epsilon0,
            "alpha": args.alpha if procedure != "flag" else None,
            "q": args.q if procedure == "flag" else None, "n": result.n,
            "unfair": verdict.unfair, "exit_code": code, "verdict": verdict.summary,
            "groups": table.records(),
        }
        print(json.dumps(json_safe(payload), indent=2, allow_nan=False))
    else:
        level = (f"FDR q={args.q:g}" if procedure == "flag"
                 else f"alpha={args.alpha:g} (simultaneous)")
        print(f"Group audit of {args.data}: {procedure}, metric {result.metric}, "
              f"alternative {alternative}, {level}")
        print(f"target theta = {result.target:.4g} ({args.target}); audit sample n = "
              f"{result.n:,}; {len(table.rows)} "
              + ("extreme tilts" if args.tilts else "non-empty groups"))
        print_table(table.columns, table.rows)
        print(f"Result: {verdict.summary} -> exit code {code}")
    if args.report:
        prediction = (f"prediction column {args.prediction!r}" if args.prediction else
                      f"score column {args.score!r} thresholded at {args.threshold:g}")
        report = AuditReport(
            title="Group-fairness audit",
            audited=(f"The audit trail {args.data} ({len(frame):,} rows): label column "
                     f"{args.label!r}, {prediction}, "
                     + (f"{args.tilts} tilts of " if args.tilts else
                        "groups: intersections of ")
                     + f"{', '.join(args.protected)}."),
            outcome=f"{verdict.summary} (exit code {code}).",
            sections=(
                data_section({"file": str(args.data), "rows": len(frame),
                              "label": args.label, "prediction": prediction,
                              "protected columns": ", ".join(args.protected),
                              **audited}),
                group_section(result, title=f"Group audit: {procedure}",
                              target_description=str(args.target),
                              epsilon0=args.epsilon0 if procedure == "bounds" else None),
            ),
            command=command_line(argv),
            extras=run_extras([args.data]),
        )
        write_report(report, args.report, progress)
    return code


def _run_tilts(args, frame, y, y_pred, pos_label, alternative, bootstrap, progress):
    """Bounds over the tilts of the --protected covariate(s) (the library's tilt audits)."""
    from .group import monotone_tilt_bounds, polynomial_tilt_bounds

    if args.target != "overall" and isinstance(args.target, str):
        raise UserError("--tilts have no named groups: --target must be 'overall' or "
                        "'constant:<v>'.")
    for column in args.protected:
        check_numeric(frame, column, "--protected")
    options = dict(metric=args.metric, target=args.target, pos_label=pos_label,
                   alternative=alternative, alpha=args.alpha, **bootstrap)
    progress(f"{len(frame):,} rows; bounds over every {args.tilts} tilt of "
             f"{', '.join(args.protected)}, {args.n_resamples} bootstrap resamples")
    if args.tilts == "monotone":
        if len(args.protected) != 1:
            raise UserError("--tilts monotone takes one --protected column.")
        column = args.protected[0]
        return monotone_tilt_bounds(y, y_pred, frame[column], direction=args.direction,
                                    bins=args.bins, name=column, **options)
    if len(args.protected) not in (1, 2):
        raise UserError("--tilts polynomial takes one or two --protected columns.")
    return polynomial_tilt_bounds(y, y_pred, frame[args.protected].to_numpy(dtype=float),
                                  degree=args.degree, names=list(args.protected), **options)


def main(argv=None) -> int:
    """Run the command line; returns the exit code."""
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
