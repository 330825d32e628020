"""Group audits of partitioned audit trails (Dask DataFrames or streams of pandas chunks).

Only what is about partitions lives here. Every partition is summarised by
:meth:`skfair_audit.group.TrailSummary.from_frame` — cells (combinations of the protected
columns' levels) and atoms (cell, value of the metric) with their integer counts — and the
summaries are added up (:meth:`~skfair_audit.group.TrailSummary.merge`, a tree reduction on
Dask). The driver turns the total into an :class:`~skfair_audit.group.AuditSummary`, on
which every group procedure runs. Two bootstraps, chosen automatically:

* **discrete metrics** (rates, errors, coverage, calibration bins: few atoms): the
  multinomial bootstrap over the atoms runs at the driver, :math:`O(\\text{atoms} \\cdot B)`,
  independent of the number of rows and of the partitioning — and **bit for bit** the
  in-memory audit (:func:`skfair_audit.group.certify_bounds`) with the same seed;
* **continuous metrics** (more than ``max_atoms`` distinct atoms: about one per row): a second
  pass in which every row :math:`r` gets Poisson(1) weights :math:`w_{rb}`, a pure function of
  a stable row key, the seed and the replicate (:mod:`skfair_audit.scale._poisson`), and every
  partition sends the per-cell sums :math:`\\sum_{r \\in c} w_{rb}` and
  :math:`\\sum_{r \\in c} w_{rb} L_r`; each replicate is normalised to total mass :math:`n`,

.. math::

    P_n^b = \\frac{\\sum_r w_{rb}\\, \\delta_{Z_r}}{\\sum_r w_{rb}}, \\qquad
    c = Q_{1-\\alpha}\\Big(\\sup_G T_b(G) / s_G\\Big).

The result's ``bootstrap`` attribute says which ran. The Poisson and multinomial bootstraps
are asymptotically equivalent (the multinomial is the Poisson conditioned on
:math:`\\sum_r w_{rb} = n`); ``benchmarks/bench_scale_dask.py`` checks that their bounds
agree within Monte Carlo error.

References
----------
Chamandy, N., Muralidharan, O., Najmi, A. and Naidu, S. (2012). Estimating uncertainty for
massive data streams. Google technical report.
Cherian, J. J. and Candès, E. J. (2024). Statistical inference for fairness auditing.
JMLR 25(149).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

import numpy as np

from .._resampling import DEFAULT_MEMORY_LIMIT, MEMORY_LIMIT
from .._utils import (
    ARRAY_LIKE,
    POSITIVE_INT,
    RANDOM_STATE,
    STRING,
    VERBOSE,
    Interval,
    Options,
    Predicate,
    import_optional,
    seed_sequence,
    validate_params,
)
from ..group import AuditSummary, TrailSummary, get_metric
from ..group._registry import (
    REQUIRED,
    Parameter,
    docstring,
    make_function,
    procedure_of_function,
)
from ..group._summary import BOOTSTRAP_CONSTRAINTS
from ._poisson import fill_poisson_weights, row_states
from ._reduce import is_dask_frame, reduce_partitions

#: Weights computed at once inside a partition (rows × replicates, int8): 128 KiB, cache sized.
BLOCK_ELEMENTS = 2**17
#: Above this many distinct atoms the Poisson bootstrap replaces the multinomial one.
MAX_ATOMS = 1 << 18


@dataclass(frozen=True)
class _Spec:
    """What every partition needs (small and picklable)."""

    label: str
    prediction: str
    protected: tuple
    metric: object
    max_atoms: int
    row_key: object = None
    seed: int = 0
    n_resamples: int = 0
    batch_size: int = 1


@dataclass(frozen=True, eq=False)
class _Part:
    """A partition's trail summary and the index ranges of its rows (to detect row keys that
    repeat across partitions)."""

    summary: TrailSummary
    index_ranges: tuple = ()


def _row_key_words(frame, row_key, pd):
    """One uint64 word per row from the index (``row_key=None``) or key column(s)."""
    if row_key is None:
        values = frame.index
        if values.dtype.kind in "iu":
            return values.to_numpy().astype(np.int64).view(np.uint64)
        return pd.util.hash_pandas_object(values, index=False).to_numpy()
    columns = [row_key] if isinstance(row_key, str) else list(row_key)
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"row_key columns {missing} are not columns of the audit trail.")
    if len(columns) == 1 and frame[columns[0]].dtype.kind in "iu":
        return frame[columns[0]].to_numpy().astype(np.int64).view(np.uint64)
    return pd.util.hash_pandas_object(frame[columns], index=False).to_numpy()


def summarize_partition(frame, spec) -> _Part:
    """Summarise one pandas partition (a task of the Dask graph).

    Without ``spec.n_resamples``: the counts only. With it: also the per-cell sums of the
    Poisson weights of the audit-sample rows (the Poisson pass).
    """
    pd = import_optional("pandas", "audit a partitioned trail")
    if not spec.n_resamples:
        return _Part(TrailSummary.from_frame(
            frame, label=spec.label, prediction=spec.prediction, protected=spec.protected,
            metric=spec.metric, max_atoms=spec.max_atoms))
    summary, cell_of_row, values, rows = TrailSummary.from_frame(
        frame, label=spec.label, prediction=spec.prediction, protected=spec.protected,
        metric=spec.metric, max_atoms=spec.max_atoms, keep_rows=True)
    index_ranges = ()
    if spec.row_key is None and isinstance(frame.index, pd.RangeIndex) and frame.index.step == 1:
        index_ranges = ((int(frame.index.start), int(frame.index.stop)),)
    n_cells = summary.cell_rows.size
    weights = np.zeros((spec.n_resamples, n_cells), dtype=np.int64)
    weighted = np.zeros((spec.n_resamples, n_cells))
    sample = np.arange(len(frame)) if rows is None else np.flatnonzero(rows)
    if sample.size:
        keys = _row_key_words(frame, spec.row_key, pd)[sample]
        if np.unique(keys).size != keys.size:
            raise ValueError(
                "row keys repeat within a partition: the Poisson weights of rows with the same "
                "key would be identical. Pass row_key= a unique id column (or columns)."
            )
        cells = cell_of_row[sample].astype(np.intp)
        order = np.argsort(cells, kind="stable")
        _accumulate(row_states(keys[order], spec.seed), cells[order],
                    np.asarray(values, dtype=float)[sample][order], weights, weighted,
                    spec.batch_size)
    return _Part(summary.with_replicates(weights, weighted), index_ranges)


def _accumulate(states, cell_sorted, values, weights, weighted, batch_size):
    """``weights[b, c] += sum of w[r, b]`` and ``weighted[b, c] += sum of w[r, b] L_r`` over
    the rows r of cell c, block by block.

    Memory: buffers of ``block_rows × batch_size`` (int8 weights, two uint64 hash words and
    their float products), allocated once, whatever the partition size and B.
    """
    n_resamples = weights.shape[0]
    block_rows = max(256, BLOCK_ELEMENTS // batch_size)
    size = min(block_rows, states.size) * batch_size
    weights_buf = np.empty(size, dtype=np.int8)
    z_buf, work_buf = np.empty(size, dtype=np.uint64), np.empty(size, dtype=np.uint64)
    product_buf = np.empty(size)
    for r0 in range(0, states.size, block_rows):
        block = states[r0:r0 + block_rows]
        cells = cell_sorted[r0:r0 + block_rows]
        value = values[r0:r0 + block_rows, None]
        starts = np.flatnonzero(np.r_[True, cells[1:] != cells[:-1]])
        present = cells[starts]
        for b0 in range(0, n_resamples, batch_size):
            b1 = min(b0 + batch_size, n_resamples)
            shape = (block.size, b1 - b0)
            count = shape[0] * shape[1]
            w = fill_poisson_weights(
                block, b0, weights_buf[:count].reshape(shape), z_buf[:count].reshape(shape),
                work_buf[:count].reshape(shape),
            )
            product = np.multiply(w, value, out=product_buf[:count].reshape(shape))
            weights[b0:b1, present] += np.add.reduceat(w, starts, axis=0, dtype=np.int64).T
            weighted[b0:b1, present] += np.add.reduceat(product, starts, axis=0).T


def _merge_parts(*parts):
    parts = [p for p in parts if p is not None]
    return _Part(TrailSummary.merge(*(p.summary for p in parts)),
                 tuple(r for p in parts for r in p.index_ranges))


def _reduce(trail, spec, fan_in, verbose=0):
    """Summarise a Dask DataFrame (tree reduction on the active scheduler), a pandas
    DataFrame, or an iterable of pandas DataFrames (one chunk in memory at a time)."""
    if is_dask_frame(trail):
        missing = [c for c in (spec.label, spec.prediction, *spec.protected)
                   if c not in trail.columns]
        if missing:
            raise ValueError(f"columns {missing} are not in the audit trail.")
    total = reduce_partitions(trail, summarize_partition, _merge_parts, (spec,), fan_in=fan_in,
                              verbose=verbose)
    if total is None:
        raise ValueError("the audit trail has no partition.")
    return total


def _check_index_ranges(ranges):
    ranges = sorted(r for r in ranges if r[1] > r[0])
    for (a0, a1), (b0, _) in zip(ranges, ranges[1:], strict=False):
        if b0 < a1:
            raise ValueError(
                f"row keys repeat across partitions: two partitions have RangeIndex rows "
                f"[{a0}, {a1}) and [{b0}, ...) (e.g. chunks read from Parquet row groups "
                "restart their index at 0). Pass row_key= a unique id column, or give the "
                "chunks a global index."
            )


def _poisson_seed(random_state) -> int:
    return int(seed_sequence(random_state).generate_state(1, dtype=np.uint64)[0])


def _is_reiterable(trail):
    return is_dask_frame(trail) or hasattr(trail, "columns") or isinstance(
        trail, (list, tuple))


_PROTECTED = [STRING, Predicate(lambda v: all(isinstance(c, str) for c in v) and len(v) > 0,
                                "a list of column names")]
_TRAIL = {
    "label": [STRING],
    "prediction": [STRING],
    "protected": _PROTECTED,
    "depth": [None, Interval("integral", 1, None)],
    "include_all": [Options((True, False))],
    "min_size": [Interval("integral", 0, None)],
    "row_key": [None, STRING, ARRAY_LIKE],
    "verbose": VERBOSE,
}
_BOOTSTRAP = {
    "bootstrap": [Options(("auto", "multinomial", "poisson"))],
    "max_atoms": [POSITIVE_INT],
    "n_resamples": [None, POSITIVE_INT],
    "batch_size": [None, POSITIVE_INT],
    "random_state": [RANDOM_STATE],
}


_SUMMARIZE_TRAIL_PARAMETERS = {
    **_TRAIL, **_BOOTSTRAP, "fan_in": [Interval("integral", 2, None)],
}


@validate_params(_SUMMARIZE_TRAIL_PARAMETERS)
def summarize_trail(trail, *, label, prediction, protected, metric, target="overall",
                    pos_label=None, depth=None, include_all=False, min_size=0,
                    bootstrap="auto", max_atoms=MAX_ATOMS, row_key=None, n_resamples=None,
                    batch_size=None, random_state=None, fan_in=8, verbose=0) -> AuditSummary:
    """The :class:`~skfair_audit.group.AuditSummary` of a partitioned audit trail.

    Every partition is counted where it lives; the driver adds the counts. Run any group
    procedure on the result (``summary.certify_bounds(...)``, ``summary.certify_threshold(...)``,
    ``summary.flag_groups(...)``): with a discrete metric it is *the same summary* as
    :meth:`AuditSummary.from_rows <skfair_audit.group.AuditSummary.from_rows>` on the
    concatenated rows, so every result is bit for bit the in-memory one.

    Parameters
    ----------
    trail : dask.dataframe.DataFrame, pandas.DataFrame or iterable of pandas.DataFrame
        The audit trail, one row per prediction. A Dask DataFrame is reduced on the active
        scheduler (e.g. a ``dask.distributed.Client``); an iterable (e.g. Parquet row groups)
        is read one chunk at a time (twice for the Poisson bootstrap: pass a list, or a
        Dask DataFrame, for a continuous metric).
    label, prediction : str
        Columns of the outcome and of the model's output.
    protected : str or list of str
        The protected columns; the groups are their intersections (as
        :func:`~skfair_audit.group.intersections` with ``depth``, ``include_all``,
        ``min_size``).
    metric : str, Metric or callable
        See :func:`~skfair_audit.group.get_metric`.
    target : float, "overall" or str
        Known constant, the overall metric, or the name of a reference group.
    pos_label : optional
        Positive label, when ``metric`` is a name.
    depth, include_all, min_size
        As in :func:`~skfair_audit.group.intersections`.
    bootstrap : {"auto", "multinomial", "poisson"}
        ``"auto"``: multinomial over the atoms unless there are more than ``max_atoms`` of
        them (a continuous metric), then the Poisson bootstrap (a second pass over the
        partitions, O(rows × B)). The result's ``bootstrap`` attribute says which ran.
    max_atoms : int
        The switch of ``"auto"``; also the largest atom table a partition sends.
    row_key : None, str or list of str
        Poisson bootstrap only: what seeds each row's weights. ``None`` uses the index (Dask
        keeps it through ``repartition``; partitions whose ``RangeIndex`` restarts at 0 are
        refused); a column name (or names) uses a unique id, the safest choice for files.
    n_resamples : int, optional
        The replicates of the Poisson bootstrap, computed by the partitions when it runs
        (default: none for ``"auto"``, which then keeps only per-cell moments of a continuous
        metric — enough for delta-method flagging; 1000 for ``"poisson"``). The multinomial
        bootstrap draws its replicates later, in the procedure.
    batch_size : int, optional
        Poisson bootstrap only: replicates computed at once inside a partition (default
        ``min(B, 64)``).
    random_state : None, int, RandomState, Generator or SeedSequence
        Poisson bootstrap only: seed of the row hash.
    fan_in : int
        Partition summaries added per task of the Dask tree reduction.
    verbose : int
        0: silent; otherwise a progress bar over the partitions summarised (the summary is
        the same).

    Returns
    -------
    AuditSummary

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from skfair_audit.group import AuditSummary
    >>> rng = np.random.default_rng(0)
    >>> trail = pd.DataFrame({"sex": rng.choice(["F", "M"], 3000),
    ...                       "y": rng.integers(0, 2, 3000)})
    >>> trail["y_pred"] = np.where(rng.random(3000) < 0.8, trail.y, 1 - trail.y)
    >>> chunks = [trail.iloc[i:i + 1000] for i in range(0, 3000, 1000)]
    >>> summary = summarize_trail(chunks, label="y", prediction="y_pred", protected=["sex"],
    ...                           metric="error_rate")
    >>> in_memory = AuditSummary.from_rows(trail.y, trail.y_pred, trail[["sex"]],
    ...                                    metric="error_rate")
    >>> a = summary.certify_bounds(n_resamples=200, random_state=0)
    >>> b = in_memory.certify_bounds(n_resamples=200, random_state=0)
    >>> bool(np.array_equal(a.lower, b.lower)), a.bootstrap
    (True, 'multinomial')
    """
    protected = (protected,) if isinstance(protected, str) else tuple(protected)
    if isinstance(metric, str) and pos_label is not None:
        metric = get_metric(metric, pos_label=pos_label)
    elif pos_label is not None:
        raise ValueError("pos_label can only be combined with a metric given by name.")
    else:
        metric = get_metric(metric)
    collection = dict(target=target, depth=depth, include_all=include_all, min_size=min_size)
    if bootstrap != "poisson":
        part = _reduce(trail, _Spec(label, prediction, protected, metric, max_atoms), fan_in,
                       verbose)
        if part.summary.has_atoms:
            return AuditSummary.from_trail(part.summary, metric=metric, **collection,
                                           source="partitioned trail (atoms)")
        if bootstrap == "multinomial":
            raise ValueError(
                f"the metric has more than max_atoms={max_atoms} distinct atoms (a continuous "
                "metric): use bootstrap='poisson' (or 'auto'), or raise max_atoms.")
        if n_resamples is None:  # no bootstrap asked for: the moments serve the delta method
            return AuditSummary.from_trail(part.summary, metric=metric, **collection,
                                           source="partitioned trail (moments)")
        if not _is_reiterable(trail):
            raise ValueError("the Poisson bootstrap of a continuous metric reads the trail "
                             "twice: pass a list of chunks or a Dask DataFrame, not a "
                             "one-shot iterator (or bootstrap='poisson' for a single pass).")
    n_resamples = 1000 if n_resamples is None else n_resamples
    batch = min(n_resamples, 64 if batch_size is None else batch_size)
    spec = _Spec(label, prediction, protected, metric, max_atoms, row_key,
                 _poisson_seed(random_state), int(n_resamples), int(batch))
    part = _reduce(trail, spec, fan_in, verbose)
    if row_key is None:
        _check_index_ranges(part.index_ranges)
    return AuditSummary.from_trail(part.summary, metric=metric, **collection,
                                   source="partitioned trail (Poisson replicates)")


# -- the partitioned function of every registered summary procedure --------------------------
_TRAIL_PARAMETERS = (
    Parameter("label", REQUIRED, _TRAIL["label"], "str",
              "Columns of the outcome and of the model's output."),
    Parameter("prediction", REQUIRED, _TRAIL["prediction"], "str",
              "Columns of the outcome and of the model's output."),
    Parameter("protected", REQUIRED, _TRAIL["protected"], "str or list of str",
              "The protected columns; the groups are their intersections."),
)
_COLLECTION_PARAMETERS = (
    Parameter("depth", None, _TRAIL["depth"], "", "As in :func:`summarize_trail`."),
    Parameter("include_all", False, _TRAIL["include_all"], "", "As in :func:`summarize_trail`."),
    Parameter("min_size", 0, _TRAIL["min_size"], "", "As in :func:`summarize_trail`."),
)
_PARTITIONED_BOOTSTRAP = (
    Parameter("bootstrap", "auto", _BOOTSTRAP["bootstrap"], '{"auto", "multinomial", "poisson"}',
              "Multinomial over the atoms (discrete metric) or Poisson in the partitions, as in\n"
              ":func:`summarize_trail`; ``result.bootstrap`` says which ran."),
    Parameter("max_atoms", MAX_ATOMS, _BOOTSTRAP["max_atoms"], "int",
              "The switch of ``\"auto\"``."),
    Parameter("row_key", None, _TRAIL["row_key"], "None, str or list of str",
              "Poisson bootstrap only: what seeds each row's weights."),
    Parameter("n_resamples", 1000, _BOOTSTRAP["n_resamples"], "int", "Bootstrap replicates."),
    Parameter("batch_size", None, _BOOTSTRAP["batch_size"], "int, optional",
              "Replicates per batch (multinomial: as in the in-memory function; Poisson: per\n"
              "block in a partition)."),
    Parameter("memory_limit", DEFAULT_MEMORY_LIMIT, MEMORY_LIMIT,
              'int, float, str or None, default="2GiB"',
              "Memory budget of the bootstrap at the driver, as in the in-memory function."),
    Parameter("random_state", None, _BOOTSTRAP["random_state"],
              "None, int, RandomState, Generator or SeedSequence", "Seed of the bootstrap."),
)
_VERBOSE = Parameter("verbose", 0, _TRAIL["verbose"], "int",
                     "0: silent; otherwise progress bars over the partitions and the bootstrap\n"
                     "replicates (the result is the same).")
_TRAIL_DOC = Parameter(
    "trail", REQUIRED, None,
    "dask.dataframe.DataFrame, pandas.DataFrame or iterable of pandas.DataFrame",
    "The audit trail, one row per prediction (see :func:`summarize_trail`).")
_SUMMARY_ARGUMENTS = ("label", "prediction", "protected", "metric", "target", "pos_label",
                      "depth", "include_all", "min_size", "bootstrap", "max_atoms", "row_key",
                      "n_resamples", "batch_size", "random_state", "verbose")


def partitioned_function(procedure):
    """The partitioned function of a summary procedure: :func:`summarize_trail`, then the
    procedure on the summary.

    Its signature is the procedure's with the trail's columns first, the collection options
    after ``pos_label``, the partitioned bootstrap controls (when the procedure draws
    replicates; no ``n_jobs``: the partitions are the parallelism) and ``verbose``; the
    options of ``procedure.partitioned_fixed`` are fixed.

    Parameters
    ----------
    procedure : Procedure
        A registered procedure with ``compute`` (see
        :func:`skfair_audit.group.register_procedure`).

    Returns
    -------
    callable
    """
    bootstrap_names = set(BOOTSTRAP_CONSTRAINTS)
    options = [p for p in procedure.parameters
               if p.name not in bootstrap_names and p.name not in procedure.partitioned_fixed]
    cut = next((i + 1 for i, p in enumerate(options) if p.name == "pos_label"), len(options))
    parameters = (*_TRAIL_PARAMETERS, *options[:cut], *_COLLECTION_PARAMETERS,
                  *(_PARTITIONED_BOOTSTRAP if procedure.bootstrap else ()), _VERBOSE)
    fixed = dict(procedure.partitioned_fixed)

    def body(trail, **arguments):
        summary = summarize_trail(trail, **{k: arguments[k] for k in _SUMMARY_ARGUMENTS
                                            if k in arguments})
        options = {k: v for k, v in arguments.items() if k not in _SUMMARY_ARGUMENTS}
        if procedure.bootstrap:
            poisson = summary.replicates is not None
            options.update(n_resamples=arguments["n_resamples"],
                           batch_size=None if poisson else arguments["batch_size"],
                           random_state=arguments["random_state"],
                           verbose=arguments["verbose"])
        return procedure.method(summary, **fixed, **options)

    name = f"partitioned_{procedure.function_name}"
    summary = inspect.cleandoc(procedure.summary).rstrip(".")
    return make_function(
        name, positional=["trail"], parameters=parameters, body=body,
        module="skfair_audit.scale._group",
        doc=docstring(
            f"{summary}, on a partitioned audit trail.",
            description=f"""
            :func:`summarize_trail` followed by
            :meth:`AuditSummary.{procedure.function_name}
            <skfair_audit.group.AuditSummary.{procedure.function_name}>`: the audit of
            :func:`skfair_audit.group.{procedure.function_name}` on the intersections of the
            ``protected`` columns. With a discrete metric the result is bit for bit the
            in-memory function on the concatenated rows with the same ``random_state`` and
            ``batch_size`` (multinomial bootstrap over the atoms at the driver); with a
            continuous one, the Poisson bootstrap runs in the partitions (``result.bootstrap``
            says which)."""
            + (f" Fixed here: {', '.join(f'``{k}={v!r}``' for k, v in fixed.items())} (one "
               "pass over the partitions)." if fixed else ""),
            parameters=(_TRAIL_DOC, *parameters), returns=(
                procedure.result.__name__,
                "Groups can be looked up by name or index (row masks need the in-memory "
                "audit)."),
            see_also=("summarize_trail : the summary every procedure runs on.",
                      f"skfair_audit.group.{procedure.function_name} : the in-memory audit."),
            examples=procedure.examples.get("partitioned", "")))


_BUILT = {}


def partitioned(function_name):
    """The partitioned function of the registered procedure whose public function is
    ``function_name`` (built once per declaration).

    Parameters
    ----------
    function_name : str
        E.g. ``"certify_bounds"``.

    Returns
    -------
    callable

    Raises
    ------
    AttributeError
        When no registered summary procedure has that function.
    """
    procedure = procedure_of_function(function_name)
    if procedure is None or not procedure.on_summary:
        raise AttributeError(f"no registered group procedure has a partitioned "
                             f"{function_name!r} (see skfair_audit.group.register_procedure).")
    if _BUILT.get(function_name, (None,))[0] is not procedure:
        _BUILT[function_name] = (procedure, partitioned_function(procedure))
    return _BUILT[function_name][1]


partitioned_certify_bounds = partitioned("certify_bounds")
partitioned_certify_threshold = partitioned("certify_threshold")
partitioned_flag_groups = partitioned("flag_groups")
partitioned_ratio_bounds = partitioned("ratio_bounds")
partitioned_certify_ratio = partitioned("certify_ratio")
partitioned_flag_ratios = partitioned("flag_ratios")

#: The generated functions' examples, collected by ``pytest --doctest-modules``.
__test__ = {f.__name__: f for f in (partitioned_certify_bounds, partitioned_certify_threshold,
                                    partitioned_flag_groups)}
