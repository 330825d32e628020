"""The ``monitor`` subcommand: fold new files of an audit trail into a saved monitor state.

Each ``TRAIL`` file is one look (one batch) of :class:`skfair_audit.monitor.FairnessMonitor`.
All files are read and folded in memory first; the state file is written (atomically) only
when every file was valid, so a bad file leaves the saved state as it was.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from ._console import (
    EXIT_PASS,
    EXIT_UNFAIR,
    Progress,
    finite,
    positive_int,
    print_table,
    probability,
    target_option,
    write_run_report,
)
from ._io import UserError, read_table


def add_parser(sub):
    """Add the ``monitor`` subcommand to the subparsers ``sub``."""
    mon = sub.add_parser(
        "monitor",
        help="anytime-valid monitoring: fold new audit-trail files into a saved state",
        description=(
            "Follow a deployed model's audit trail file by file with confidence sequences "
            "for every group's rate (all intersections of the --protected columns), valid "
            "simultaneously over all groups and all looks: every run may be read as a "
            "verdict, however often you run it. STATE is created on the first run (with "
            "the options given) and must be used with the same options afterwards; each "
            "TRAIL file (CSV or Parquet) is one look. The state is written atomically and "
            "only if every file is valid."
        ),
        epilog=(
            "Exit codes: 0 no group flagged; 1 at least one group flagged after the new "
            "files (an alarm); 2 on errors (bad or foreign state file, missing column, "
            "missing values, new labels): the state file is then unchanged. Example: "
            "skfair-audit monitor state.npz day1.csv day2.csv --label y --prediction yhat "
            "--protected race sex --metric fpr --epsilon0 0.05"
        ),
    )
    mon.add_argument("state", metavar="STATE", help="monitor state file (.npz)")
    mon.add_argument("trail", nargs="+", metavar="TRAIL",
                     help="new audit-trail files (.csv, .parquet / .pq), one look each")
    mon.add_argument("--label", required=True, metavar="COL", help="column of true outcomes")
    mon.add_argument("--prediction", required=True, metavar="COL",
                     help="column of predicted labels")
    mon.add_argument("--protected", nargs="+", required=True, metavar="COL",
                     help="protected columns: their intersections are the groups")
    mon.add_argument("--depth", type=positive_int, default=None,
                     help="most attributes fixed at once (default: all)")
    mon.add_argument("--metric", default="selection_rate",
                     help="0/1 metric: selection_rate (default), fpr, fnr, tpr, ppv, "
                          "error_rate ...")
    mon.add_argument("--pos-label", default=None, metavar="LABEL",
                     help="positive label (default: 1 for 0/1 data); an integer if it "
                          "looks like one")
    mon.add_argument("--target", type=target_option, default="overall",
                     help="'overall' (default), 'constant:<v>' or 'group:<name>'")
    mon.add_argument("--alternative", choices=("greater", "less", "two-sided"),
                     default="greater",
                     help="flag disparity > E (default), < E, or |disparity| > E")
    mon.add_argument("--epsilon0", type=finite, default=0.0, metavar="E",
                     help="tolerance (default 0)")
    mon.add_argument("--procedure", choices=("fwer", "fdr"), default="fwer",
                     help="fwer: flags all true together with prob. >= 1 - alpha "
                          "(default); fdr: e-BH at --q at the look you act on")
    mon.add_argument("--alpha", type=probability, default=0.05,
                     help="simultaneous level of the confidence sequences (default 0.05)")
    mon.add_argument("--q", type=probability, default=0.1,
                     help="false discovery rate of --procedure fdr (default 0.1)")
    mon.add_argument("--method", choices=("betting", "asymptotic"), default="betting",
                     help="confidence sequences: betting (default, exact) or asymptotic")
    model = mon.add_mutually_exclusive_group()
    model.add_argument("--model", metavar="PATH",
                       help="the monitored model's file: its SHA-256 ties the state to it")
    model.add_argument("--model-id", metavar="TEXT", help="an identifier of the model")
    mon.add_argument("--json", action="store_true", help="print the result as JSON")
    mon.add_argument("--report", metavar="PATH", default=None,
                     help="write the report (folder, or .html / .json / .md file)")
    mon.add_argument("--quiet", action="store_true", help="no progress on stderr")
    mon.set_defaults(handler=run_monitor)


def _pos_label(text):
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        return text


def _model_id(args):
    if args.model is None:
        return args.model_id
    path = Path(args.model)
    if not path.is_file():
        raise UserError(f"--model {args.model!r}: no such file.")
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def run_monitor(args, argv=()) -> int:
    """Fold the files into the state; print what changed; exit 1 on an alarm."""
    from .._utils import json_safe
    from ..monitor import FairnessMonitor
    from ..report import monitor_section

    progress = Progress(args.quiet)
    monitor = FairnessMonitor(
        list(args.protected), label=args.label, prediction=args.prediction,
        metric=args.metric, pos_label=_pos_label(args.pos_label), target=args.target,
        alternative=args.alternative, epsilon0=args.epsilon0, procedure=args.procedure,
        alpha=args.alpha, q=args.q, method=args.method, depth=args.depth,
        model_id=_model_id(args))
    state = Path(args.state)
    before = None
    if state.exists():
        progress(f"loading {state}")
        monitor = FairnessMonitor.load(state, expected=monitor)
        before = monitor.result()
    else:
        progress(f"{state} does not exist: starting a new monitor")
    for path in args.trail:
        progress(f"reading {path}")
        frame = read_table(path)
        try:
            monitor.partial_fit(frame)
        except ValueError as exc:
            raise UserError(f"{path}: {exc} The state file is unchanged.") from None
    monitor.save(state)
    progress(f"state written: {state}")
    result = monitor.result()
    was = set() if before is None else {n for n, f in zip(before.names, before.flagged,
                                                          strict=True) if f}
    now = {n for n, f in zip(result.names, result.flagged, strict=True) if f}
    code = EXIT_UNFAIR if now else EXIT_PASS
    table = result.table().rows
    if args.json:
        keys = ("group", "size", "rate", "disparity", "low", "high", "flagged",
                "flagged_since", "certified", "pvalue")
        payload = {"command": "monitor", "state": str(state), "files": list(args.trail),
                   "looks": result.n_looks, "rows": result.n_rows,
                   "newly_flagged": sorted(now - was), "no_longer_flagged": sorted(was - now),
                   "flagged": sorted(now), "exit_code": code,
                   "guarantee": result.guarantee(),
                   "groups": [dict(zip(keys, row, strict=True)) for row in table]}
        print(json.dumps(json_safe(payload), indent=2, allow_nan=False))
    else:
        print(f"Monitor {state}: {len(args.trail)} new file(s); now {result.n_looks} looks, "
              f"{result.n_rows:,} rows; metric {result.metric}, target {result.target}, "
              f"alternative {result.alternative}, epsilon0 {result.epsilon0:g}, "
              f"{result.procedure.upper()}")
        print("newly flagged: " + (", ".join(sorted(now - was)) or "none")
              + "; no longer flagged: " + (", ".join(sorted(was - now)) or "none"))
        print_table(["group", "rows", "rate", "disparity", "CS low", "CS high", "flagged",
                     "since look"],
                    [row[:8] for row in table[:max(len(now), 10)]])
        print(result.guarantee())
        print(f"Result: {result.verdict_summary()} -> exit code {code}")
    if args.report:
        write_run_report(
            args, argv, progress, title="Fairness monitoring",
            audited=(f"The audit trail folded into {state} ({result.n_looks} looks, "
                     f"{result.n_rows:,} rows): label {args.label!r}, prediction "
                     f"{args.prediction!r}, groups: intersections of "
                     f"{', '.join(args.protected)}."),
            outcome=f"{result.verdict_summary()} (exit code {code}).",
            data={"state": str(state), "new files": ", ".join(args.trail),
                  "looks": result.n_looks, "rows": result.n_rows},
            sections=(monitor_section(result),),
        )
    return code
