"""The ``bias-audit`` subcommand: a Local Law 144 bias-audit table with guarantees.

Selection mode (``--decision COL``): each category's selection rate and impact ratio;
scoring mode (``--score COL``): each category's scoring rate (the share scoring above the
sample's median) and impact ratio. Categories: every ``--protected`` column and their
intersections. Every impact ratio gets an interval valid simultaneously over the table and a
verdict against ``--threshold`` (:func:`skfair_audit.group.bias_audit_table`).
"""

from __future__ import annotations

import json

from .._utils import Interval
from ._console import (
    EXIT_PASS,
    EXIT_UNFAIR,
    Progress,
    add_common,
    command_line,
    option_type,
    positive_int,
    print_table,
    probability,
    run_extras,
    run_quietly,
    write_report,
)
from ._io import (
    check_no_missing_values,
    check_numeric,
    parse_pos_label,
    read_table,
    require_columns,
)

non_negative = option_type(float, Interval("real", 0, None))
share = option_type(float, Interval("real", 0, 1, closed="left"))


def add_parser(sub):
    """Add the ``bias-audit`` subcommand to the subparsers ``sub``."""
    audit = sub.add_parser(
        "bias-audit",
        help="Local Law 144 bias-audit table: selection or scoring rates and impact ratios "
             "with simultaneous intervals",
        description=(
            "A bias-audit table in the style of New York City's Local Law 144: for every "
            "--protected column (e.g. sex, race) and their intersections, each category's "
            "selection rate (--decision) or scoring rate (--score: share above the sample "
            "median) and its impact ratio to the most selected category of the same kind, "
            "with intervals valid simultaneously over the whole table (the choice of the most "
            "selected category included) and a verdict per category "
            "against --threshold. Categories under --min-share of the rows are listed but "
            "excluded from the impact ratios, as the rule allows."
        ),
        epilog=(
            "Exit codes: 0 no category certified below the threshold; 1 at least one "
            "category's impact ratio certified below it; 2 on errors. Example: skfair-audit "
            "bias-audit applicants.csv --decision hired --protected sex race"
        ),
    )
    audit.add_argument("data", metavar="DATA", help="the tool's decisions (.csv, .parquet)")
    mode = audit.add_mutually_exclusive_group(required=True)
    mode.add_argument("--decision", metavar="COL",
                      help="selection mode: column of the tool's decisions")
    mode.add_argument("--score", metavar="COL",
                      help="scoring mode: column of the tool's scores")
    audit.add_argument("--protected", nargs="+", required=True, metavar="COL",
                       help="category columns (e.g. sex race): each alone and intersected")
    audit.add_argument("--pos-label", default=None, metavar="LABEL",
                       help="the selected decision (default: 1 for 0/1 data)")
    audit.add_argument("--threshold", type=non_negative, default=0.8, metavar="R",
                       help="impact-ratio threshold of the verdicts (default 0.8)")
    audit.add_argument("--alpha", type=probability, default=0.05,
                       help="simultaneous error level of the table (default 0.05)")
    audit.add_argument("--min-share", type=share, default=0.02, metavar="S",
                       help="categories under this share are excluded from the impact "
                            "ratios (default 0.02)")
    audit.add_argument("--depth", type=positive_int, default=None,
                       help="most columns intersected at once (default: all)")
    add_common(audit)
    audit.set_defaults(handler=run_bias_audit)


def run_bias_audit(args, argv=()) -> int:
    """Read the file, build the table, print it; exit 1 when a category is certified below."""
    from .._utils import json_safe
    from ..group import bias_audit_table

    progress = Progress(args.quiet)
    progress(f"reading {args.data}")
    frame = read_table(args.data)
    column = args.decision or args.score
    option = "--decision" if args.decision else "--score"
    require_columns(frame, [column], option)
    require_columns(frame, args.protected, "--protected")
    check_no_missing_values(frame, [column, *args.protected], "input")
    mode = "selection" if args.decision else "scoring"
    if mode == "scoring":
        check_numeric(frame, column, "--score")
        pos_label = 1
    else:
        pos_label = parse_pos_label(args.pos_label, frame[column])
        pos_label = 1 if pos_label is None else pos_label
    progress(f"{len(frame):,} rows; {mode} rates of {', '.join(args.protected)} and their "
             f"intersections, {args.n_resamples} bootstrap resamples")
    result = run_quietly(
        bias_audit_table, progress, frame[column].to_numpy(), frame[args.protected],
        mode=mode, pos_label=pos_label, threshold=args.threshold, alpha=args.alpha,
        min_share=args.min_share, depth=args.depth, n_resamples=args.n_resamples,
        random_state=args.random_state, verbose=not args.quiet)
    verdict = result.verdict()
    code = EXIT_UNFAIR if verdict.unfair else EXIT_PASS
    table = result.table()
    if args.json:
        payload = {"command": "bias-audit", "data": str(args.data), "mode": mode,
                   "threshold": args.threshold, "alpha": args.alpha,
                   "min_share": args.min_share, "median": result.median, "n": result.n,
                   "unfair": verdict.unfair, "exit_code": code, "verdict": verdict.summary,
                   "guarantee": result.guarantee(), "categories": table.records()}
        print(json.dumps(json_safe(payload), indent=2, allow_nan=False))
    else:
        print(f"Bias audit of {args.data}: {mode} mode, threshold {args.threshold:g}, "
              f"alpha={args.alpha:g} (simultaneous over the table)")
        print(result.describe())
        print_table(table.labels, table.rows)
        print(result.guarantee())
        print(f"Result: {verdict.summary} -> exit code {code}")
    if args.report:
        _write_report(args, argv, frame, result, mode, column, option,
                      f"{verdict.summary} (exit code {code}).", progress)
    return code


def _write_report(args, argv, frame, result, mode, column, option, outcome, progress):
    """The HTML/Markdown/JSON report of a bias audit (``--report``)."""
    from ..report import AuditReport, data_section, ratio_section

    report = AuditReport(
        title="Bias audit (Local Law 144 style)",
        audited=(f"The decisions in {args.data} ({len(frame):,} rows): {mode} mode on "
                 f"column {column!r}; categories: {', '.join(args.protected)} and their "
                 "intersections."),
        outcome=outcome,
        sections=(
            data_section({"file": str(args.data), "rows": len(frame),
                          option.lstrip("-"): column,
                          "category columns": ", ".join(args.protected)}),
            ratio_section(result, title="Bias-audit table", key="bias_audit"),
        ),
        command=command_line(argv),
        extras=run_extras([args.data]),
    )
    write_report(report, args.report, progress)
