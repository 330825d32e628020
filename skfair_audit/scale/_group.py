"""Group audits of partitioned audit trails (Dask DataFrames or streams of pandas chunks).

The in-memory audit (:func:`skfair_audit.group.certify_bounds`) compresses the rows to
*atoms* ``(cell, in_reference, value of L)`` and bootstraps multinomial counts over them.
At scale the same atoms are built partition by partition, and the bootstrap is the
**Poisson bootstrap**: every row :math:`r` gets independent weights :math:`w_{rb} \\sim
\\text{Poisson}(1)`, a pure function of a stable row key, the seed and the replicate
(:mod:`skfair_audit.scale._poisson`). Each partition returns

* the row count of every attribute combination (cell) it contains,
* the row count of every atom of its audit sample, and
* for every replicate :math:`b`, the per-atom partial sums :math:`\\sum_{r \\in a} w_{rb}`
  (an ``atoms × B`` integer matrix: small, and independent of the partition's size),

computed in blocks of ``rows × batch_size`` weights. The driver adds the partial sums — they
are integers, so the total is exact whatever the partitioning, the order of the reduction or
the retries — and feeds them to the *same* disparity process, scales and critical value as
the in-memory audit, after normalising each replicate to total mass :math:`n`:

.. math::

    P_n^b = \\frac{\\sum_r w_{rb}\\, \\delta_{Z_r}}{\\sum_r w_{rb}}, \\qquad
    c = Q_{1-\\alpha}\\Big(\\sup_G T_b(G) / s_G\\Big).

The Poisson and multinomial bootstraps are asymptotically equivalent (the multinomial is the
Poisson conditioned on :math:`\\sum_r w_{rb} = n`); ``benchmarks/bench_scale_dask.py``
checks that their bounds agree within Monte Carlo error.

References
----------
Chamandy, N., Muralidharan, O., Najmi, A. and Naidu, S. (2012). Estimating uncertainty for
massive data streams. Google technical report.
Cherian, J. J. and Candès, E. J. (2024). Statistical inference for fairness auditing.
JMLR 25(149).
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from .._resampling import seed_sequence
from ..group._bootstrap import (
    DisparityProcess,
    SufficientStatistics,
    compute_scales,
)
from ..group._collections import GroupCollection, intersections
from ..group._procedures import (
    AuditSummary,
    _check_choice,
    _check_scale_params,
    _resolve_metric,
    _warn_if_degenerate,
    bounds_result,
    check_flag_params,
    flag_result,
    group_summary,
    null_standard_errors,
)
from ..group._results import GroupBoundsResult, GroupFlagResult
from ..utils import check_alpha, import_optional
from ._poisson import fill_poisson_weights, row_states

__all__ = [
    "PartitionSummary",
    "summarize_partition",
    "summarize_trail",
    "poisson_suprema",
    "partitioned_certify_bounds",
    "partitioned_flag_groups",
]

#: Weights computed at once inside a partition (rows × replicates, int8): 128 KiB, cache sized.
BLOCK_ELEMENTS = 2**17


@dataclass(frozen=True)
class _Spec:
    """What every partition needs (small and picklable)."""

    label: str
    prediction: str
    attributes: tuple
    metric: object
    row_key: object
    seed: int
    n_resamples: int
    batch_size: int


@dataclass(frozen=True, eq=False)
class PartitionSummary:
    """Sufficient statistics of one or more partitions of an audit trail.

    Attributes
    ----------
    n_rows : int
        Rows summarised.
    cells : dict
        ``{attribute tuple: rows}`` over all rows (the group collection is built from them).
    atoms : dict
        ``{(attribute tuple, value of L): position}`` over the audit-sample rows.
    counts : ndarray of int64, shape (n_atoms,)
        Rows of each atom.
    replicates : ndarray of int64, shape (n_atoms, n_resamples)
        Sum of the Poisson weights of each atom's rows, per replicate.
    categories : tuple
        Per attribute, the categories of a pandas categorical column (else ``None``).
    index_ranges : tuple of (int, int)
        ``[start, stop)`` of partitions keyed by a unit-step ``RangeIndex`` (to detect
        partitions whose index restarts at 0, which would repeat row keys).
    """

    n_rows: int
    cells: dict
    atoms: dict
    counts: np.ndarray
    replicates: np.ndarray
    categories: tuple
    index_ranges: tuple

    @classmethod
    def merge(cls, *summaries) -> PartitionSummary:
        """Add summaries (exactly: every sum is an integer)."""
        summaries = [s for s in summaries if s is not None]
        if not summaries:
            raise ValueError("nothing to merge.")
        if len(summaries) == 1:
            return summaries[0]
        cells, atoms, width = {}, {}, summaries[0].replicates.shape[1]
        for s in summaries:
            for key, rows in s.cells.items():
                cells[key] = cells.get(key, 0) + rows
            for key in s.atoms:
                atoms.setdefault(key, len(atoms))
        counts = np.zeros(len(atoms), dtype=np.int64)
        replicates = np.zeros((len(atoms), width), dtype=np.int64)
        for s in summaries:
            if s.replicates.shape[1] != width:
                raise ValueError("summaries with different numbers of replicates.")
            where = np.fromiter((atoms[key] for key in s.atoms), dtype=np.intp,
                                count=len(s.atoms))
            counts[where] += s.counts
            replicates[where] += s.replicates
        categories = next((s.categories for s in summaries if s.n_rows), summaries[0].categories)
        return cls(
            n_rows=sum(s.n_rows for s in summaries), cells=cells, atoms=atoms, counts=counts,
            replicates=replicates, categories=categories,
            index_ranges=tuple(r for s in summaries for r in s.index_ranges),
        )


def _empty_summary(n_attributes, n_resamples):
    return PartitionSummary(0, {}, {}, np.zeros(0, np.int64),
                            np.zeros((0, n_resamples), np.int64), (None,) * n_attributes, ())


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


def _codes(column, pd):
    """(codes, python values) of one attribute column of a partition."""
    codes, uniques = pd.factorize(column, sort=False)
    return codes.astype(np.int64), np.asarray(uniques, dtype=object).tolist()


def summarize_partition(frame, spec) -> PartitionSummary:
    """Summarise one pandas partition (a task of the Dask graph).

    Parameters
    ----------
    frame : pandas.DataFrame
    spec : _Spec

    Returns
    -------
    PartitionSummary
    """
    pd = import_optional("pandas", "audit a partitioned trail")
    needed = [spec.label, spec.prediction, *spec.attributes]
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise ValueError(f"columns {missing} are not in the audit trail.")
    n = len(frame)
    if n == 0:
        return _empty_summary(len(spec.attributes), spec.n_resamples)
    attrs = [frame[a] for a in spec.attributes]
    for name, col in zip(spec.attributes, attrs, strict=True):
        if col.isna().any():
            raise ValueError(
                f"attribute {name!r} contains NaN/None values; drop or impute them before "
                "auditing."
            )
    categories = tuple(
        tuple(col.cat.categories.tolist()) if isinstance(col.dtype, pd.CategoricalDtype)
        else None
        for col in attrs
    )
    values, rows = spec.metric.evaluate(frame[spec.label].to_numpy(),
                                        frame[spec.prediction].to_numpy())
    # cells: mixed-radix code of the attribute levels present in this partition
    cell_code = np.zeros(n, dtype=np.int64)
    levels = []
    for col in attrs:
        codes, uniques = _codes(col, pd)
        cell_code = cell_code * len(uniques) + codes
        levels.append(uniques)
    cell_ids, cell_of_row, cell_rows = np.unique(cell_code, return_inverse=True,
                                                 return_counts=True)
    cell_keys = []
    for code in cell_ids.tolist():
        parts = []
        for uniques in reversed(levels):
            code, c = divmod(code, len(uniques))
            parts.append(uniques[c])
        cell_keys.append(tuple(reversed(parts)))
    cells = dict(zip(cell_keys, cell_rows.tolist(), strict=True))

    index_ranges = ()
    if spec.row_key is None and isinstance(frame.index, pd.RangeIndex) and frame.index.step == 1:
        index_ranges = ((int(frame.index.start), int(frame.index.stop)),)

    sample = np.flatnonzero(rows)
    if sample.size == 0:
        return PartitionSummary(n, cells, {}, np.zeros(0, np.int64),
                                np.zeros((0, spec.n_resamples), np.int64), categories,
                                index_ranges)
    value_ids, value_of_row = np.unique(values[sample], return_inverse=True)
    atom_code = cell_of_row[sample] * value_ids.size + value_of_row.ravel()
    atom_ids, atom_of_row, counts = np.unique(atom_code, return_inverse=True,
                                              return_counts=True)
    atom_of_row = atom_of_row.ravel()
    atoms = {
        (cell_keys[code // value_ids.size], float(value_ids[code % value_ids.size])): k
        for k, code in enumerate(atom_ids.tolist())
    }
    replicates = np.zeros((atom_ids.size, spec.n_resamples), dtype=np.int64)
    if spec.n_resamples:
        keys = _row_key_words(frame, spec.row_key, pd)[sample]
        if np.unique(keys).size != keys.size:
            raise ValueError(
                "row keys repeat within a partition: the Poisson weights of rows with the same "
                "key would be identical. Pass row_key= a unique id column (or columns)."
            )
        order = np.argsort(atom_of_row, kind="stable")
        _accumulate(row_states(keys[order], spec.seed), atom_of_row[order], replicates,
                    spec.batch_size)
    return PartitionSummary(n, cells, atoms, counts.astype(np.int64), replicates, categories,
                            index_ranges)


def _accumulate(states, atom_sorted, replicates, batch_size):
    """``replicates[a, b] += sum of w[r, b] over rows r of atom a``, block by block.

    Memory: three buffers of ``block_rows × batch_size`` (int8 weights and two uint64 hash
    words), allocated once, whatever the partition size and the number of replicates.
    """
    n_resamples = replicates.shape[1]
    block_rows = max(256, BLOCK_ELEMENTS // batch_size)
    size = min(block_rows, states.size) * batch_size
    weights_buf = np.empty(size, dtype=np.int8)
    z_buf, work_buf = np.empty(size, dtype=np.uint64), np.empty(size, dtype=np.uint64)
    for r0 in range(0, states.size, block_rows):
        block = states[r0:r0 + block_rows]
        atoms = atom_sorted[r0:r0 + block_rows]
        starts = np.flatnonzero(np.r_[True, atoms[1:] != atoms[:-1]])
        present = atoms[starts]
        ends = np.r_[starts[1:], atoms.size]
        for b0 in range(0, n_resamples, batch_size):
            b1 = min(b0 + batch_size, n_resamples)
            shape = (block.size, b1 - b0)
            cells = shape[0] * shape[1]
            weights = fill_poisson_weights(
                block, b0, weights_buf[:cells].reshape(shape), z_buf[:cells].reshape(shape),
                work_buf[:cells].reshape(shape),
            )
            if starts.size <= 64:
                # per-atom sums without temporaries (reduceat allocates a cast copy)
                for atom, a, b in zip(present, starts, ends, strict=True):
                    replicates[atom, b0:b1] += weights[a:b].sum(axis=0, dtype=np.int64)
            else:
                replicates[present, b0:b1] += np.add.reduceat(weights, starts, axis=0,
                                                              dtype=np.int64)


def _merge_all(*summaries):
    return PartitionSummary.merge(*summaries)


def _is_dask_frame(trail):
    return hasattr(trail, "to_delayed") and hasattr(trail, "npartitions")


def summarize_trail(trail, spec, *, fan_in=8) -> PartitionSummary:
    """Summarise a Dask DataFrame (tree reduction on the active scheduler), a pandas
    DataFrame, or an iterable of pandas DataFrames (one chunk in memory at a time)."""
    if _is_dask_frame(trail):
        dask = import_optional("dask", "audit a Dask DataFrame")
        missing = [c for c in (spec.label, spec.prediction, *spec.attributes)
                   if c not in trail.columns]
        if missing:
            raise ValueError(f"columns {missing} are not in the audit trail.")
        summarize = dask.delayed(summarize_partition, pure=True)
        merge = dask.delayed(_merge_all, pure=True)
        level = [summarize(part, spec) for part in trail.to_delayed()]
        while len(level) > 1:
            level = [merge(*level[i:i + fan_in]) for i in range(0, len(level), fan_in)]
        return dask.compute(level[0])[0]
    if hasattr(trail, "columns") and hasattr(trail, "index"):
        trail = [trail]
    if not isinstance(trail, Iterable):
        raise ValueError(
            "trail must be a dask DataFrame, a pandas DataFrame or an iterable of pandas "
            f"DataFrames, got {type(trail).__name__}."
        )
    total = None
    for chunk in trail:
        part = summarize_partition(chunk, spec)
        total = part if total is None else PartitionSummary.merge(total, part)
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


@dataclass(frozen=True, eq=False)
class _PartitionedAudit(AuditSummary):
    """The driver-side audit summary, with the Poisson replicates summed over partitions."""

    replicates: np.ndarray = None  # (n_atoms, n_resamples), atoms in ``stats`` order


def _collection(summary, attributes, depth, include_all, min_size, pd):
    keys = list(summary.cells)
    if not keys:
        raise ValueError("the audit trail has no rows.")
    table = pd.DataFrame(keys, columns=list(attributes))
    for name, cats in zip(attributes, summary.categories, strict=True):
        if cats is not None:
            table[name] = pd.Categorical(table[name], categories=list(cats))
    collection = intersections(table, depth=depth, include_all=include_all)
    rows_per_cell = np.bincount(collection.cell_of_row,
                                weights=np.fromiter(summary.cells.values(), float, len(keys)),
                                minlength=collection.n_cells)
    if min_size:
        sizes = collection.group_sums(rows_per_cell).round()
        keep = sizes >= min_size
        collection = GroupCollection(
            names=tuple(n for n, k in zip(collection.names, keep, strict=True) if k),
            kind=collection.kind, cell_of_row=collection.cell_of_row,
            cell_membership=collection.cell_membership[:, keep],
            empty_groups=collection.empty_groups,
            duplicate_groups=collection.duplicate_groups,
            small_groups=tuple(n for n, k in zip(collection.names, keep, strict=True) if not k),
        )
        if collection.n_groups == 0:
            raise ValueError("the group collection is empty (every group was dropped).")
    cell_of_key = dict(zip(keys, collection.cell_of_row.tolist(), strict=True))
    return collection, cell_of_key


def _assemble(summary, spec, target, depth, include_all, min_size):
    """Driver: the collection, the atoms in the in-memory order and the observed quantities."""
    pd = import_optional("pandas", "audit a partitioned trail")
    if spec.row_key is None:
        _check_index_ranges(summary.index_ranges)
    collection, cell_of_key = _collection(summary, spec.attributes, depth, include_all,
                                          min_size, pd)
    if not summary.atoms:
        raise ValueError(f"no row satisfies the condition of metric {spec.metric.name!r}.")
    atom_cell = np.fromiter((cell_of_key[c] for c, _ in summary.atoms), np.intp,
                            len(summary.atoms))
    atom_value = np.fromiter((v for _, v in summary.atoms), float, len(summary.atoms))
    counts = summary.counts
    if isinstance(target, numbers.Real) and not isinstance(target, bool):
        if not np.isfinite(target):
            raise ValueError(f"a constant target must be finite, got {target!r}.")
        kind, reference = "constant", np.zeros(atom_cell.size, dtype=bool)
    elif isinstance(target, str) and target == "overall":
        kind, reference = "overall", np.zeros(atom_cell.size, dtype=bool)
    elif isinstance(target, str):
        try:
            j = collection.index(target)
        except KeyError:
            raise ValueError(
                f"target {target!r} is neither 'overall', a number nor a group of the "
                "collection (row masks are not available for partitioned trails)."
            ) from None
        kind, reference = "reference", collection.cell_membership[atom_cell, j]
        if not counts[reference].any():
            raise ValueError(
                "the reference group has no row in the audit sample (rows where the "
                f"condition of {spec.metric.name!r} holds): its metric is undefined."
            )
    else:
        raise ValueError(
            "target must be a number, 'overall' or a group name for a partitioned trail."
        )
    # the in-memory atom order: sorted by (cell, in_reference, value)
    keys = np.column_stack([atom_cell.astype(float), reference.astype(float), atom_value])
    order = np.lexsort(keys.T[::-1])
    stats = SufficientStatistics(
        atom_cell=atom_cell[order], atom_value=atom_value[order],
        atom_reference=reference[order], atom_count=counts[order].astype(np.int64),
        row_atom=np.zeros(0, dtype=np.intp), n_cells=collection.n_cells,
    )
    n = stats.n
    total = stats.atom_count.astype(float)
    if kind == "constant":
        theta_hat = float(target)
    elif kind == "overall":
        theta_hat = float(total @ stats.atom_value / n)
    else:
        ref = total * stats.atom_reference
        theta_hat = float(ref @ stats.atom_value / ref.sum())
    sizes, group_values, empty = group_summary(stats, collection)
    return _PartitionedAudit(spec.metric, collection, stats, kind, theta_hat, sizes,
                             group_values, group_values - theta_hat, empty,
                             replicates=summary.replicates[order])


def poisson_suprema(process, replicates, *, batch_size=256):
    """Suprema of ``process`` over Poisson replicates, each normalised to total mass ``n``.

    Parameters
    ----------
    process : DisparityProcess
    replicates : ndarray of shape (n_atoms, n_resamples)
        Summed Poisson weights per atom (atoms in ``process.stats`` order).

    Returns
    -------
    ndarray of shape (n_resamples, 2)
    """
    n = process.stats.n
    out = []
    for b0 in range(0, replicates.shape[1], batch_size):
        counts = replicates[:, b0:b0 + batch_size].T.astype(float)
        total = counts.sum(axis=1, keepdims=True)
        # a replicate with no weight at all (probability e^{-n}) keeps the observed sample
        counts = np.where(total > 0, counts * (n / np.where(total > 0, total, 1.0)),
                          process.stats.atom_count)
        out.append(process(counts))
    return np.concatenate(out, axis=0)


def _seed(random_state) -> int:
    return int(seed_sequence(random_state).generate_state(1, dtype=np.uint64)[0])


def _check_columns(label, prediction, attributes):
    if isinstance(attributes, str):
        attributes = [attributes]
    attributes = tuple(attributes)
    if not attributes:
        raise ValueError("at least one attribute is needed.")
    for name, value in (("label", label), ("prediction", prediction)):
        if not isinstance(value, str):
            raise ValueError(f"{name} must be a column name, got {value!r}.")
    return attributes


def _check_batch(batch_size, n_resamples):
    if not isinstance(n_resamples, numbers.Integral) or n_resamples < 1:
        raise ValueError(f"n_resamples must be a positive integer, got {n_resamples!r}.")
    if batch_size is None:
        return int(min(n_resamples, 64))
    if not isinstance(batch_size, numbers.Integral) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}.")
    return int(min(batch_size, n_resamples))


def partitioned_certify_bounds(
    trail,
    *,
    label,
    prediction,
    attributes,
    metric,
    target="overall",
    alternative="lower",
    alpha=0.1,
    scale="rescaled",
    p_star=0.01,
    w0=np.inf,
    pos_label=None,
    depth=None,
    include_all=False,
    min_size=0,
    row_key=None,
    n_resamples=1000,
    batch_size=None,
    random_state=None,
) -> GroupBoundsResult:
    """Simultaneous bounds on group disparities of a partitioned audit trail (Poisson bootstrap).

    The same audit as :func:`skfair_audit.group.certify_bounds` on the intersections of
    ``attributes``, with the multinomial bootstrap replaced by the Poisson bootstrap, so that
    every partition works alone: the critical value is
    :math:`c = Q_{1-\\alpha}(\\sup_G T_b(G)/s_G)` over replicates
    :math:`P_n^b = \\sum_r w_{rb}\\delta_{Z_r} / \\sum_r w_{rb}` with
    :math:`w_{rb} \\sim \\text{Poisson}(1)` a pure function of (row key, seed, b), and

    .. math::

        \\epsilon(G) \\ge \\hat\\epsilon(G) - c\\, \\frac{s_G}{P_n(G)^2}
        \\quad\\text{for all } G \\text{ simultaneously, w.p.} \\to 1 - \\alpha.

    Point estimates, sizes, scales and group names are exactly those of
    ``certify_bounds``; the result does not depend on how the rows are partitioned,
    ordered, scheduled or retried.

    Parameters
    ----------
    trail : dask.dataframe.DataFrame, pandas.DataFrame or iterable of pandas.DataFrame
        The audit trail, one row per prediction. A Dask DataFrame is reduced on the active
        scheduler (e.g. a ``dask.distributed.Client``); an iterable (e.g. Parquet row groups)
        is read one chunk at a time.
    label, prediction : str
        Columns of the outcome and of the model's output.
    attributes : list of str
        Sensitive attribute columns; the groups are their intersections (as
        :func:`~skfair_audit.group.intersections` with ``depth``, ``include_all``,
        ``min_size``).
    metric : str, Metric or callable
        See :func:`~skfair_audit.group.get_metric`. The number of atoms grows with the number
        of distinct values of :math:`L`: use a discrete metric (rates, error, coverage ...).
    target : float, "overall" or str
        Known constant, the overall metric, or the name of a reference group.
    alternative, alpha, scale, p_star, w0, pos_label
        As in :func:`~skfair_audit.group.certify_bounds`.
    row_key : None, str or list of str
        What seeds each row's weights. ``None`` uses the index (Dask keeps it through
        ``repartition``; partitions whose ``RangeIndex`` restarts at 0 are refused); a column
        name (or names) uses a unique id, the safest choice for files. Keys must be unique:
        rows with the same key get the same weights.
    n_resamples : int
        Bootstrap replicates B.
    batch_size : int, optional
        Replicates computed at once inside a partition (default ``min(B, 64)``); a partition
        holds ``max(256, 2**17 / batch_size) × batch_size`` weights at a time.
    random_state : None, int, RandomState, Generator or SeedSequence
        Seed of the hash (``None``: fresh entropy, drawn once on the driver).

    Returns
    -------
    GroupBoundsResult
        Groups can be looked up by name or index (row masks need the in-memory audit).

    See Also
    --------
    skfair_audit.group.certify_bounds : the in-memory audit (multinomial bootstrap).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> n = 4000
    >>> trail = pd.DataFrame({"sex": rng.choice(["F", "M"], n), "y": rng.integers(0, 2, n)})
    >>> trail["y_pred"] = np.where(rng.random(n) < 0.8, trail.y, 1 - trail.y)
    >>> chunks = [trail.iloc[i:i + 1000] for i in range(0, n, 1000)]
    >>> res = partitioned_certify_bounds(chunks, label="y", prediction="y_pred",
    ...                                  attributes=["sex"], metric="error_rate",
    ...                                  alternative="two-sided", n_resamples=200,
    ...                                  random_state=0)
    >>> res.names
    ('sex=F', 'sex=M')
    >>> one = partitioned_certify_bounds(trail, label="y", prediction="y_pred",
    ...                                  attributes=["sex"], metric="error_rate",
    ...                                  alternative="two-sided", n_resamples=200,
    ...                                  random_state=0)
    >>> bool(one.critical_value == res.critical_value)   # partitioning does not matter
    True
    """
    alpha = check_alpha(alpha)
    _check_choice(alternative, "alternative", ("lower", "upper", "two-sided"))
    p_star, w0 = _check_scale_params(scale, p_star, w0)
    attributes = _check_columns(label, prediction, attributes)
    batch_size = _check_batch(batch_size, n_resamples)
    spec = _Spec(label, prediction, attributes, _resolve_metric(metric, pos_label), row_key,
                 _seed(random_state), int(n_resamples), batch_size)
    audit = _assemble(summarize_trail(trail, spec), spec, target, depth, include_all,
                      min_size)
    scales, degenerate = compute_scales(audit.stats, audit.groups, kind=scale, p_star=p_star,
                                        w0=w0, power=1.5)
    process = DisparityProcess(audit.stats, audit.groups, audit.target_kind, audit.theta_hat,
                               False, (0.0, 0.0), scales, audit.active)
    sups = poisson_suprema(process, audit.replicates)
    _warn_if_degenerate(degenerate, audit)
    return bounds_result(
        audit, scales, sups, alpha=alpha, alternative=alternative, scale=scale,
        method=f"Poisson bootstrap (row-key hashed weights) of the {scale} disparity process "
               f"({n_resamples} resamples, target {audit.target_kind})",
    )


def partitioned_flag_groups(
    trail,
    *,
    label,
    prediction,
    attributes,
    metric,
    target="overall",
    epsilon0=0.0,
    alternative="greater",
    q=0.1,
    pos_label=None,
    depth=None,
    include_all=False,
    min_size=0,
) -> GroupFlagResult:
    """Benjamini–Hochberg flagging of a partitioned audit trail (delta-method p-values).

    Exactly :func:`skfair_audit.group.flag_groups` with ``se="delta"``: the null-centred
    delta-method standard errors only need the per-atom counts, one pass over the
    partitions without any bootstrap.

    Parameters
    ----------
    trail, label, prediction, attributes, metric, target, pos_label, depth, include_all, \
min_size
        As in :func:`partitioned_certify_bounds`.
    epsilon0, alternative, q
        As in :func:`~skfair_audit.group.flag_groups`.

    Returns
    -------
    GroupFlagResult

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> g = rng.choice(["a", "b", "c"], 3000)
    >>> trail = pd.DataFrame({"g": g, "y": 0,
    ...                       "y_pred": (rng.random(3000) < np.where(g == "c", 0.3, 0.1))})
    >>> trail["y_pred"] = trail.y_pred.astype(int)
    >>> res = partitioned_flag_groups([trail.iloc[:1500], trail.iloc[1500:]], label="y",
    ...                               prediction="y_pred", attributes=["g"], metric="fpr",
    ...                               epsilon0=0.02)
    >>> res.flagged.tolist()
    [False, False, True]
    """
    q, epsilon0 = check_flag_params(q, alternative, epsilon0)
    attributes = _check_columns(label, prediction, attributes)
    spec = _Spec(label, prediction, attributes, _resolve_metric(metric, pos_label), None, 0,
                 0, 1)
    audit = _assemble(summarize_trail(trail, spec), spec, target, depth, include_all,
                      min_size)
    std = null_standard_errors(audit, epsilon0, alternative)
    return flag_result(audit, std, epsilon0=epsilon0, alternative=alternative, q=q,
                       se_method="delta")

