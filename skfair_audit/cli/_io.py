"""Reading audit inputs for the command line and the demo: tables, models, labels.

A library module (the command line only parses options and prints): every function raises
:class:`UserError` with a one-line message naming the file, the column or the option, and the
available alternatives.
"""

from __future__ import annotations

import sys
from pathlib import Path

from .._utils import encode_categories, import_optional

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


class UserError(Exception):
    """A mistake of the user's: reported in one line, never as a traceback."""


def read_table(path):
    """Read an audit-trail file (CSV, or Parquet by its suffix) into a DataFrame.

    Raises :class:`UserError` in one line for a missing or unreadable file.
    """
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
            raise UserError(f"cannot read {str(path)!r} as Parquet: {first_line(exc)}") from None
    try:
        frame = pd.read_csv(path)
    except (UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise UserError(f"cannot read {str(path)!r} as CSV: {first_line(exc)}") from None
    except OSError as exc:
        raise UserError(f"cannot read {str(path)!r}: {first_line(exc)}") from None
    if frame.shape[1] < 2 or len(frame) == 0:
        raise UserError(
            f"{str(path)!r} does not look like an audit trail: {len(frame)} rows and "
            f"{frame.shape[1]} column(s) (expected a CSV with a header line)."
        )
    return frame


def first_line(exc):
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


def check_no_missing_values(frame, columns, option):
    """Every value of the columns is present (the library's one missing-value rule, worded
    for the command line)."""
    for column in columns:
        missing = int(frame[column].isna().sum())
        if missing:
            raise UserError(
                f"{option}: column {column!r} has {missing} missing value(s); drop or fill "
                "them before auditing."
            )


def check_numeric(frame, column, option):
    """The column holds numbers (not booleans, not text)."""
    pd = import_optional("pandas", "read audit-trail files")
    if not pd.api.types.is_numeric_dtype(frame[column]) or pd.api.types.is_bool_dtype(
        frame[column]
    ):
        example = frame[column].iloc[0]
        raise UserError(
            f"{option}: column {column!r} must hold numbers, found {frame[column].dtype} values "
            f"such as {example!r}."
        )


def parse_pos_label(text, *columns):
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


def scores_to_labels(y, scores, threshold, pos_label):
    """Predicted labels ``score >= threshold``, in the label coding of ``y``."""
    import numpy as np

    observed = set(encode_categories(y, "--label")[1])
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


def load_model(path, *, trust=(), unsafe_pickle=False, progress=None):
    """Load a trained model safely: skops with an explicit allow-list; pickles only on request.

    Parameters
    ----------
    path : str or path-like
    trust : sequence of str
        Types the user trusts beyond skops' defaults and :data:`DEFAULT_TRUSTED_TYPES`.
    unsafe_pickle : bool
        Allow ``.pkl`` / ``.joblib`` files (arbitrary code execution on load).
    progress : callable, optional
        Called with one-line progress messages.

    Returns
    -------
    estimator
    """
    progress = progress or (lambda message: None)
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
            # ... often with a message that means nothing alone (a KeyError of an opcode: "89")
            raise UserError(
                f"cannot load {str(path)!r} as a pickle/joblib file "
                f"({type(exc).__name__}: {first_line(exc)}): it is not a model written by "
                "joblib.dump or pickle.dump, is truncated, or needs other versions of the "
                "libraries it was saved with."
            ) from None
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
                f"cannot read {str(path)!r} as a skops file ({first_line(exc)}); save the "
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
            raise UserError(f"cannot load {str(path)!r}: {first_line(exc)}") from None
    if not hasattr(model, "predict"):
        raise UserError(
            f"{str(path)!r} holds a {type(model).__name__}, not a classifier with predict()."
        )
    return model


def levels_seen_by(model):
    """The levels of each column that the model's fitted encoders saw in training.

    Walks the model's fitted steps (``Pipeline`` steps, a ``ColumnTransformer``'s fitted
    ``transformers_``, the ``estimator`` / ``best_estimator_`` of a wrapper such as
    ``FrozenEstimator``) for encoders that record ``categories_`` by ``feature_names_in_``
    (``OneHotEncoder``, ``OrdinalEncoder``, ``TargetEncoder``).

    Returns
    -------
    dict
        ``{column: set of levels}``; columns whose encoder is not found are absent.
    """
    seen = {}
    pending, visited = [model], set()
    while pending:
        step = pending.pop()
        if step is None or isinstance(step, str) or id(step) in visited:
            continue
        visited.add(id(step))
        categories = getattr(step, "categories_", None)
        names = getattr(step, "feature_names_in_", None)
        if categories is not None and names is not None and len(categories) == len(names):
            for name, levels in zip(names, categories, strict=True):
                seen.setdefault(str(name), set()).update(levels.tolist())
        pending.extend(entry[1] for entry in getattr(step, "transformers_", None) or ())
        pending.extend(entry[1] for entry in getattr(step, "steps", None) or ())
        pending.extend(getattr(step, name, None) for name in ("estimator", "best_estimator_"))
    return seen


def unseen_levels(model, frame, columns):
    """Levels of ``frame[columns]`` that the model's encoders never saw in training.

    Parameters
    ----------
    model : estimator
    frame : DataFrame
    columns : list of str

    Returns
    -------
    dict
        ``{column: sorted list of unseen levels}`` for the columns that have some (only
        columns whose encoder is found: see :func:`levels_seen_by`).
    """
    seen = levels_seen_by(model)
    unseen = {}
    for column in columns:
        if column in seen:
            new = [v for v in frame[column].unique().tolist() if v not in seen[column]]
            if new:
                unseen[column] = sorted(new, key=str)
    return unseen
