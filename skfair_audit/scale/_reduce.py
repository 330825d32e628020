"""Summarise every partition of an audit trail and merge the summaries, with progress.

The group audit (:func:`~skfair_audit.scale.summarize_trail`) and the FaiTH cell counts
(:func:`~skfair_audit.scale.partitioned_cell_counts`) are both such reductions. A Dask
DataFrame is reduced by a tree of tasks on the active scheduler (local, or the default
``dask.distributed`` client); a pandas DataFrame or an iterable of them one chunk at a time.
With ``verbose`` a progress bar counts the partitions summarised
(:mod:`skfair_audit._progress`); the tasks, their keys and the merge order are the same with
or without it, so is the result.
"""

from __future__ import annotations

from collections.abc import Iterable, Sized

from .._progress import progress_bar, track
from .._utils import import_optional

_DESC = "partitions summarised"


def is_dask_frame(trail):
    """Whether ``trail`` is a Dask DataFrame (without importing dask)."""
    return hasattr(trail, "to_delayed") and hasattr(trail, "npartitions")


def reduce_partitions(trail, summarize, merge, args=(), *, fan_in=8, verbose=0,
                      purpose="audit a Dask DataFrame"):
    """``merge`` of ``summarize(partition, *args)`` over the partitions of ``trail``.

    Parameters
    ----------
    trail : dask.dataframe.DataFrame, pandas.DataFrame or iterable of pandas.DataFrame
    summarize : callable
        ``summarize(partition, *args)``; picklable for Dask.
    merge : callable
        ``merge(*summaries)``, associative; picklable for Dask.
    args : tuple
        Further arguments of ``summarize``.
    fan_in : int
        Summaries merged per task of the Dask tree.
    verbose : int
        0: silent; otherwise a progress bar over the partitions.
    purpose : str
        What needs dask, for the error message when it is missing.

    Returns
    -------
    object or None
        The merged summary (None when an iterable has no chunk).
    """
    if is_dask_frame(trail):
        dask = import_optional("dask", purpose)
        leaves = [dask.delayed(summarize, pure=True)(part, *args) for part in trail.to_delayed()]
        node = dask.delayed(merge, pure=True)
        level = leaves
        while len(level) > 1:
            level = [node(*level[i:i + fan_in]) for i in range(0, len(level), fan_in)]
        if not verbose:
            return dask.compute(level[0])[0]
        return _compute_with_progress(dask, level[0], leaves, verbose)
    if hasattr(trail, "columns") and hasattr(trail, "index"):
        trail = [trail]
    if not isinstance(trail, Iterable):
        raise ValueError(
            "trail must be a dask DataFrame, a pandas DataFrame or an iterable of pandas "
            f"DataFrames, got {type(trail).__name__}."
        )
    total = None
    chunks = track(trail, len(trail) if isinstance(trail, Sized) else None, _DESC,
                   unit="partition", verbose=verbose)
    for chunk in chunks:
        part = summarize(chunk, *args)
        total = part if total is None else merge(total, part)
    return total


def _default_client():
    try:
        from distributed import default_client
    except ImportError:
        return None
    try:
        return default_client()
    except ValueError:  # no client: the local scheduler runs the graph
        return None


def _compute_with_progress(dask, root, leaves, verbose):
    """``dask.compute(root)``, advancing a bar as the partition summaries (leaves) finish."""
    bar = progress_bar(len(leaves), _DESC, unit="partition", verbose=verbose)
    try:
        client = _default_client()
        if client is not None:
            from distributed import as_completed

            # the leaves' futures share the root's graph: nothing runs twice
            futures = client.compute([root, *leaves], optimize_graph=False)
            for _ in as_completed(futures[1:]):
                bar.update(1)
            return futures[0].result()
        from dask.callbacks import Callback

        keys = {leaf.key for leaf in leaves}

        def finished(key, result, dsk, state, worker_id):
            if key in keys:
                bar.update(1)

        with Callback(posttask=finished):
            return dask.compute(root)[0]
    finally:
        bar.close()
