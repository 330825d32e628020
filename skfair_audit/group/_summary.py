"""Audit summaries: the one seam between an audit trail and every group procedure.

A group procedure never needs the rows, only their **atoms**: the distinct combinations of
(cell of the group collection, membership of the reference group, value of the metric
:math:`L`) with their counts, plus the rows of every cell. Two objects carry them:

:class:`TrailSummary`
    The counts of (part of) an audit trail keyed by the *levels* of the sensitive features:
    cells (combinations of levels) with their rows, and atoms (cell, value of :math:`L`) with
    their counts. Two trail summaries **add up exactly** (:meth:`TrailSummary.merge`: every
    count is an integer), whatever the partitioning, the order or the retries — this is what
    a partition of a Dask DataFrame sends (:mod:`skfair_audit.scale`).
:class:`AuditSummary`
    The finished summary: the group collection, the atoms, the target :math:`\\hat\\theta`,
    the per-group sizes and estimates. Built in memory from the rows
    (:meth:`AuditSummary.from_rows`) or from a merged trail summary
    (:meth:`AuditSummary.from_trail`), through the same code. Every procedure runs on it:
    :meth:`~AuditSummary.certify_bounds`, :meth:`~AuditSummary.certify_threshold`,
    :meth:`~AuditSummary.flag_groups`; the bootstrap draws multinomial counts over its atoms,
    so the partitioned audit of a discrete metric is **bit for bit** the in-memory one.

When the metric is continuous there are about as many atoms as rows; a trail summary then
keeps only per-cell moments (rows, :math:`\\sum L`, :math:`\\sum L^2`) and the partitions
send per-cell sums of Poisson row weights instead (the Poisson bootstrap,
:class:`~skfair_audit.group._bootstrap.PoissonReplicates`).
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from .._resampling import MEMORY_LIMIT
from .._utils import (
    ARRAY_LIKE,
    N_JOBS,
    POSITIVE_INT,
    RANDOM_STATE,
    VERBOSE,
    Interval,
    Options,
    compact_codes,
    encode_categories,
    sorted_levels,
    user_stacklevel,
)
from ._bootstrap import DegenerateBootstrapWarning, PoissonReplicates, SufficientStatistics
from ._collections import (
    GroupCollection,
    _columns,
    count_keys,
    encode_columns,
    intersection_groups,
    masks,
    mixed_radix,
    unravel,
)
from ._metrics import BINARY_METRICS, Metric, as_array, get_metric

#: Above this many distinct atoms a partitioned trail switches to the Poisson bootstrap.
MAX_ATOMS = 1 << 18

#: Default ``alternative`` of every procedure: the functions, the estimator and the command
#: line all read it from here.
DEFAULT_ALTERNATIVES = {"bounds": "two-sided", "threshold": "greater", "flag": "greater"}

ALTERNATIVES = {
    "bounds": ("lower", "upper", "two-sided"),
    "threshold": ("greater", "less", "within"),
    "flag": ("greater", "less", "two-sided"),
}

#: Bootstrap controls shared by the procedures.
BOOTSTRAP_CONSTRAINTS = {
    "n_resamples": [None, POSITIVE_INT],
    "batch_size": [None, POSITIVE_INT],
    "memory_limit": MEMORY_LIMIT,
    "random_state": [RANDOM_STATE],
    "n_jobs": N_JOBS,
    "verbose": VERBOSE,
}
SCALE_CONSTRAINTS = {
    "scale": [Options(("rescaled", "unscaled"))],
    "p_star": [Interval("real", 0, 1)],
    "w0": [Interval("real", 0, None, closed="right", allow_inf=True)],
}
TARGET = [Interval("real"), Options(("overall",)), ARRAY_LIKE]
FINITE = [Interval("real")]


def resolve_metric(metric, pos_label=None) -> Metric:
    """The :class:`Metric` of a name (with ``pos_label``), a Metric or a callable."""
    if isinstance(metric, str) and pos_label is not None:
        return get_metric(metric, pos_label=pos_label)
    if pos_label is not None:
        raise ValueError("pos_label can only be combined with a metric given by name.")
    return get_metric(metric)


def _value_codes(values, rows):
    """Codes of :math:`L` on every row (rows off the condition get an arbitrary code)."""
    if values.dtype == bool:
        return values.view(np.int8), np.array([0.0, 1.0])
    if rows is not None and not rows.all():
        fill = values[rows][0] if rows.any() else 0.0
        values = np.where(rows, values, fill)
    codes, levels = encode_categories(values, "the metric values")
    return codes, np.asarray(levels, dtype=float)


def count_atoms(codes, radices, values, rows=None, reference=None, *, keep_rows=False):
    """The one pass over the rows: cells of every row and atoms of the audit sample.

    Parameters
    ----------
    codes : list of ndarray
        Integer codes of the rows, one array per categorical column; ``radices`` gives the
        number of levels of each (the cells are their combinations, in lexicographic order).
    values : ndarray of bool or float
        :math:`L` per row (:meth:`Metric.row_values`).
    rows : ndarray of bool, optional
        The audit sample (the metric's condition); default every row.
    reference : ndarray of bool, optional
        Rows of a reference group given as a mask.
    keep_rows : bool
        Also return, per row, its cell and atom (compact integer arrays).

    Returns
    -------
    dict
        ``cell_keys`` (sorted cell numbers in mixed radix), ``cell_rows``, ``atom_cell``
        (index into ``cell_keys``), ``atom_reference``, ``atom_value``, ``atom_count`` and,
        with ``keep_rows``, ``cell_of_row`` and ``row_atom`` (-1 off the audit sample).
    """
    n = codes[0].size
    value_codes, value_levels = _value_codes(values, rows)
    n_values = value_levels.size
    width = 2 * n_values + 1  # (reference, value) in the sample, or "not in the sample"
    n_cell_keys = math.prod(radices)
    if float(n_cell_keys) * width >= 2.0**62:
        raise ValueError(
            f"the sensitive features have too many level combinations ({n_cell_keys:.3g}); "
            "audit fewer attributes at once or bin the many-level ones."
        )

    def key(start, stop):
        k = mixed_radix(codes, radices, start, stop) * width
        slot = value_codes[start:stop].astype(np.int64)
        if reference is not None:
            slot += n_values * reference[start:stop]
        if rows is not None:
            slot[~rows[start:stop]] = 2 * n_values
        return k + slot

    keys, counts, row_key = count_keys(key, n, n_cell_keys * width, keep_rows=keep_rows)
    cell_key, slot = np.divmod(keys, width)
    cell_keys, key_cell = np.unique(cell_key, return_inverse=True)
    key_cell = key_cell.ravel()
    in_sample = slot < 2 * n_values
    out = {
        "cell_keys": cell_keys,
        "cell_rows": np.bincount(key_cell, counts, minlength=cell_keys.size).round().astype(
            np.int64),
        "atom_cell": key_cell[in_sample],
        "atom_reference": slot[in_sample] >= n_values,
        "atom_value": value_levels[slot[in_sample] % n_values],
        "atom_count": counts[in_sample],
    }
    if keep_rows:
        out["cell_of_row"] = compact_codes(key_cell, cell_keys.size)[row_key]
        atom_of_key = np.full(keys.size, -1, dtype=np.int64)
        atom_of_key[in_sample] = np.arange(int(in_sample.sum()))
        out["row_atom"] = compact_codes(atom_of_key, int(in_sample.sum()))[row_key]
    return out


def _union_levels(parts, j):
    """Levels of column ``j`` over all parts: shared categories, or sorted observed values."""
    categorical = [p.categorical[j] for p in parts]
    first = parts[0].levels[j]
    if all(categorical) and all(p.levels[j] == first for p in parts):
        return first, True
    observed = set()
    for p in parts:
        used = np.unique(p.cell_codes[:, j]) if p.cell_codes.size else []
        observed.update(p.levels[j][k] for k in used)
    return tuple(sorted_levels(observed)), False


@dataclass(frozen=True, eq=False)
class TrailSummary:
    """Mergeable counts of (part of) an audit trail, keyed by the levels of its features.

    Build one per partition with :meth:`from_frame` and add them with :meth:`merge`; then
    :meth:`AuditSummary.from_trail` gives the audit summary every procedure runs on. All
    counts are integers, so the merged summary does not depend on how the rows were
    partitioned, ordered or scheduled.

    Attributes
    ----------
    columns : tuple of str
        The protected (sensitive) columns.
    levels : tuple of tuple
        Levels of every column: its categories (pandas categorical) or its observed values,
        sorted.
    categorical : tuple of bool
        Whether the levels of a column are declared categories (unused ones included).
    cell_codes : ndarray of int64, shape (n_cells, n_columns)
        Observed combinations of level codes, in lexicographic order.
    cell_rows : ndarray of int64, shape (n_cells,)
        Rows of every combination.
    atom_cell, atom_value, atom_count : ndarray of shape (n_atoms,)
        Atoms of the audit sample: cell, value of :math:`L` and rows, sorted by (cell, value).
    moments : ndarray of shape (3, n_cells) or None
        Rows, :math:`\\sum L`, :math:`\\sum L^2` of the audit sample per cell, kept instead of
        the atoms when they exceed ``max_atoms`` (a continuous metric).
    n_rows : int
    replicates : tuple of ndarray or None
        Per-cell sums ``(weights, weighted)`` of Poisson row weights, shape
        ``(n_resamples, n_cells)`` each (the Poisson pass of a continuous metric).
    max_atoms : int
    label_levels : (tuple, tuple)
        Distinct values of the label and the prediction columns (1-D ones): the labels are
        checked on the whole trail at the driver, as the in-memory audit checks them.
    """

    columns: tuple
    levels: tuple
    categorical: tuple
    cell_codes: np.ndarray
    cell_rows: np.ndarray
    atom_cell: np.ndarray
    atom_value: np.ndarray
    atom_count: np.ndarray
    moments: np.ndarray | None
    n_rows: int
    replicates: tuple | None = None
    max_atoms: int = MAX_ATOMS
    label_levels: tuple = ((), ())

    @property
    def has_atoms(self) -> bool:
        """Whether the atoms are kept (else only the moments)."""
        return self.moments is None

    @property
    def n_atoms(self) -> int:
        return self.atom_count.size

    @classmethod
    def from_frame(cls, frame, *, label, prediction, protected, metric, max_atoms=MAX_ATOMS,
                   keep_rows=False):
        """Counts of the rows of one pandas DataFrame (e.g. a partition).

        Parameters
        ----------
        frame : pandas.DataFrame
        label, prediction : str
            Columns of the outcome and of the model's output.
        protected : sequence of str
            The protected columns; their intersections are the groups.
        metric : Metric
        max_atoms : int
            Above this many atoms only the per-cell moments are kept.
        keep_rows : bool
            Also return the cell and the value of every row (for the Poisson pass).

        Returns
        -------
        TrailSummary
            With ``keep_rows``: ``(summary, cell_of_row, values, rows)``.
        """
        needed = [label, prediction, *protected]
        missing = [c for c in needed if c not in frame.columns]
        if missing:
            raise ValueError(f"columns {missing} are not in the audit trail.")
        protected = tuple(protected)
        categorical = tuple(hasattr(frame[c], "cat") for c in protected)
        if len(frame) == 0:
            levels = tuple(tuple(frame[c].cat.categories.tolist()) if cat else ()
                           for c, cat in zip(protected, categorical, strict=True))
            empty = cls._empty(protected, levels, categorical, max_atoms)
            return (empty, np.zeros(0, np.intp), np.zeros(0), np.zeros(0, bool)) if (
                keep_rows) else empty
        codes, levels = encode_columns({c: frame[c] for c in protected})
        y, y_pred = frame[label].to_numpy(), frame[prediction].to_numpy()
        values, rows = metric.row_values(y, y_pred)
        label_levels = ((), ())
        if metric.name in BINARY_METRICS:  # labels on both sides: few distinct values
            label_levels = tuple(tuple(encode_categories(v, name)[1])
                                 for v, name in ((y, label), (y_pred, prediction)))
        radices = [max(len(lv), 1) for lv in levels]
        counted = count_atoms(codes, radices, values, rows, keep_rows=keep_rows)
        summary = cls(
            columns=protected, levels=tuple(tuple(lv) for lv in levels),
            categorical=categorical, cell_codes=unravel(counted["cell_keys"], radices),
            cell_rows=counted["cell_rows"], atom_cell=counted["atom_cell"],
            atom_value=counted["atom_value"], atom_count=counted["atom_count"], moments=None,
            n_rows=len(frame), max_atoms=max_atoms, label_levels=label_levels,
        )._limit()
        if keep_rows:
            return summary, counted["cell_of_row"], values, rows
        return summary

    @classmethod
    def _empty(cls, columns, levels, categorical, max_atoms):
        z = np.zeros(0, dtype=np.int64)
        return cls(tuple(columns), tuple(levels), tuple(categorical),
                   np.zeros((0, len(columns)), np.int64), z, z.astype(np.intp), z.astype(float),
                   z, None, 0, max_atoms=max_atoms, label_levels=((), ()))

    def _limit(self):
        """Drop the atoms for the per-cell moments when there are too many of them."""
        if not self.has_atoms or self.n_atoms <= self.max_atoms:
            return self
        return self._with(moments=self._moments(), atom_cell=np.zeros(0, np.intp),
                          atom_value=np.zeros(0), atom_count=np.zeros(0, np.int64))

    def _moments(self):
        if not self.has_atoms:
            return self.moments
        n_cells = self.cell_rows.size
        w = self.atom_count.astype(float)
        return np.stack([np.bincount(self.atom_cell, w * self.atom_value**k, minlength=n_cells)
                         for k in range(3)])

    def _with(self, **changes):
        fields = {f: getattr(self, f) for f in self.__dataclass_fields__}
        fields.update(changes)
        return type(self)(**fields)

    def with_replicates(self, weights, weighted):
        """The same counts with per-cell Poisson sums ``(n_resamples, n_cells)`` attached.

        Parameters
        ----------
        weights : ndarray of int of shape (n_resamples, n_cells)
            :math:`\\sum_{r \\in c} w_{rb}` over the audit-sample rows of every cell.
        weighted : ndarray of float of shape (n_resamples, n_cells)
            :math:`\\sum_{r \\in c} w_{rb} L_r`.

        Returns
        -------
        TrailSummary
        """
        return self._with(replicates=(np.asarray(weights, dtype=np.int64),
                                      np.asarray(weighted, dtype=float)))

    @classmethod
    def merge(cls, *parts):
        """Add trail summaries of disjoint rows (exact: every count is an integer).

        Parameters
        ----------
        *parts : TrailSummary

        Returns
        -------
        TrailSummary
        """
        parts = [p for p in parts if p is not None]
        if not parts:
            raise ValueError("nothing to merge.")
        if len(parts) == 1:
            return parts[0]
        columns = parts[0].columns
        if any(p.columns != columns for p in parts):
            raise ValueError("trail summaries of different columns cannot be merged.")
        merged = [_union_levels(parts, j) for j in range(len(columns))]
        levels = tuple(lv for lv, _ in merged)
        radices = [max(len(lv), 1) for lv in levels]
        cell_keys, cell_rows, atom_keys, atom_values, atom_counts, moments, reps = (
            [], [], [], [], [], [], [])
        for p in parts:
            maps = []
            for j, lv in enumerate(levels):
                position = {level: k for k, level in enumerate(lv)}
                maps.append(np.array([position.get(v, -1) for v in p.levels[j]] or [0],
                                     dtype=np.int64))
            new_codes = [maps[j][p.cell_codes[:, j]] for j in range(len(columns))]
            keys = mixed_radix(new_codes, radices, 0, p.cell_rows.size) if p.cell_rows.size \
                else np.zeros(0, np.int64)
            cell_keys.append(keys)
            cell_rows.append(p.cell_rows)
            atom_keys.append(keys[p.atom_cell])
            atom_values.append(p.atom_value)
            atom_counts.append(p.atom_count)
            moments.append(p._moments())
            reps.append(p.replicates)
        keys, inverse = np.unique(np.concatenate(cell_keys), return_inverse=True)
        inverse = inverse.ravel()
        rows = np.zeros(keys.size, dtype=np.int64)
        np.add.at(rows, inverse, np.concatenate(cell_rows))
        has_atoms = all(p.has_atoms for p in parts)
        if has_atoms:
            atom_cell = np.searchsorted(keys, np.concatenate(atom_keys))
            values = np.concatenate(atom_values)
            order = np.lexsort((values, atom_cell))
            atom_cell, values = atom_cell[order], values[order]
            counts = np.concatenate(atom_counts)[order]
            new = np.r_[True, (atom_cell[1:] != atom_cell[:-1]) | (values[1:] != values[:-1])] \
                if atom_cell.size else np.zeros(0, bool)
            starts = np.flatnonzero(new)
            atom_cell, values = atom_cell[starts], values[starts]
            counts = np.add.reduceat(counts, starts) if starts.size else counts
            merged_moments = None
        else:
            atom_cell, values = np.zeros(0, np.intp), np.zeros(0)
            counts = np.zeros(0, np.int64)
            merged_moments = np.zeros((3, keys.size))
            for p_keys, m in zip(cell_keys, moments, strict=True):
                merged_moments[:, np.searchsorted(keys, p_keys)] += m
        replicates = None
        if any(r is not None for r in reps):
            if any(r is None for r, p in zip(reps, parts, strict=True) if p.n_rows):
                raise ValueError("some trail summaries carry Poisson replicates, others not.")
            width = next(r for r in reps if r is not None)[0].shape[0]
            weights = np.zeros((width, keys.size), dtype=np.int64)
            weighted = np.zeros((width, keys.size))
            for p_keys, r in zip(cell_keys, reps, strict=True):
                if r is not None and p_keys.size:
                    where = np.searchsorted(keys, p_keys)
                    weights[:, where] += r[0]
                    weighted[:, where] += r[1]
            replicates = (weights, weighted)
        label_levels = tuple(
            tuple(sorted_levels({v for p in parts for v in p.label_levels[k]}))
            for k in range(2))
        return cls(
            columns=columns, levels=levels, categorical=tuple(c for _, c in merged),
            cell_codes=unravel(keys, radices), cell_rows=rows, atom_cell=atom_cell,
            atom_value=values, atom_count=counts, moments=merged_moments,
            n_rows=sum(p.n_rows for p in parts), replicates=replicates,
            max_atoms=parts[0].max_atoms, label_levels=label_levels,
        )._limit()


def _as_collection(groups, n_rows):
    if isinstance(groups, GroupCollection):
        return groups, None
    if hasattr(groups, "columns") or isinstance(groups, Mapping):
        return None, _columns(groups, None)
    if np.ndim(groups) == 1:
        # One attribute (a Series, a list or a 1-D array of labels): its groups.
        return None, {getattr(groups, "name", None) or "group": groups}
    arr = as_array(groups, "groups")
    if arr.ndim == 2 and arr.dtype == bool:
        return masks(arr), None
    raise ValueError(
        "groups must be a GroupCollection, a DataFrame / mapping of sensitive features, a 1-D "
        "array of group labels or a boolean (n_rows, n_groups) mask array."
    )


def _reference_mask(target, n_rows):
    reference = as_array(target, "target")
    if reference.dtype != bool or reference.shape != (n_rows,):
        raise ValueError(
            "target must be a number, 'overall', a group name or a boolean row mask of "
            f"length {n_rows}."
        )
    return reference


def _reference_cells(target, collection):
    try:
        j = collection.index(target)
    except KeyError:
        raise ValueError(
            f"target {target!r} is neither 'overall', a number nor a group of the "
            "collection (pass a boolean row mask for another reference group)."
        ) from None
    return collection.cell_membership[:, j]


def _check_labels(metric, label_levels):
    """The metric's checks of the labels on the labels of the whole trail.

    Each partition checked its own labels; two partitions may still disagree (``{0, 1}`` and
    ``{-1, 1}``, or two different negative labels): evaluate the metric on every label of the
    trail, so that the partitioned audit refuses what the in-memory one refuses.
    """
    y_levels, p_levels = (list(levels) for levels in label_levels)
    if not y_levels or not p_levels:
        return
    size = max(len(y_levels), len(p_levels))
    pad = [y_levels[k % len(y_levels)] for k in range(size)]
    pred = [p_levels[k % len(p_levels)] for k in range(size)]
    try:
        metric.row_values(np.array(pad, dtype=object), np.array(pred, dtype=object))
    except ValueError as exc:
        message = str(exc)
        if "label" in message:  # other errors (domains of values) were checked per row
            raise ValueError(f"across the partitions of the trail: {message}") from None


class VacuousAuditWarning(UserWarning):
    """Every non-empty group is the whole audit sample and the target is the overall metric.

    The disparity of such a group is 0 by construction (in the sample and in every bootstrap
    replicate), so the audit cannot find anything: bounds are ``[0, 0]`` and no group is
    flagged, whatever the model does. Typically the sensitive feature has a single level.
    """


def _vacuous_audit_warning(summary):
    sizes = summary.sizes[summary.active]
    if summary.target_kind == "overall" and sizes.size and np.all(sizes == summary.n):
        warnings.warn(
            f"every non-empty group is the whole audit sample ({summary.n:,} rows where the "
            "metric is defined), so its disparity from the overall target is 0 by "
            "construction and the audit cannot find any disparity; audit sensitive features "
            "with at least two levels present, or compare with a known target.",
            VacuousAuditWarning,
            stacklevel=user_stacklevel(),
        )


def _single_row_warning(summary):
    sizes = summary.sizes
    if np.any(sizes == 1):
        # Named by metric (one run may audit several), in words that fit the library and the
        # command line alike (no parameter names).
        warnings.warn(
            f"{int(np.sum(sizes == 1))} group(s) have a single row in the audit sample of "
            f"the {summary.metric.name.replace('_', ' ')} (rows where it is defined): their "
            "within-group standard deviation is 0, so their bounds and p-values rest on the "
            "standard deviation of the whole sample rather than their own.",
            DegenerateBootstrapWarning,
            stacklevel=user_stacklevel(),
        )


@dataclass(frozen=True, eq=False)
class AuditSummary:
    """What every group procedure needs from an audit trail: groups, atoms and target.

    Build it with :meth:`from_rows` (an audit trail in memory),
    :func:`skfair_audit.scale.summarize_trail` (a partitioned trail) or
    :meth:`from_trail`, then run any procedure on it: :meth:`certify_bounds`,
    :meth:`certify_threshold`, :meth:`flag_groups`. The functional API
    (:func:`~skfair_audit.group.certify_bounds` ...) does exactly this. These methods are
    built from the procedures' declarations (:func:`~skfair_audit.group.register_procedure`
    adds one for every procedure registered).

    Attributes
    ----------
    metric : Metric
    groups : GroupCollection or None
        ``None`` for the summary of a tilt audit (:func:`~skfair_audit.group.rkhs_tilt_bounds`).
    stats : SufficientStatistics
        The atoms ``(cell, in_reference, value, count)`` and per-cell moments.
    target_kind : {"constant", "overall", "reference"}
    theta_hat : float
        The observed target :math:`\\hat\\theta`.
    n_rows : int
        Rows of the trail (the audit sample is the ``n`` of them where the metric's
        condition holds).
    replicates : PoissonReplicates or None
        Poisson replicates summed by the partitions (a continuous metric on a partitioned
        trail); ``None``: the bootstrap draws multinomial counts over the atoms.
    row_atom : ndarray or None
        Atom of every row (-1 off the audit sample), when built in memory: it answers queries
        of groups given as row masks.
    source : str
        Where the counts come from, in words.
    """

    metric: Metric
    groups: GroupCollection
    stats: SufficientStatistics
    target_kind: str
    theta_hat: float
    n_rows: int
    replicates: PoissonReplicates | None = None
    row_atom: np.ndarray | None = field(default=None, repr=False)
    source: str = "in memory"

    def __post_init__(self):
        if self.groups is None:  # a tilt audit (RKHS): no groups
            object.__setattr__(self, "_derived", (np.zeros(0, np.int64),) + (np.zeros(0),) * 2
                               + ((),))
            return
        n_g, s_g = self.stats.observed_group_sums(self.groups)
        sizes = n_g.round().astype(np.int64)
        with np.errstate(invalid="ignore", divide="ignore"):
            values = np.where(sizes > 0, s_g / n_g, np.nan)
        object.__setattr__(self, "_derived", (sizes, values, values - self.theta_hat, tuple(
            self.groups.names[j] for j in np.flatnonzero(sizes == 0))))

    @property
    def n(self) -> int:
        """Rows of the audit sample."""
        return self.stats.n

    @property
    def sizes(self) -> np.ndarray:
        """Rows of every group in the audit sample."""
        return self._derived[0]

    @property
    def group_values(self) -> np.ndarray:
        """The metric on every group (NaN for empty groups)."""
        return self._derived[1]

    @property
    def estimates(self) -> np.ndarray:
        """:math:`\\hat\\epsilon(G)` of every group."""
        return self._derived[2]

    @property
    def empty_groups(self) -> tuple:
        """Groups with no row in the audit sample."""
        return self._derived[3]

    @property
    def active(self) -> np.ndarray:
        """Groups with at least one row in the audit sample."""
        return self.sizes > 0

    def __repr__(self):
        what = (f"n_groups={self.groups.n_groups}" if self.groups is not None
                else f"n_cells={self.stats.n_cells}")
        return (f"AuditSummary(metric={self.metric.name!r}, n={self.n}, n_rows={self.n_rows}, "
                f"{what}, n_atoms={self.stats.n_atoms}, "
                f"target_kind={self.target_kind!r}, source={self.source!r})")

    # -- construction ------------------------------------------------------------------
    @classmethod
    def from_rows(cls, y, y_pred, groups, *, metric, target="overall", pos_label=None,
                  depth=None, min_size=0, include_all=False):
        """The summary of an audit trail in memory (one chunked pass over the rows).

        Parameters
        ----------
        y, y_pred : array-like of shape (n_rows,) (``y_pred`` may be 2-D for coverage)
            Outcomes and model outputs (numpy or pandas).
        groups : GroupCollection, DataFrame, mapping, 1-D labels or 2-D boolean masks
            The collection, or the sensitive features whose intersections are the groups.
        metric : str, Metric or callable
            See :func:`get_metric`.
        target : float, "overall", str or bool array
            Known constant, the overall metric, or a reference group (name or row mask).
        pos_label : optional
            Positive label, when ``metric`` is a name.
        depth, min_size, include_all
            When ``groups`` are sensitive features: as in
            :func:`~skfair_audit.group.intersections`.

        Returns
        -------
        AuditSummary
        """
        metric = resolve_metric(metric, pos_label)
        values, rows = metric.row_values(y, y_pred)
        n_rows = values.shape[0]
        collection, columns = _as_collection(groups, n_rows)
        reference = None
        if not (isinstance(target, (numbers.Real, str))):
            reference = _reference_mask(target, n_rows)
        if collection is not None:
            if collection.n_rows != n_rows:
                raise ValueError(
                    f"groups describe {collection.n_rows} rows but y has {n_rows} rows.")
            cell_of_row = collection._rows("an in-memory audit")
            codes, radices = [cell_of_row], [collection.n_cells]
        else:
            codes, levels = encode_columns(columns)
            if codes[0].size != n_rows:
                raise ValueError(
                    f"groups describe {codes[0].size} rows but y has {n_rows} rows.")
            radices = [max(len(lv), 1) for lv in levels]
        counted = count_atoms(codes, radices, values, rows, reference, keep_rows=True)
        if collection is None:
            collection = intersection_groups(
                list(columns), levels, unravel(counted["cell_keys"], radices),
                counted["cell_rows"], counted["cell_of_row"], depth=depth, min_size=min_size,
                include_all=include_all)
            atom_cell = counted["atom_cell"]
        else:
            atom_cell = counted["cell_keys"][counted["atom_cell"]]  # cells of the collection
        if collection.n_groups == 0:
            raise ValueError("the group collection is empty (every group was empty or dropped).")
        return cls._assemble(metric, collection, atom_cell, counted["atom_reference"],
                             counted["atom_value"], counted["atom_count"], target,
                             n_rows=n_rows, row_atom=counted["row_atom"], reference=reference)

    @classmethod
    def from_cells(cls, y, y_pred, cells, n_cells, *, metric, target="overall",
                   pos_label=None):
        """The summary of a tilt audit: rows mapped to cells of a covariate, no groups.

        The tilt audits (:func:`~skfair_audit.group.monotone_tilt_bounds`,
        :func:`~skfair_audit.group.polynomial_tilt_bounds`,
        :func:`~skfair_audit.group.rkhs_tilt_bounds`) weight the rows by a function of a
        covariate: rows with the same value of the covariate (the same *cell*) get the
        same weight, so the atoms ``(cell, in_reference, value of L)`` are all the
        bootstrap needs, as for groups.

        Parameters
        ----------
        y, y_pred : array-like of shape (n_rows,) (``y_pred`` may be 2-D for coverage)
            Outcomes and model outputs.
        cells : array-like of int of shape (n_rows,)
            Cell of every row in ``[0, n_cells)`` (rows off the metric's condition may hold
            any value in that range).
        n_cells : int
        metric : str, Metric or callable
        target : float, "overall" or bool array
            Known constant, the overall metric, or a reference group given as a boolean row
            mask (a tilt audit has no named groups).
        pos_label : optional
            Positive label, when ``metric`` is a name.

        Returns
        -------
        AuditSummary
            With ``groups=None``.
        """
        metric = resolve_metric(metric, pos_label)
        values, rows = metric.row_values(y, y_pred)
        n_rows = values.shape[0]
        cells = np.asarray(cells)
        if cells.shape != (n_rows,):
            raise ValueError(f"the covariate has {cells.shape[0]} rows but y has {n_rows}.")
        reference = None
        if isinstance(target, str) and target != "overall":
            raise ValueError(
                "a tilt audit has no named groups: target must be a number, 'overall' or a "
                f"boolean row mask of a reference group, got {target!r}.")
        if not isinstance(target, (numbers.Real, str)):
            reference = _reference_mask(target, n_rows)
        counted = count_atoms([cells.astype(np.int64)], [int(n_cells)], values, rows,
                              reference)
        return cls._assemble(metric, None, counted["cell_keys"][counted["atom_cell"]],
                             counted["atom_reference"], counted["atom_value"],
                             counted["atom_count"], target, n_rows=n_rows,
                             reference=reference, n_cells=int(n_cells))

    @classmethod
    def from_trail(cls, trail, *, metric, target="overall", depth=None, include_all=False,
                   min_size=0, source="partitioned trail"):
        """The summary of a (merged) :class:`TrailSummary`: the intersections of its columns.

        Parameters
        ----------
        trail : TrailSummary
        metric : Metric
            The metric the trail summary was counted with.
        target : float, "overall" or str
            Known constant, the overall metric, or the name of a reference group.
        depth, include_all, min_size
            As in :func:`~skfair_audit.group.intersections`.
        source : str

        Returns
        -------
        AuditSummary
        """
        if not trail.cell_rows.size:
            raise ValueError("the audit trail has no rows.")
        _check_labels(metric, trail.label_levels)
        collection = intersection_groups(list(trail.columns), trail.levels, trail.cell_codes,
                                         trail.cell_rows, None, depth=depth,
                                         min_size=min_size, include_all=include_all)
        if collection.n_groups == 0:
            raise ValueError("the group collection is empty (every group was dropped).")
        if trail.has_atoms:
            return cls._assemble(metric, collection, trail.atom_cell,
                                 np.zeros(trail.n_atoms, bool), trail.atom_value,
                                 trail.atom_count, target, n_rows=trail.n_rows, source=source,
                                 replicates=trail.replicates)
        kind, ref_cells, theta = cls._target_of_cells(target, collection, metric,
                                                      trail.moments)
        moments = np.zeros((3, collection.n_cells, 2))
        moments[:, :, 1] = np.where(ref_cells, trail.moments, 0.0)
        moments[:, :, 0] = np.where(ref_cells, 0.0, trail.moments)
        replicates = None
        if trail.replicates is not None:
            replicates = PoissonReplicates(trail.replicates[0], trail.replicates[1], ref_cells)
        summary = cls(metric, collection, SufficientStatistics.from_moments(moments), kind,
                      theta, trail.n_rows, replicates=replicates, source=source)
        _single_row_warning(summary)
        _vacuous_audit_warning(summary)
        return summary

    @classmethod
    def _target_of_cells(cls, target, collection, metric, cell_moments):
        rows, total = cell_moments[0], cell_moments[1]
        if rows.sum() == 0:
            raise ValueError(f"no row satisfies the condition of metric {metric.name!r}.")
        no_ref = np.zeros(rows.shape[0], dtype=bool)
        if isinstance(target, bool):
            raise ValueError("target must be a number, 'overall' or a group name.")
        if isinstance(target, numbers.Real):
            if not np.isfinite(target):
                raise ValueError(f"a constant target must be finite, got {target!r}.")
            return "constant", no_ref, float(target)
        if isinstance(target, str) and target == "overall":
            return "overall", no_ref, float(total.sum() / rows.sum())
        if not isinstance(target, str):
            raise ValueError("target must be a number, 'overall' or a group name for a "
                             "partitioned trail (row masks need the rows in memory).")
        if collection is None:
            raise ValueError("a tilt audit has no named groups: give the reference group "
                             "as a boolean row mask.")
        ref_cells = _reference_cells(target, collection)
        if not rows[ref_cells].any():
            raise ValueError(
                "the reference group has no row in the audit sample (rows where the "
                f"condition of {metric.name!r} holds): its metric is undefined.")
        return "reference", ref_cells, float(total[ref_cells].sum() / rows[ref_cells].sum())

    @classmethod
    def _assemble(cls, metric, collection, atom_cell, atom_reference, atom_value, atom_count,
                  target, *, n_rows, row_atom=None, reference=None, source="in memory",
                  replicates=None, n_cells=None):
        """The one place where atoms, target and collection become a summary (a tilt
        audit has no collection: its ``n_cells`` cells are given)."""
        atom_cell = np.asarray(atom_cell, dtype=np.intp)
        n_cells = collection.n_cells if collection is not None else n_cells
        if not np.asarray(atom_count).sum():
            raise ValueError(f"no row satisfies the condition of metric {metric.name!r}.")
        if reference is not None:
            kind = "reference"
            if not np.any(atom_reference):
                raise ValueError(
                    "the reference group has no row in the audit sample (rows where the "
                    f"condition of {metric.name!r} holds): its metric is undefined.")
        else:
            cell_moments = np.stack([
                np.bincount(atom_cell, atom_count * atom_value**k, minlength=n_cells)
                for k in range(2)])
            kind, ref_cells, _ = cls._target_of_cells(target, collection, metric, cell_moments)
            atom_reference = ref_cells[atom_cell]
        stats = SufficientStatistics.from_atoms(atom_cell, atom_reference, atom_value,
                                                atom_count, n_cells)
        counts = stats.atom_count.astype(float)
        if kind == "constant":
            theta = float(target)
        elif kind == "overall":
            theta = float(counts @ stats.atom_value / stats.n)
        else:
            ref = counts * stats.atom_reference
            theta = float(ref @ stats.atom_value / ref.sum())
        if replicates is not None:  # the Poisson bootstrap was asked for explicitly
            ref_cells = np.zeros(n_cells, dtype=bool)
            ref_cells[stats.atom_cell[stats.atom_reference]] = True
            replicates = PoissonReplicates(replicates[0], replicates[1], ref_cells)
        summary = cls(metric, collection, stats, kind, theta, n_rows, row_atom=row_atom,
                      source=source, replicates=replicates)
        _single_row_warning(summary)
        _vacuous_audit_warning(summary)
        return summary
