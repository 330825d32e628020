"""The ``skfair-audit`` command line (also ``python -m skfair_audit``).

Exit codes, usable as a gate in a CI pipeline:

* ``0`` — the audit ran and found nothing at the chosen level;
* ``1`` — the audit ran and found the model unfair at the chosen level;
* ``2`` — an error (bad input, missing file, missing optional dependency).
"""

from __future__ import annotations

import argparse
import sys

EXIT_PASS = 0
EXIT_UNFAIR = 1
EXIT_ERROR = 2


class UserError(Exception):
    """A mistake of the user's: reported in one line, never as a traceback."""


def _build_parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = argparse.ArgumentParser(
        prog="skfair-audit",
        description="Fairness audits of black-box classifiers with statistical guarantees.",
        epilog="Exit codes: 0 pass, 1 unfair at the chosen level, 2 error.",
    )
    parser.add_argument("--version", action="version", version=f"skfair_audit {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    demo = sub.add_parser(
        "demo",
        help="audit a logistic regression trained on ProPublica COMPAS (the README's main job)",
        description=(
            "Load ProPublica COMPAS (African-American and Caucasian defendants, ProPublica's "
            "filter), train a logistic regression on the FaiTH grid features and audit it."
        ),
    )
    demo.add_argument(
        "--data-home", default=None, help="folder holding compas/ (else $SKFAIR_AUDIT_DATA)"
    )
    demo.add_argument(
        "--random-state", type=int, default=0, help="seed of the split and bootstraps"
    )
    demo.add_argument("--quiet", action="store_true", help="print only the summary")
    demo.set_defaults(handler=_run_demo)
    return parser


def _run_demo(args) -> int:
    import numpy as np
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    from .datasets import fetch_compas

    try:
        compas = fetch_compas(data_home=args.data_home, preprocessing="propublica_aa_caucasian")
    except (OSError, ValueError) as exc:
        raise UserError(str(exc)) from exc
    X, y = compas.data, compas.target
    print(f"COMPAS (ProPublica filter, African-American and Caucasian): {len(y):,} defendants")
    print(f"  two-year recidivism rate: {y.mean():.3f}")
    for column in compas.sensitive.columns:
        shares = compas.sensitive[column].value_counts(normalize=True, sort=False)
        print(f"  {column}: " + ", ".join(f"{k} {v:.1%}" for k, v in shares.items() if v > 0))
    X_train, X_audit, y_train, y_audit = train_test_split(
        X, y, test_size=0.3, random_state=args.random_state, stratify=y
    )
    model = make_pipeline(
        OneHotEncoder(handle_unknown="ignore"), LogisticRegression(max_iter=1000)
    ).fit(X_train, y_train)
    accuracy = float(np.mean(model.predict(X_audit) == y_audit))
    print(
        f"Logistic regression on {', '.join(X.columns)}: trained on {len(y_train):,} rows, "
        f"audit accuracy {accuracy:.3f} on {len(y_audit):,} rows"
    )
    return EXIT_PASS


def main(argv=None) -> int:
    """Run the command line; returns the exit code."""
    parser = _build_parser()
    args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except UserError as exc:
        print(f"skfair-audit: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except ImportError as exc:
        print(f"skfair-audit: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
