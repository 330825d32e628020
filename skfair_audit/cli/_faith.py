"""The ``faith`` subcommand: FaiTH audit of a saved model on an audit file.

Moved out of ``_cli.py`` unchanged (the command line only dispatches to it).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from ..faith import DEFAULT_EPSILON
from ._console import (
    EXIT_PASS,
    EXIT_UNFAIR,
    Progress,
    add_common,
    check_memory_size,
    in_option_words,
    non_negative,
    probability,
    run_extras,
    run_quietly,
    write_run_report,
)
from ._io import (
    DEFAULT_TRUSTED_TYPES,
    UserError,
    check_no_missing_values,
    first_line,
    load_model,
    read_table,
    require_columns,
    unseen_levels,
)


def add_parser(sub):
    """Add the ``faith`` subcommand to the subparsers ``sub``."""
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
    faith.add_argument("--epsilon", type=non_negative, default=DEFAULT_EPSILON,
                       help=f"transport budget (default {DEFAULT_EPSILON:g}, as in the Python "
                            "API: only changes of the protected attributes and their proxies "
                            "are free; the result gives the budgets at which the statistic "
                            "reaches half and 95%% of its unlimited-budget value)")
    faith.add_argument("--delta", type=non_negative, required=True,
                       help="tolerated increase of the error rate (H0: statistic <= delta)")
    faith.add_argument("--method", choices=("uniform", "m-out-of-n", "numerical",
                                            "nonparametric", "subsampling"), default="uniform",
                       help="inference method (default uniform: bounds valid uniformly, at and "
                            "near the kinks of epsilon -> psi too; the bootstraps m-out-of-n, "
                            "numerical, subsampling are valid pointwise only)")
    faith.add_argument("--confidence-level", type=probability, default=0.95,
                       metavar="LEVEL", help="confidence level (default 0.95: a 5%% test)")
    faith.add_argument("--confidence", type=probability, dest="confidence_level",
                       help=argparse.SUPPRESS)
    faith.add_argument("--space", choices=("auto", "grid", "reference", "empirical"),
                       default="auto",
                       help="sample space: auto (default: grid on categorical columns, "
                            "reference on numeric ones), grid (every combination of the levels "
                            "of discrete features), reference (continuous features: an audit "
                            "row may move to the rows of --reference, each with every "
                            "protected level, or to its own copies with other protected "
                            "levels), empirical (the audit rows themselves are the "
                            "destinations: conditional on the audit sample, not a population "
                            "quantity)")
    faith.add_argument("--reference", metavar="PATH", default=None,
                       help="reference rows of the reference space (.csv or .parquet with the "
                            "--features columns); default the --metric-data rows, or, "
                            "without --metric-data, a seeded half of the audit file (the "
                            "other half is audited)")
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
    add_common(faith)
    faith.set_defaults(handler=run_faith)


def run_faith(args, argv=()) -> int:
    from sklearn.frozen import FrozenEstimator

    from .._utils import json_safe
    from ..faith import FaithAuditor, MemoryLimitError
    from ..report import faith_section

    progress = Progress(args.quiet)
    _check_options(args)  # before anything is loaded
    progress(f"loading the model {args.model}")
    model = load_model(args.model, trust=args.trust, unsafe_pickle=args.unsafe_pickle,
                       progress=progress)
    progress(f"reading {args.data}")
    frame = read_table(args.data)
    require_columns(frame, [args.label], "--label")
    require_columns(frame, args.features, "--features")
    _warn_unseen_levels(model, frame, args, progress)
    check_no_missing_values(frame, [args.label, *args.features], "input")
    single = {p: frame[p].iloc[0] for p in args.protected if frame[p].nunique() < 2}
    if len(single) == len(args.protected):
        raise UserError(
            "every protected attribute has a single level in the audit data ("
            + ", ".join(f"{p} = {getattr(v, 'item', lambda v=v: v)()!r}"
                        for p, v in single.items())
            + "): no one can be compared with someone of another group, so the audit would "
            "say nothing."
        )
    X, y = frame[list(args.features)], frame[args.label]
    reference = None
    if args.reference:
        ref_frame = read_table(args.reference)
        require_columns(ref_frame, args.features, "--reference")
        check_no_missing_values(ref_frame, args.features, "--reference")
        reference = ref_frame[list(args.features)]
    if args.metric_data:
        metric_frame = read_table(args.metric_data)
        require_columns(metric_frame, [args.label, *args.features], "--metric-data")
        check_no_missing_values(metric_frame, [args.label, *args.features], "--metric-data")
        X_fit, y_fit = metric_frame[list(args.features)], metric_frame[args.label]
    else:
        X_fit, y_fit = X, y
    split = None
    if reference is None and not args.metric_data and args.space in ("auto", "reference"):
        kind = FaithAuditor(FrozenEstimator(model), features=list(args.features),
                            space=args.space)._space_kind(X)
        if kind == "reference":
            # The reference rows must not be the audited rows: split the file, seeded.
            split = np.random.default_rng(args.random_state).permutation(len(y)) % 2 == 0
            X_fit, y_fit = X[split], y[split]
            X, y = X[~split], y[~split]
            progress(f"no --reference or --metric-data: {int(split.sum()):,} rows of "
                     f"{args.data} (a seeded half) are the reference set and fit the metric; "
                     f"the other {len(y):,} are audited")
    auditor = FaithAuditor(
        FrozenEstimator(model), features=list(args.features), protected=list(args.protected),
        epsilon=args.epsilon, delta=args.delta, method=args.method,
        n_resamples=args.n_resamples, confidence_level=args.confidence_level,
        random_state=args.random_state, space=args.space, memory_limit=args.memory_limit,
        reference=reference,
        verbose=not args.quiet,  # a progress bar on stderr
    )
    progress("learning the fair metric" + (" and querying the model on the grid"
                                           if args.space == "grid" else ""))
    try:
        run_quietly(auditor.fit, progress, X_fit, y_fit)
    except MemoryLimitError as exc:
        raise UserError(in_option_words(first_line(exc))) from None
    except Exception as exc:  # the data's sample space, or the user's model failing on it
        raise UserError(
            "cannot audit the model on the sample space of --features: "
            + in_option_words(first_line(exc))
        ) from None
    cells = (f"{auditor.space_.n_cells} cells" if auditor.space_kind_ == "grid"
             else f"{auditor.space_kind_} sample space")
    progress(f"FaiTH audit: {cells}, {len(y):,} audit rows, "
             f"{args.n_resamples} {args.method} resamples")
    try:
        result = run_quietly(auditor.audit, progress, X, y)
    except MemoryLimitError as exc:
        raise UserError(in_option_words(first_line(exc))) from None
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
        metric_source = args.metric_data or (
            "a seeded half of the audit file (the reference set; the other half audited)"
            if split is not None else "the audit data")
        write_run_report(
            args, argv, progress, title="Individual-fairness (FaiTH) audit",
            audited=(f"The model {args.model} ({type(model).__name__}) on {args.data} "
                     f"({len(y):,} rows), {auditor.space_kind_} sample space of "
                     f"{', '.join(args.features)}, protected {', '.join(args.protected)}; fair "
                     f"metric learned on {metric_source}."),
            outcome=f"{'rejected' if unfair else 'not rejected'}: δ-fairness for "
                    f"δ = {args.delta:g} (exit code {code}).",
            data={"file": str(args.data), "rows": len(y), "label": args.label,
                  "features": ", ".join(args.features), "protected": ", ".join(args.protected)},
            sections=(faith_section(result, heatmap_rows=list(args.protected)),),
            extras=run_extras([args.data, args.metric_data], model=args.model),
        )
    return code


def _check_options(args):
    """The options that need no file: checked before the model or the data are loaded."""
    outside = [p for p in args.protected if p not in args.features]
    if outside:
        raise UserError(
            f"--protected: {', '.join(map(repr, outside))} must also be among --features "
            f"({', '.join(args.features)})."
        )
    for option in ("features", "protected"):
        names = getattr(args, option)
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise UserError(f"--{option} names {', '.join(map(repr, twice))} twice.")
    if args.label in args.features:
        raise UserError(f"--label {args.label!r} is also among --features: the model would "
                        "be queried on the outcome it predicts.")
    for option, path in (("--model", args.model), ("--data", args.data),
                         ("--metric-data", args.metric_data)):
        if path is not None and not Path(path).is_file():
            raise UserError(f"{option} {str(path)!r}: no such file.")
    check_memory_size(args.memory_limit)


def _warn_unseen_levels(model, frame, args, progress):
    """Levels of the audit data the model's encoders never saw: its answers there are a guess
    (an encoder that ignores unknown levels), and the grid grows by their cells."""
    unseen = unseen_levels(model, frame, list(args.features))
    if unseen:
        rows = sum(frame[c].isin(v) for c, v in unseen.items()).astype(bool).sum()
        what = "; ".join(
            f"{'--protected' if c in args.protected else '--features'} {c}: "
            f"{', '.join(map(repr, v))}" for c, v in unseen.items()
        )
        progress.warn(
            f"{rows:,} audit row(s) have levels the model never saw in training ({what}): "
            "the audit queries the model on them (its encoder's answer for an unknown "
            "level), and the sample space has cells for them."
        )
