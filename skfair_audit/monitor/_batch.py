"""Counting a batch of the audit trail: one pass over the rows, one reduction over partitions.

A batch is a pandas DataFrame, a CSV or Parquet file, or a Dask DataFrame. Each partition is
reduced to a small table ``{cell key: (rows where the metric is defined, ones)}`` where a cell
key is the tuple of the protected attributes' levels (intersections) or a bin of the covariate
(intervals); the tables of the partitions are added. Counts are integers, so a Dask batch gives
exactly the counts of the same rows in memory.
"""

from __future__ import annotations

import numpy as np

from .._utils import check_no_missing, encode_categories, import_optional
from ..group import get_metric


def _plain(value):
    """A JSON-able Python scalar for a level or a label."""
    value = value.item() if hasattr(value, "item") else value
    if isinstance(value, float) and value.is_integer():
        return value
    return value


def count_partition(frame, spec):
    """Counts of one pandas partition.

    Parameters
    ----------
    frame : pandas.DataFrame
    spec : dict
        ``label``, ``prediction``, ``protected`` (list), ``metric`` (name), ``pos_label``,
        ``grid`` (edges or None).

    Returns
    -------
    dict
        ``cells``: ``{key: [n, k]}``; ``total``: ``[n, k]`` over every row; ``labels``: the
        set of labels of ``label`` and ``prediction``; ``rows``: rows of the partition;
        ``levels``: the levels of every protected column seen in the partition.
    """
    columns = [spec["label"], spec["prediction"], *spec["protected"]]
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"the batch has no column(s) {missing}; it has "
                         f"{list(map(str, frame.columns))[:20]}.")
    if len(frame) == 0:
        return {"cells": {}, "total": [0, 0], "labels": set(), "rows": 0,
                "levels": {c: set() for c in spec["protected"]}}
    y = frame[spec["label"]].to_numpy()
    y_pred = frame[spec["prediction"]].to_numpy()
    metric = get_metric(spec["metric"], **({"pos_label": spec["pos_label"]}
                                           if spec["pos_label"] is not None else {}))
    values, rows = metric.row_values(y, y_pred)
    if values.dtype != bool:
        raise ValueError(f"metric {metric.name!r} is not a 0/1 metric: the monitor follows "
                         "rates (selection rate, FPR, FNR, TPR, PPV, error rate ...).")
    rows = np.ones(values.size, dtype=bool) if rows is None else rows
    ones = rows & values
    labels = set()
    for arr, name in ((y, "label"), (y_pred, "prediction")):
        labels.update(_plain(v) for v in encode_categories(arr, name)[1])
    if spec["grid"] is not None:
        column = spec["protected"][0]
        x = frame[column].to_numpy()
        check_no_missing(x, f"covariate {column!r}")
        try:
            x = x.astype(float)
        except (TypeError, ValueError):
            raise ValueError(f"covariate {column!r} must be numeric for intervals.") from None
        edges = np.asarray(spec["grid"], dtype=float)
        m = edges.size - 1
        bins = np.searchsorted(edges, x, side="right") - 1
        bins[x == edges[-1]] = m - 1
        bins[(x < edges[0]) | (x > edges[-1])] = m
        n_c = np.bincount(bins[rows], minlength=m + 1)
        k_c = np.bincount(bins[ones], minlength=m + 1)
        cells = {(int(b),): [int(n_c[b]), int(k_c[b])] for b in np.flatnonzero(n_c)}
        found = {column: set()}
    else:
        codes, levels = [], []
        for column in spec["protected"]:
            c, lv = encode_categories(frame[column], f"protected column {column!r}")
            codes.append(c.astype(np.int64))
            levels.append([_plain(v) for v in lv])
        key = codes[0].copy()
        for c, lv in zip(codes[1:], levels[1:], strict=True):
            key *= max(len(lv), 1)
            key += c
        radices = [max(len(lv), 1) for lv in levels]
        size = int(np.prod(radices))
        n_c = np.bincount(key[rows], minlength=size)
        k_c = np.bincount(key[ones], minlength=size)
        seen = np.flatnonzero(np.bincount(key, minlength=size))
        cells = {}
        for flat in seen:
            digits = np.unravel_index(int(flat), radices)
            cells[tuple(levels[a][d] for a, d in enumerate(digits))] = [int(n_c[flat]),
                                                                      int(k_c[flat])]
        found = {c: set(lv) for c, lv in zip(spec["protected"], levels, strict=True)}
    return {"cells": cells, "total": [int(rows.sum()), int(ones.sum())], "labels": labels,
            "rows": int(values.size), "levels": found}


def merge_counts(*parts):
    """Add the count tables of several partitions."""
    cells, total, labels, n_rows, levels = {}, [0, 0], set(), 0, {}
    for part in parts:
        for column, found in part["levels"].items():
            levels.setdefault(column, set()).update(found)
        for key, (n, k) in part["cells"].items():
            acc = cells.setdefault(key, [0, 0])
            acc[0] += n
            acc[1] += k
        total = [total[0] + part["total"][0], total[1] + part["total"][1]]
        labels |= part["labels"]
        n_rows += part["rows"]
    return {"cells": cells, "total": total, "labels": labels, "rows": n_rows,
            "levels": levels}


def _is_dask(batch):
    return type(batch).__module__.startswith("dask")


def count_batch(batch, spec, read_table=None):
    """Counts of a batch: a pandas DataFrame, a path (CSV / Parquet) or a Dask DataFrame.

    Parameters
    ----------
    batch : DataFrame, str, pathlib.Path or dask.dataframe.DataFrame
    spec : dict
        See :func:`count_partition`.
    read_table : callable, optional
        Reader of a path (default: :func:`pandas.read_csv` / :func:`pandas.read_parquet`).

    Returns
    -------
    dict
    """
    if _is_dask(batch):
        dask = import_optional("dask", "monitor a Dask DataFrame")
        parts = [dask.delayed(count_partition, pure=True)(p, spec) for p in batch.to_delayed()]
        return dask.compute(dask.delayed(merge_counts, pure=True)(*parts))[0]
    if isinstance(batch, (str, bytes)) or hasattr(batch, "__fspath__"):
        if read_table is None:
            pd = import_optional("pandas", "read a batch file")
            path = str(batch)
            reader = pd.read_parquet if path.lower().endswith((".parquet", ".pq")) else (
                pd.read_csv)
            batch = reader(path)
        else:
            batch = read_table(batch)
    if not (hasattr(batch, "columns") and hasattr(batch, "to_numpy")):
        raise ValueError("a batch must be a pandas DataFrame, a CSV / Parquet path or a Dask "
                         f"DataFrame, got {type(batch).__name__}.")
    return count_partition(batch, spec)
