"""Progress of long work, one mechanism for the whole library.

Bootstraps (batches of replicates, :mod:`skfair_audit._resampling`), model selection
(candidates × folds) and partitioned audits (partitions summarised) report progress through
:func:`progress_bar`, switched by the ``verbose`` parameter of the public functions and
estimators: silent by default, on in the command line.

With ``verbose`` true the bar is :mod:`tqdm`'s auto mode (a widget in Jupyter when ipywidgets
is installed, text on stderr elsewhere; ``pip install 'skfair_audit[progress]'``); without
tqdm, a line of plain text on stderr at most every :data:`TEXT_INTERVAL` seconds and at the
end. In a Jupyter kernel without ipywidgets, where tqdm would warn and a redrawn text bar
leaves one line per redraw in the saved notebook, the plain text is used silently, a line at
most every :data:`NOTEBOOK_INTERVAL` seconds: one line for a run shorter than that. A bar
only observes: it never changes what is computed, nor in which order.
"""

from __future__ import annotations

import importlib.util
import sys
import time
import warnings

#: Seconds between two lines of the plain-text fallback.
TEXT_INTERVAL = 2.0
#: Seconds between two lines of the plain text in a Jupyter kernel without ipywidgets.
NOTEBOOK_INTERVAL = 30.0


class _Silent:
    """The bar of ``verbose=0``: does nothing."""

    def update(self, n=1):
        pass

    def close(self):
        pass


class _TextBar:
    """Plain-text progress on a stream, when tqdm is not installed."""

    def __init__(self, total, desc, unit, stream=None, interval=None):
        self.total, self.desc, self.unit = total, desc, unit
        self.stream = sys.stderr if stream is None else stream
        self.interval = TEXT_INTERVAL if interval is None else interval
        self.done = 0
        self.start = self.last = time.perf_counter()
        self.closed = False

    def _line(self):
        elapsed = time.perf_counter() - self.start
        if self.total:
            return (f"{self.desc}: {self.done}/{self.total} {self.unit}s "
                    f"({100 * self.done / self.total:.0f}%), {elapsed:.1f} s")
        return f"{self.desc}: {self.done} {self.unit}s, {elapsed:.1f} s"

    def update(self, n=1):
        self.done += n
        now = time.perf_counter()
        if now - self.last >= self.interval:
            self.last = now
            print(self._line(), file=self.stream, flush=True)

    def close(self):
        if not self.closed:
            self.closed = True
            print(self._line(), file=self.stream, flush=True)


def _in_kernel_without_widgets():
    """Whether this runs in a Jupyter kernel that cannot draw tqdm's widget."""
    ipython = sys.modules.get("IPython")
    shell = getattr(ipython, "get_ipython", lambda: None)()
    in_kernel = shell is not None and "IPKernelApp" in getattr(shell, "config", {})
    return in_kernel and importlib.util.find_spec("ipywidgets") is None


def _tqdm(total, desc, unit):
    """tqdm's auto bar, or None when tqdm is missing or cannot draw a widget in a notebook."""
    if _in_kernel_without_widgets():
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # tqdm's notices about its notebook mode
            from tqdm.auto import tqdm
    except ImportError:
        return None
    options = dict(total=total, desc=desc, unit=unit, leave=True, dynamic_ncols=True)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return tqdm(**options)
    except ImportError:  # a notebook bar that cannot find its widget: the plain text
        return None


def progress_bar(total, desc, *, unit="it", verbose=0):
    """A progress bar for ``total`` steps (``None``: unknown), or a silent one.

    Parameters
    ----------
    total : int or None
    desc : str
        What is counted, e.g. ``"bootstrap"``.
    unit : str
        One step, e.g. ``"resample"``.
    verbose : int or bool
        0 / False: silent.

    Returns
    -------
    object
        With ``update(n)`` and ``close()``; use it as a context manager with :func:`track`
        or close it yourself.
    """
    if not verbose:
        return _Silent()
    bar = _tqdm(total, desc, unit)
    if bar is not None:
        return bar
    interval = NOTEBOOK_INTERVAL if _in_kernel_without_widgets() else None
    return _TextBar(total, desc, unit, interval=interval)


def track(iterable, total, desc, *, unit="it", verbose=0, weight=None):
    """Yield the items of ``iterable`` unchanged, advancing a bar after each.

    Parameters
    ----------
    iterable : iterable
    total : int or None
        Steps in all (the sum of the weights).
    desc, unit, verbose
        As in :func:`progress_bar`.
    weight : callable, optional
        Steps that an item counts for (default 1), e.g. the replicates of a batch.

    Yields
    ------
    object
        The items of ``iterable``, in order.
    """
    bar = progress_bar(total, desc, unit=unit, verbose=verbose)
    try:
        for item in iterable:
            bar.update(1 if weight is None else weight(item))
            yield item
    finally:
        bar.close()
