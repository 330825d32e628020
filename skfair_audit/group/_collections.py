"""Collections of groups (subpopulations) audited simultaneously.

A :class:`GroupCollection` never stores an ``n_rows × n_groups`` matrix. Every row is mapped
to a *cell* (a unique combination of attribute levels, a bin of a covariate, a 2-D bin ...)
and every group is a union of cells. Sums over groups of per-row quantities are then sums
over cells followed by a small aggregation: a ``cells × groups`` product for categorical
intersections and explicit masks, prefix sums for intervals and 2-D prefix sums for boxes.
This is what makes the bootstrap cost independent of the number of rows.
"""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from .._utils import CHUNK_ROWS, compact_codes, encode_categories
from ._metrics import as_array

#: Key spaces up to this size are counted with one dense bincount per chunk.
DENSE_KEYS = 1 << 22


@dataclass(frozen=True, eq=False)
class _IntervalLayout:
    """Groups ``[edges[a], edges[b])`` as bin ranges ``starts[j] <= bin < ends[j]``."""

    edges: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    min_length: float

    @property
    def n_bins(self) -> int:
        return self.edges.size - 1

    def group_sums(self, bin_values: np.ndarray) -> np.ndarray:
        prefix = _prefix(bin_values[..., : self.n_bins], axis=-1)
        return prefix[..., self.ends] - prefix[..., self.starts]


@dataclass(frozen=True, eq=False)
class _BoxLayout:
    edges1: np.ndarray
    edges2: np.ndarray
    starts1: np.ndarray
    ends1: np.ndarray
    starts2: np.ndarray
    ends2: np.ndarray

    @property
    def shape(self) -> tuple[int, int]:
        return self.edges1.size - 1, self.edges2.size - 1

    def group_sums(self, cell_values: np.ndarray) -> np.ndarray:
        m1, m2 = self.shape
        grid = cell_values[..., : m1 * m2].reshape(*cell_values.shape[:-1], m1, m2)
        prefix = _prefix(_prefix(grid, axis=-2), axis=-1)
        return (
            prefix[..., self.ends1, self.ends2]
            - prefix[..., self.starts1, self.ends2]
            - prefix[..., self.ends1, self.starts2]
            + prefix[..., self.starts1, self.starts2]
        )


def _prefix(values: np.ndarray, axis: int) -> np.ndarray:
    """Cumulative sums with a leading zero along ``axis``."""
    pad = [(0, 0)] * values.ndim
    pad[axis] = (1, 0)
    return np.pad(np.cumsum(values, axis=axis), pad)


@dataclass(frozen=True, eq=False)
class GroupCollection:
    """A finite collection of groups of the rows of an audit trail.

    Build one with :func:`intersections`, :func:`intervals`, :func:`boxes`, :func:`masks`,
    :func:`tree_leaves` or :func:`cross_with_bins` rather than directly.

    Attributes
    ----------
    names : tuple of str
        One readable name per group, e.g. ``"race=African-American & age_cat=Less than 25"``.
    kind : str
        ``"intersections"``, ``"intervals"``, ``"boxes"``, ``"masks"``, ``"tree"`` or
        ``"crossed"``.
    cell_of_row : ndarray of int, shape (n_rows,), or None
        Cell of every row (the smallest integer dtype that fits); groups are unions of
        cells. ``None`` for a collection built from the counts of a partitioned trail, which
        has no rows in memory (groups are then queried by name or position).
    cell_membership : ndarray of bool, shape (n_cells, n_groups)
        Which cells make up each group.
    empty_groups : tuple of str
        Groups of the requested family with no row: reported, never audited.
    duplicate_groups : tuple of (str, str)
        ``(dropped, kept)`` pairs of groups with the same rows (the first one is kept).
    small_groups : tuple of str
        Groups dropped because they have fewer than ``min_size`` rows.
    layout : object or None
        Interval / box layout used for prefix-sum aggregation (``None`` for dense kinds).
    cell_rows : ndarray of int64, shape (n_cells,)
        Rows of the trail in every cell.
    """

    names: tuple
    kind: str
    cell_of_row: np.ndarray | None
    cell_membership: np.ndarray
    empty_groups: tuple = ()
    duplicate_groups: tuple = ()
    small_groups: tuple = ()
    layout: object = None
    cell_rows: np.ndarray = None
    _index: dict = field(default=None, repr=False)

    def __post_init__(self):
        index = {name: j for j, name in enumerate(self.names)}
        if len(index) != len(self.names):
            seen = [n for j, n in enumerate(self.names) if index[n] != j]
            raise ValueError(
                f"group names must be unique (they are how groups are queried); repeated: "
                f"{sorted(set(seen))[:5]}."
            )
        object.__setattr__(self, "_index", index)
        if self.cell_rows is None:
            if self.cell_of_row is None:
                raise ValueError("a GroupCollection needs cell_of_row or cell_rows.")
            object.__setattr__(self, "cell_rows", np.bincount(
                self.cell_of_row, minlength=self.n_cells).astype(np.int64))

    def __len__(self) -> int:
        return len(self.names)

    def __repr__(self) -> str:
        return (
            f"GroupCollection(kind={self.kind!r}, n_groups={self.n_groups}, "
            f"n_rows={self.n_rows}, n_empty={len(self.empty_groups)}, "
            f"n_duplicates={len(self.duplicate_groups)})"
        )

    @property
    def n_groups(self) -> int:
        return len(self.names)

    @property
    def n_rows(self) -> int:
        return int(self.cell_rows.sum())

    @property
    def n_cells(self) -> int:
        return self.cell_membership.shape[0]

    def group_sums(self, cell_values: np.ndarray) -> np.ndarray:
        """Sum per-cell quantities over every group: ``(..., n_cells) -> (..., n_groups)``.

        Parameters
        ----------
        cell_values : ndarray of shape (..., n_cells)

        Returns
        -------
        ndarray of shape (..., n_groups)
        """
        cell_values = np.asarray(cell_values, dtype=float)
        if self.layout is not None:
            return self.layout.group_sums(cell_values)
        return cell_values @ self.cell_membership.astype(float)

    def _rows(self, what):
        if self.cell_of_row is None:
            raise ValueError(
                f"{what} needs the rows, and this collection was built from the counts of a "
                "partitioned audit trail: query its groups by name or position."
            )
        return self.cell_of_row

    def sizes(self, rows=None) -> np.ndarray:
        """Number of rows of each group (optionally among the ``rows`` mask only).

        Parameters
        ----------
        rows : ndarray of bool of shape (n_rows,), optional

        Returns
        -------
        ndarray of int64 of shape (n_groups,)
        """
        if rows is None:
            counts = self.cell_rows.astype(float)
        else:
            cells = self._rows("counting the rows of a mask")[rows]
            counts = np.bincount(cells, minlength=self.n_cells).astype(float)
        return self.group_sums(counts).round().astype(np.int64)

    def index(self, group) -> int:
        """Position of a group given by name, position or a boolean row mask.

        A mask is accepted when its rows equal those of a member of the collection.
        Raises ``KeyError``/``ValueError`` for groups outside the collection.

        Parameters
        ----------
        group : str, int or ndarray of bool

        Returns
        -------
        int
        """
        if isinstance(group, str):
            # A group dropped as a duplicate has the same rows as its kept twin: same bound.
            twin = dict(self.duplicate_groups).get(group, group)
            if twin not in self._index:
                raise KeyError(f"no group named {group!r} in this collection.")
            return self._index[twin]
        if isinstance(group, numbers.Integral) and not isinstance(group, bool):
            if not -self.n_groups <= group < self.n_groups:
                raise IndexError(f"group index {group} out of range ({self.n_groups} groups).")
            return int(group) % self.n_groups
        mask = as_array(group, "group mask")
        if mask.dtype != bool or mask.shape != (self.n_rows,):
            raise ValueError(
                f"a group must be a name, an index or a boolean mask of length {self.n_rows}."
            )
        match = self._match_mask(mask)
        if match is None:
            raise ValueError("the mask is not the row set of any group of the collection.")
        return match

    def _match_mask(self, mask: np.ndarray):
        cells = self._rows("a row mask")
        inside = np.bincount(cells[mask], minlength=self.n_cells)
        total = self.cell_rows
        if np.any((inside > 0) & (inside < total)):
            return None  # cuts through a cell: not a union of cells
        observed = total > 0
        wanted = (inside > 0)[observed]
        hits = np.flatnonzero(np.all(self.cell_membership[observed] == wanted[:, None], axis=0))
        return int(hits[0]) if hits.size else None

    def contains(self, group) -> bool:
        """Whether ``group`` (name or mask) is a member of the collection.

        Parameters
        ----------
        group : str, int or ndarray of bool

        Returns
        -------
        bool
        """
        try:
            self.index(group)
        except (KeyError, ValueError, IndexError):
            return False
        return True

    def mask(self, group) -> np.ndarray:
        """Boolean row mask of a member (by name, index or mask).

        Parameters
        ----------
        group : str, int or ndarray of bool

        Returns
        -------
        ndarray of bool of shape (n_rows,)
        """
        cells = self._rows("a row mask")
        return self.cell_membership[cells, self.index(group)]


def _finalize(names, membership, cell_rows, cell_of_row=None, *, kind, min_size=0,
              layout=None, report=()):
    """Drop empty, too small and duplicate groups (keeping the first), and report them."""
    membership = np.asarray(membership, dtype=bool)
    cell_rows = np.asarray(cell_rows, dtype=np.int64)
    if layout is None:
        sizes = cell_rows @ membership.astype(np.int64)
    else:
        sizes = layout.group_sums(cell_rows.astype(float)).round().astype(np.int64)
    empty = sizes == 0
    small = (~empty) & (sizes < min_size)
    candidates = np.flatnonzero(~empty & ~small)
    observed = cell_rows > 0
    signatures = np.packbits(membership[observed][:, candidates], axis=0).T
    _, first, inverse = np.unique(signatures, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.ravel()
    keep = np.sort(candidates[first])
    duplicates = tuple(
        (names[j], names[candidates[first[inverse[pos]]]])
        for pos, j in enumerate(candidates)
        if candidates[first[inverse[pos]]] != j
    )
    if layout is not None:
        layout = _subset_layout(layout, keep)
    if cell_of_row is not None:
        cell_of_row = compact_codes(np.asarray(cell_of_row), membership.shape[0])
    return GroupCollection(
        names=tuple(names[j] for j in keep),
        kind=kind,
        cell_of_row=cell_of_row,
        cell_membership=membership[:, keep],
        empty_groups=tuple(names[j] for j in np.flatnonzero(empty)) + tuple(report),
        duplicate_groups=duplicates,
        small_groups=tuple(names[j] for j in np.flatnonzero(small)),
        layout=layout,
        cell_rows=cell_rows,
    )


def _subset_layout(layout, keep):
    if isinstance(layout, _IntervalLayout):
        return _IntervalLayout(layout.edges, layout.starts[keep], layout.ends[keep],
                               layout.min_length)
    return _BoxLayout(layout.edges1, layout.edges2, layout.starts1[keep], layout.ends1[keep],
                      layout.starts2[keep], layout.ends2[keep])


def _columns(data, attributes):
    """``{name: 1-D column}`` from a DataFrame, a mapping or a 2-D array."""
    if hasattr(data, "columns") and hasattr(data, "__getitem__"):
        names = list(data.columns) if attributes is None else list(attributes)
        missing = [a for a in names if a not in data.columns]
        if missing:
            raise ValueError(f"attributes {missing} are not columns of the data.")
        return {str(a): data[a] for a in names}
    if isinstance(data, Mapping):
        names = list(data) if attributes is None else list(attributes)
        missing = [a for a in names if a not in data]
        if missing:
            raise ValueError(f"attributes {missing} are not keys of the data.")
        return {str(a): data[a] for a in names}
    arr = as_array(data, "data")
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError("data must be a DataFrame, a mapping of columns or a 2-D array.")
    idx = range(arr.shape[1]) if attributes is None else list(attributes)
    return {f"x{j}": arr[:, j] for j in idx}


def encode_columns(columns):
    """Codes and levels of every sensitive column (the one encoder and missing-value rule).

    Returns ``(codes, levels)``: lists with one entry per column.
    """
    codes, levels = [], []
    n = None
    for name, column in columns.items():
        c, lv = encode_categories(column, f"sensitive feature {name!r}")
        if n is not None and c.size != n:
            raise ValueError("all attributes must have the same number of rows.")
        n = c.size
        codes.append(c)
        levels.append(lv)
    if n == 0:
        raise ValueError("the data have no rows.")
    return codes, levels


def mixed_radix(codes, radices, start, stop):
    """One int64 key per row of ``[start, stop)``: the attribute codes in mixed radix (the
    lexicographic order of the codes)."""
    key = codes[0][start:stop].astype(np.int64)
    for c, radix in zip(codes[1:], radices[1:], strict=True):
        key *= radix
        key += c[start:stop]
    return key


def count_keys(key_of_rows, n_rows, n_keys, *, keep_rows=True):
    """Count the integer keys ``key_of_rows(start, stop)`` of all rows, chunk by chunk.

    Keys in ``[0, n_keys)``. Small key spaces are counted with one ``bincount`` per chunk,
    large ones with a sort per chunk (then merged). Memory: a chunk, the counts, and (with
    ``keep_rows``) one compact integer per row.

    Returns
    -------
    keys : ndarray of int64
        The observed keys, sorted.
    counts : ndarray of int64
        Rows per observed key.
    row_key : ndarray or None
        Index into ``keys`` of every row (compact dtype), when ``keep_rows``.
    """
    dense = n_keys <= DENSE_KEYS
    step = max(CHUNK_ROWS, n_keys) if dense else CHUNK_ROWS
    raw = np.empty(n_rows, dtype=compact_codes(np.zeros(0), n_keys).dtype) if keep_rows else (
        None)
    if dense:
        counts = np.zeros(n_keys, dtype=np.int64)
        for start in range(0, n_rows, step):
            key = key_of_rows(start, start + step)
            counts += np.bincount(key, minlength=n_keys)
            if keep_rows:
                raw[start:start + step] = key
        keys = np.flatnonzero(counts)
        counts = counts[keys]
        if not keep_rows:
            return keys, counts, None
        lookup = np.cumsum(np.bincount(keys, minlength=n_keys) > 0) - 1
        row_key = raw  # the ranks of the keys fit the keys' dtype: renumber in place
        for start in range(0, n_rows, step):
            row_key[start:start + step] = lookup[raw[start:start + step]]
        return keys, counts, compact_codes(row_key, keys.size)
    parts_keys, parts_counts = [], []
    for start in range(0, n_rows, step):
        key = key_of_rows(start, start + step)
        k, c = np.unique(key, return_counts=True)
        parts_keys.append(k)
        parts_counts.append(c)
        if keep_rows:
            raw[start:start + step] = key
    keys, inverse = np.unique(np.concatenate(parts_keys), return_inverse=True)
    counts = np.bincount(inverse.ravel(), np.concatenate(parts_counts).astype(float),
                         minlength=keys.size).round().astype(np.int64)
    if not keep_rows:
        return keys, counts, None
    row_key = np.empty(n_rows, dtype=compact_codes(np.zeros(0), keys.size).dtype)
    for start in range(0, n_rows, step):
        row_key[start:start + step] = np.searchsorted(keys, raw[start:start + step])
    return keys, counts, row_key


def unravel(keys, radices):
    """Inverse of :func:`mixed_radix`: ``(len(keys), len(radices))`` codes."""
    out = np.empty((keys.size, len(radices)), dtype=np.int64)
    rest = keys.astype(np.int64)
    for j in range(len(radices) - 1, -1, -1):
        rest, out[:, j] = np.divmod(rest, radices[j])
    return out


def intersection_groups(attributes, levels, cell_codes, cell_rows, cell_of_row=None, *,
                        depth=None, min_size=0, include_all=False):
    """The intersections collection from its table of cells (attribute-code combinations).

    ``cell_codes`` (one row per observed combination, sorted lexicographically) and
    ``cell_rows`` (rows per combination) are all the collection needs: the in-memory
    :func:`intersections` and the partitioned audits build it from the same table.
    """
    n_attr = len(attributes)
    depth = n_attr if depth is None else int(depth)
    if not 1 <= depth <= n_attr:
        raise ValueError(f"depth must be between 1 and {n_attr}, got {depth}.")
    names, columns_out = [], []
    if include_all:
        names.append("all")
        columns_out.append(np.ones(cell_codes.shape[0], dtype=bool))
    for k in range(1, depth + 1):
        for subset in itertools.combinations(range(n_attr), k):
            for combo in itertools.product(*(range(len(levels[a])) for a in subset)):
                names.append(" & ".join(
                    f"{attributes[a]}={levels[a][c]}" for a, c in zip(subset, combo, strict=True)
                ))
                columns_out.append(np.all(cell_codes[:, subset] == np.array(combo), axis=1))
    membership = np.column_stack(columns_out)
    return _finalize(names, membership, cell_rows, cell_of_row, kind="intersections",
                     min_size=min_size)


def cell_table(codes, levels):
    """Cells of rows given by their attribute codes: ``(cell_codes, cell_rows, cell_of_row)``.

    One chunked pass: the codes are combined into a mixed-radix key and counted.
    """
    radices = [max(len(lv), 1) for lv in levels]
    n_keys = math.prod(radices)
    keys, counts, cell_of_row = count_keys(
        lambda a, b: mixed_radix(codes, radices, a, b), codes[0].size, n_keys)
    return unravel(keys, radices), counts, cell_of_row


def intersections(data, columns=None, *, depth=None, min_size=0, include_all=False):
    """All intersections of categorical attributes, up to ``depth`` attributes at a time.

    A group fixes the level of each attribute in a subset of size ``1..depth`` (the others
    are "any"): with attributes race (3 levels) and sex (2), depth 2 gives 3 + 2 + 6 groups.

    Parameters
    ----------
    data : DataFrame, mapping of columns or 2-D array
        The sensitive features of the audit rows (pandas categories keep their order).
        Missing values (``None``, ``NaN``, ``pandas.NA``) are refused.
    columns : list, optional
        The protected columns of ``data`` to intersect (default: all).
    depth : int, optional
        Maximum number of attributes fixed at once (default: all of them; 1 = marginal
        groups).
    min_size : int
        Groups with fewer rows are dropped (reported in ``small_groups``).
    include_all : bool
        Add the group ``"all"`` of every row (the empty intersection).

    Returns
    -------
    GroupCollection
        Empty intersections are listed in ``empty_groups``; groups with the same rows as an
        earlier one in ``duplicate_groups``.

    Examples
    --------
    >>> g = intersections({"sex": ["F", "M", "M"], "age": ["<25", "<25", ">45"]})
    >>> g.names
    ('sex=F', 'sex=M', 'age=<25', 'age=>45', 'sex=M & age=<25')
    >>> g.empty_groups
    ('sex=F & age=>45',)
    >>> g.duplicate_groups
    (('sex=F & age=<25', 'sex=F'), ('sex=M & age=>45', 'age=>45'))
    """
    selected = _columns(data, columns)
    if not selected:
        raise ValueError("at least one attribute is needed.")
    codes, levels = encode_columns(selected)
    cell_codes, cell_rows, cell_of_row = cell_table(codes, levels)
    return intersection_groups(list(selected), levels, cell_codes, cell_rows, cell_of_row,
                               depth=depth, min_size=min_size, include_all=include_all)


def _grid(x, grid, n_bins, name):
    x = as_array(x, name).astype(float)
    if x.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional.")
    if np.isnan(x).any():
        raise ValueError(f"{name} contains NaN values.")
    if grid is None:
        if n_bins is None:
            raise ValueError("give either grid (bin edges) or n_bins.")
        if not isinstance(n_bins, numbers.Integral) or n_bins < 1:
            raise ValueError(f"n_bins must be a positive integer, got {n_bins!r}.")
        low, high = float(x.min()), float(x.max())
        if high <= low:
            high = low + 1.0
        edges = np.linspace(low, high, int(n_bins) + 1)
    else:
        edges = np.asarray(grid, dtype=float)
        if edges.ndim != 1 or edges.size < 2 or np.any(np.diff(edges) <= 0):
            raise ValueError("grid must be a strictly increasing 1-D array of >= 2 edges.")
    # bin j is [edges[j], edges[j+1]), the last one closed; rows off the grid -> cell m
    m = edges.size - 1
    bins = np.searchsorted(edges, x, side="right") - 1
    bins[x == edges[-1]] = m - 1
    bins[(x < edges[0]) | (x > edges[-1])] = m
    return x, edges, bins


def _edge_labels(edges):
    """Shortest ``%g`` labels (6 to 17 significant digits) that tell all edges apart."""
    edges = np.asarray(edges, dtype=float)
    for digits in range(6, 18):
        labels = [f"{v:.{digits}g}" for v in edges]
        if len(set(labels)) == len(labels):
            return labels
    return [repr(float(v)) for v in edges]


def _interval_name(name, edges, a, b, labels=None):
    labels = _edge_labels(edges) if labels is None else labels
    closing = "]" if b == len(labels) - 1 else ")"
    return f"{name} in [{labels[a]}, {labels[b]}{closing}"


def _all_intervals(edges, min_length):
    m = edges.size - 1
    starts, ends = np.triu_indices(m + 1, k=1)
    keep = edges[ends] - edges[starts] >= min_length - 1e-12 * max(1.0, abs(min_length))
    return starts[keep], ends[keep]


def intervals(x, grid=None, *, n_bins=None, min_length=0.0, min_size=0, name=None):
    """All intervals of a covariate with endpoints on a grid.

    With ``m`` bins there are ``m (m + 1) / 2`` intervals ``[g_a, g_b)`` (50 bins give
    1,275); the last edge is closed. Rows outside the grid belong to no interval.

    Parameters
    ----------
    x : array-like of shape (n_rows,)
    grid : array-like, optional
        Strictly increasing bin edges.
    n_bins : int, optional
        Equal-width bins between ``min(x)`` and ``max(x)`` when ``grid`` is not given.
    min_length : float
        Keep intervals with ``g_b - g_a >= min_length``.
    min_size : int
        Drop intervals with fewer rows.
    name : str, optional
        Covariate name used in group names (default: the Series name or ``"x"``).

    Returns
    -------
    GroupCollection
        ``kind="intervals"``; its group sums are prefix sums over the bins.

    Examples
    --------
    >>> g = intervals([0.1, 0.5, 1.5, 2.5], grid=[0, 1, 2, 3])
    >>> len(g), g.names[:2]
    (6, ('x in [0, 1)', 'x in [0, 2)'))
    """
    name = name or getattr(x, "name", None) or "x"
    _, edges, bins = _grid(x, grid, n_bins, "x")
    starts, ends = _all_intervals(edges, float(min_length))
    m = edges.size - 1
    cells = np.arange(m + 1)
    membership = (cells[:, None] >= starts) & (cells[:, None] < ends)
    layout = _IntervalLayout(edges, starts, ends, float(min_length))
    labels = _edge_labels(edges)
    names = [
        _interval_name(name, edges, a, b, labels) for a, b in zip(starts, ends, strict=True)
    ]
    return _finalize(names, membership, np.bincount(bins, minlength=m + 1), bins,
                     kind="intervals", min_size=min_size, layout=layout)


def boxes(x1, x2, grid1=None, grid2=None, *, n_bins1=None, n_bins2=None, min_size=0,
          names=None):
    """All 2-D boxes (products of grid intervals) of two covariates.

    Group sums use 2-D prefix sums over the ``m1 × m2`` bin table; no dense
    ``rows × groups`` array is ever built.

    Parameters
    ----------
    x1, x2 : array-like of shape (n_rows,)
        The two covariates.
    grid1, grid2 : array-like, optional
        Strictly increasing bin edges of each covariate.
    n_bins1, n_bins2 : int, optional
        Equal-width bins between the minimum and the maximum when no grid is given.
    min_size : int
        Drop boxes with fewer rows.
    names : (str, str), optional
        Covariate names in the group names (default: the Series names or ``x1``, ``x2``).

    Returns
    -------
    GroupCollection
        ``kind="boxes"``.

    Examples
    --------
    >>> g = boxes([0.5, 1.5], [0.5, 0.5], grid1=[0, 1, 2], grid2=[0, 1])
    >>> g.names
    ('x1 in [0, 1) & x2 in [0, 1]', 'x1 in [0, 2] & x2 in [0, 1]', 'x1 in [1, 2] & x2 in [0, 1]')
    """
    name1, name2 = names or (getattr(x1, "name", None) or "x1", getattr(x2, "name", None) or "x2")
    _, e1, b1 = _grid(x1, grid1, n_bins1, "x1")
    _, e2, b2 = _grid(x2, grid2, n_bins2, "x2")
    if b1.size != b2.size:
        raise ValueError("x1 and x2 must have the same length.")
    m1, m2 = e1.size - 1, e2.size - 1
    outside = (b1 == m1) | (b2 == m2)
    cell_of_row = np.where(outside, m1 * m2, b1 * m2 + b2)
    s1, t1 = _all_intervals(e1, 0.0)
    s2, t2 = _all_intervals(e2, 0.0)
    i1, i2 = np.meshgrid(np.arange(s1.size), np.arange(s2.size), indexing="ij")
    i1, i2 = i1.ravel(), i2.ravel()
    layout = _BoxLayout(e1, e2, s1[i1], t1[i1], s2[i2], t2[i2])
    r, c = np.divmod(np.arange(m1 * m2), m2)
    membership = np.zeros((m1 * m2 + 1, i1.size), dtype=bool)
    membership[:-1] = (
        (r[:, None] >= layout.starts1) & (r[:, None] < layout.ends1)
        & (c[:, None] >= layout.starts2) & (c[:, None] < layout.ends2)
    )
    labels1, labels2 = _edge_labels(e1), _edge_labels(e2)
    group_names = [
        f"{_interval_name(name1, e1, s1[a], t1[a], labels1)} & "
        f"{_interval_name(name2, e2, s2[b], t2[b], labels2)}"
        for a, b in zip(i1, i2, strict=True)
    ]
    return _finalize(group_names, membership, np.bincount(cell_of_row, minlength=m1 * m2 + 1),
                     cell_of_row, kind="boxes", min_size=min_size, layout=layout)


def masks(data, names=None, *, min_size=0):
    """Groups given explicitly as boolean masks (columns of an array or a DataFrame).

    Parameters
    ----------
    data : array-like or DataFrame of shape (n_rows, n_groups)
        Boolean (or 0/1) membership of every row in every group.
    names : list of str, optional
        Group names (default: the DataFrame's columns, else ``"group 0"``, ...).
    min_size : int
        Drop groups with fewer rows.

    Returns
    -------
    GroupCollection
        ``kind="masks"``.

    Examples
    --------
    >>> g = masks([[True, False], [True, True], [False, False]], names=["a", "b"])
    >>> g.names, g.sizes().tolist()
    (('a', 'b'), [2, 1])
    """
    if hasattr(data, "columns"):
        names = list(map(str, data.columns)) if names is None else list(names)
        data = data.to_numpy()
    arr = as_array(data, "masks")
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.dtype != bool:
        if not np.isin(arr, (0, 1)).all():
            raise ValueError("masks must be boolean (or 0/1).")
        arr = arr.astype(bool)
    if arr.ndim != 2 or arr.shape[0] == 0:
        raise ValueError("masks must be a non-empty (n_rows, n_groups) boolean array.")
    names = [f"group {j}" for j in range(arr.shape[1])] if names is None else list(names)
    if len(names) != arr.shape[1] or len(set(names)) != len(names):
        raise ValueError("names must be unique, one per mask column.")
    cells, cell_of_row, cell_rows = np.unique(arr, axis=0, return_inverse=True,
                                              return_counts=True)
    return _finalize(names, cells, cell_rows, cell_of_row.ravel(), kind="masks",
                     min_size=min_size)


def tree_leaves(tree, X, feature_names=None):
    """Groups given by the leaves of a fitted scikit-learn decision tree, named by rules.

    Parameters
    ----------
    tree : fitted ``DecisionTreeRegressor`` or ``DecisionTreeClassifier``
    X : array-like of shape (n_rows, n_features)
        Rows to place in the leaves (typically held-out audit rows).
    feature_names : list of str, optional

    Returns
    -------
    GroupCollection
        ``kind="tree"``: one group per leaf, named by its decision rule.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeRegressor
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> t = DecisionTreeRegressor(max_depth=1).fit(X, [0, 0, 1, 1])
    >>> tree_leaves(t, X, ["age"]).names
    ('age <= 1.5', 'age > 1.5')
    """
    X = as_array(X, "X")
    inner = tree.tree_
    if feature_names is None:
        feature_names = getattr(tree, "feature_names_in_", None)
    if feature_names is None:
        feature_names = [f"x{j}" for j in range(inner.n_features)]
    rules = {0: []}
    stack = [0]
    while stack:
        node = stack.pop()
        left, right = inner.children_left[node], inner.children_right[node]
        if left == right:
            continue
        feat, thr = feature_names[inner.feature[node]], inner.threshold[node]
        rules[left] = [*rules[node], f"{feat} <= {thr:.4g}"]
        rules[right] = [*rules[node], f"{feat} > {thr:.4g}"]
        stack += [left, right]
    leaves = np.flatnonzero(inner.children_left == inner.children_right)
    leaf_names = [" & ".join(rules[k]) or "all" for k in leaves]
    position = np.full(inner.node_count, -1)
    position[leaves] = np.arange(leaves.size)
    cell_of_row = position[tree.apply(X)]
    membership = np.eye(leaves.size, dtype=bool)
    return _finalize(leaf_names, membership, np.bincount(cell_of_row, minlength=leaves.size),
                     cell_of_row, kind="tree")


def cross_with_bins(groups, scores, bins=10, *, name="score"):
    """Cross every group with bins of a predicted score (multicalibration groups).

    Parameters
    ----------
    groups : GroupCollection
    scores : array-like of shape (n_rows,)
        Predicted scores in [0, 1].
    bins : int or array-like
        Number of equal-width bins on [0, 1] or their edges.
    name : str
        Name of the score in the group names.

    Returns
    -------
    GroupCollection
        Groups ``"G & score in [a, b)"``; with the ``"calibration_residual"`` metric and
        target 0 their disparities are the calibration errors of every group and bin.

    Examples
    --------
    >>> g = masks([[True], [True], [False]], names=["A"])
    >>> cross_with_bins(g, [0.2, 0.7, 0.9], bins=2).names
    ('A & score in [0, 0.5)', 'A & score in [0.5, 1]')
    """
    if isinstance(bins, numbers.Integral):
        edges = np.linspace(0.0, 1.0, int(bins) + 1)
    else:
        edges = np.asarray(bins, dtype=float)
    _, edges, score_bin = _grid(scores, edges, None, "scores")
    if score_bin.size != groups.n_rows:
        raise ValueError("scores must have one entry per row of the collection.")
    m = edges.size - 1
    pair = groups._rows("crossing with score bins").astype(np.int64) * (m + 1) + score_bin
    cells, cell_of_row, cell_rows = np.unique(pair, return_inverse=True, return_counts=True)
    old_cell, cell_bin = np.divmod(cells, m + 1)
    names, columns = [], []
    labels = _edge_labels(edges)
    for j, gname in enumerate(groups.names):
        for b in range(m):
            names.append(f"{gname} & {_interval_name(name, edges, b, b + 1, labels)}")
            columns.append(groups.cell_membership[old_cell, j] & (cell_bin == b))
    return _finalize(names, np.column_stack(columns), cell_rows, cell_of_row.ravel(),
                     kind="crossed", report=groups.empty_groups)
