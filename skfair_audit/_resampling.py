"""The one resampling engine behind every bootstrap of the library.

Both auditors bootstrap thousands of times. This module owns how replicates are drawn,
batched, seeded and distributed over workers, so that

* memory is bounded by one parsed ``memory_limit`` (:class:`MemoryBudget`), never
  ``n_resamples × width`` at once;
* results are **bit-identical** for any ``n_jobs`` and any joblib backend, and the replicates
  drawn are the same for any ``memory_limit``: the batch layout depends only on
  ``n_resamples`` and ``batch_size``, and every batch gets its own child of a
  :class:`numpy.random.SeedSequence` spawned in the parent process;
* discrete data are resampled through their sufficient statistics (multinomial cell counts),
  so the cost of a replicate does not grow with the number of rows.

A *draw* is a small picklable object ``draw(rng, size) -> array of shape (size, width)``;
a *statistic* maps such a batch to an array whose first axis has length ``size``.

**The memory rule.** A statistic declares two numbers next to its math (and, optionally,
``fixed_bytes``: a working set of each evaluation that does not grow with the replicates,
taken off the budget first):

``bytes_per_replicate``
    The peak working set of one replicate, its draw included, in bytes. The engine evaluates
    each batch in *chunks* of :func:`replicates_per_batch` ``(bytes_per_replicate, batch,
    memory_limit)`` replicates, drawn one after the other from the batch's own random
    stream. Drawing ``a`` then ``b`` rows from a generator gives the bits of one draw of
    ``a + b`` rows (every draw here fills its rows in order from the generator's stream), and
    the statistics are row-wise, so the chunking never changes the replicates:
    ``memory_limit`` bounds the memory and nothing else. A statistic of numpy reductions
    (FaiTH's, through ``row_dot``) then gives the same bits; one computed through a BLAS
    matrix product may move in its last bits, since OpenBLAS may choose its kernel by the
    number of rows (seen with the RKHS and polynomial-tilt audits; the tests check the group
    disparity processes and the monotone tilts bit for bit). A budget smaller than one
    replicate is refused with :class:`MemoryLimitError` before anything is allocated.
``batch_width``
    The width that fixes the batch layout when ``batch_size`` is not given:
    :func:`default_batch_size` ``(batch_width)`` replicates per batch (32 MiB of float64 over
    that width, at most 10,000). A batch is the unit of seeding and of parallel work; its size
    never depends on ``memory_limit``. Each statistic keeps the width its results were
    published with, so every committed result reproduces bit for bit.

Both default to ``8 * draw.width`` bytes and ``draw.width``: the weights alone.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
from joblib import effective_n_jobs
from sklearn.utils.parallel import Parallel, delayed

from ._progress import track
from ._utils import Predicate, seed_sequence

__all__ = [
    "DEFAULT_MEMORY_LIMIT",
    "MEMORY_LIMIT",
    "MemoryBudget",
    "MemoryLimitError",
    "MultinomialCounts",
    "HypergeometricCounts",
    "PoissonWeights",
    "RowCategories",
    "batch_layout",
    "check_memory",
    "default_batch_size",
    "format_bytes",
    "is_memory_limit",
    "parse_memory_limit",
    "replicates_per_batch",
    "replicate_cost",
    "resample",
    "seed_sequence",
]

#: Nominal size of one batch, in array elements (32 MiB of float64): with a statistic's
#: ``batch_width`` it fixes the batch layout, hence the random streams (not the memory).
MAX_BATCH_ELEMENTS = 2**22

#: Most replicates in one batch.
MAX_BATCH_REPLICATES = 10_000

#: The one default ``memory_limit`` of every audit, FaiTH and group: the largest working set
#: one step may allocate (2 GiB).
DEFAULT_MEMORY_LIMIT = 2 * 2**30

_UNITS = {
    "": 1, "b": 1,
    "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9, "gb": 10**9,
    "t": 10**12, "tb": 10**12,
    "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40,
}


class MemoryLimitError(MemoryError):
    """A step of the audit would need more memory than its ``memory_limit`` allows.

    Raised *before* the allocation, with a message that says how many bytes the step needs,
    what the limit is, and which option avoids the allocation. It is a :class:`MemoryError`,
    so code that handles out-of-memory conditions handles it too.
    """


def format_bytes(n_bytes) -> str:
    """``1610612736 -> "1.5 GiB"``: a byte count for humans."""
    value = float(n_bytes)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} TiB"  # pragma: no cover


def parse_memory_limit(memory_limit):
    """Validate a memory budget: bytes as a number, or a string such as ``"2GiB"``/``"500MB"``.

    Parameters
    ----------
    memory_limit : int, float, str, None or MemoryBudget
        ``None`` means no limit. Strings take the units B, kB/MB/GB/TB (powers of 1000) and
        KiB/MiB/GiB/TiB (powers of 1024), case-insensitive. An already parsed
        :class:`MemoryBudget` is returned as its byte count.

    Returns
    -------
    float
        The budget in bytes (``inf`` for None).

    Examples
    --------
    >>> parse_memory_limit("1.5GiB")
    1610612736.0
    >>> parse_memory_limit(None)
    inf
    """
    if isinstance(memory_limit, MemoryBudget):
        return memory_limit.limit
    if memory_limit is None:
        return float("inf")
    value = memory_limit
    if isinstance(memory_limit, str):
        text = memory_limit.strip().lower().replace(" ", "")
        number = text.rstrip("kmgtib")
        unit = text[len(number):]
        if unit not in _UNITS or not number:
            raise ValueError(
                f"memory_limit {memory_limit!r} is not a byte count: write e.g. 2GiB, 500MB "
                "or a number of bytes."
            )
        try:
            value = float(number) * _UNITS[unit]
        except ValueError:
            raise ValueError(
                f"memory_limit {memory_limit!r} is not a byte count: write e.g. 2GiB, 500MB "
                "or a number of bytes."
            ) from None
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not np.isfinite(value)
        or value <= 0
    ):
        raise ValueError(
            f"memory_limit must be a positive number of bytes, a string such as '2GiB', or "
            f"None; got {memory_limit!r}."
        )
    return float(value)


def is_memory_limit(value) -> bool:
    """Whether ``value`` is a valid ``memory_limit`` (the parameter constraint's test)."""
    try:
        parse_memory_limit(value)
    except (TypeError, ValueError):
        return False
    return True


#: The ``memory_limit`` parameter constraint of every estimator and procedure.
MEMORY_LIMIT = [None, Predicate(is_memory_limit, "a byte count such as '2GiB'")]


@dataclass(frozen=True)
class MemoryBudget:
    """A ``memory_limit`` parsed once: the byte budget every step of an audit checks against.

    Build it with :meth:`of` at the API boundary and pass it down; every function that takes a
    ``memory_limit`` also takes a budget, so nothing below re-parses it.

    Attributes
    ----------
    limit : float
        Bytes (``inf``: no limit).

    Examples
    --------
    >>> budget = MemoryBudget.of("64MiB")
    >>> budget.limit, str(budget)
    (67108864.0, '64.0 MiB')
    >>> MemoryBudget.of(budget) is budget
    True
    """

    limit: float

    @classmethod
    def of(cls, memory_limit=DEFAULT_MEMORY_LIMIT) -> MemoryBudget:
        """The budget of a ``memory_limit`` (see :func:`parse_memory_limit`); a budget as is."""
        if isinstance(memory_limit, MemoryBudget):
            return memory_limit
        return cls(parse_memory_limit(memory_limit))

    def __str__(self) -> str:
        return "no limit" if np.isinf(self.limit) else format_bytes(self.limit)

    def check(self, n_bytes, what, hint):
        """Refuse, before allocating, a step that needs more than the budget.

        Parameters
        ----------
        n_bytes : int or float
            Estimated peak size of the arrays the step allocates.
        what : str
            What would be allocated, e.g. ``"the dense K x K cost matrix (K = 60,000)"``.
        hint : str
            The option that avoids the allocation.

        Raises
        ------
        MemoryLimitError
            When ``n_bytes > limit``.
        """
        if n_bytes > self.limit:
            raise MemoryLimitError(
                f"{what} needs about {format_bytes(n_bytes)}, more than memory_limit = "
                f"{format_bytes(self.limit)}. {hint} (or raise memory_limit if the machine "
                "has the memory)."
            )


def check_memory(n_bytes, memory_limit, what, hint):
    """Refuse, before allocating, a step that needs more than ``memory_limit`` bytes:
    :meth:`MemoryBudget.check` of :meth:`MemoryBudget.of` ``(memory_limit)`` (same
    parameters; ``memory_limit`` is anything :func:`parse_memory_limit` takes)."""
    MemoryBudget.of(memory_limit).check(n_bytes, what, hint)


def replicates_per_batch(bytes_per_replicate, n_replicates, memory_limit=DEFAULT_MEMORY_LIMIT,
                         *, fixed_bytes=0, what="One bootstrap replicate"):
    """How many replicates to hold at once: the one batch-size rule of the library.

    .. math::

        k = \\min\\Big(n_{\\text{replicates}},\\ 10\\,000,\\
            \\Big\\lfloor \\frac{\\text{memory\\_limit} - \\text{fixed\\_bytes}}
            {\\text{bytes\\_per\\_replicate}}\\Big\\rfloor\\Big)

    Parameters
    ----------
    bytes_per_replicate : int or float
        Peak working set of one replicate (its draw included), as the statistic declares it.
    n_replicates : int
        Replicates to evaluate; the batch never exceeds it.
    memory_limit : int, float, str, None or MemoryBudget, default="2GiB"
        The budget (see :func:`parse_memory_limit`).
    fixed_bytes : int or float, default=0
        Working set of the evaluation that does not grow with the replicates (e.g. a dense
        cell-to-group matrix built at each call), taken off the budget first.
    what : str
        Names the replicate in the error message.

    Returns
    -------
    int
        At least 1.

    Raises
    ------
    MemoryLimitError
        When one replicate (with ``fixed_bytes``) needs more than ``memory_limit``: no
        batch fits, and the error says so before anything is allocated.

    Examples
    --------
    >>> replicates_per_batch(8_000, 1000, "1MB")
    125
    >>> replicates_per_batch(8_000, 50, "1MB")
    50
    >>> replicates_per_batch(8_000, 10**6, None)
    10000
    """
    n_replicates = _check_positive_int(n_replicates, "n_replicates")
    per = float(bytes_per_replicate)
    if not np.isfinite(per) or per < 0:
        raise ValueError(
            f"bytes_per_replicate must be a non-negative number, got {bytes_per_replicate!r}.")
    budget = MemoryBudget.of(memory_limit)
    budget.check(fixed_bytes + per, what, "Lower the number of cells, groups or rows of the audit")
    fits = MAX_BATCH_REPLICATES
    room = budget.limit - fixed_bytes
    if per > 0 and room < per * MAX_BATCH_REPLICATES:
        fits = int(room // per)
    return max(1, min(n_replicates, fits))


def default_batch_size(width: int, max_elements: int = MAX_BATCH_ELEMENTS) -> int:
    """The batch layout's default: largest batch whose ``batch × width`` array stays within
    ``max_elements`` (at most 10,000 replicates). It fixes the random streams; memory is
    bounded separately, by :func:`replicates_per_batch`."""
    return int(max(1, min(MAX_BATCH_REPLICATES, max_elements // max(int(width), 1))))


def batch_layout(n_resamples: int, batch_size: int) -> list[int]:
    """Sizes of the consecutive batches that make up ``n_resamples`` replicates.

    The layout depends only on its two arguments (never on ``n_jobs``), which is what makes
    results identical across parallel configurations.
    """
    n_resamples = _check_positive_int(n_resamples, "n_resamples")
    batch_size = _check_positive_int(batch_size, "batch_size")
    full, rest = divmod(n_resamples, batch_size)
    return [batch_size] * full + ([rest] if rest else [])


@dataclass(frozen=True)
class MultinomialCounts:
    """Multinomial counts ``Multinomial(n_trials, probabilities)`` over K categories.

    With ``probabilities = counts / n`` and ``n_trials = n`` this is Efron's bootstrap on
    discrete data through its sufficient statistics; ``n_trials = m < n`` gives the
    m-out-of-n bootstrap; with K = n uniform categories it gives row-level multinomial
    bootstrap weights.
    """

    probabilities: np.ndarray
    n_trials: int

    def __post_init__(self):
        p = np.asarray(self.probabilities, dtype=float)
        if p.ndim != 1 or p.size == 0 or np.any(p < 0) or not np.isfinite(p).all():
            raise ValueError("probabilities must be a non-empty 1-D array of non-negative values.")
        p = p / p.sum()
        object.__setattr__(self, "probabilities", p)
        object.__setattr__(self, "n_trials", _check_positive_int(self.n_trials, "n_trials"))

    @property
    def width(self) -> int:
        return self.probabilities.size

    def __call__(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return rng.multinomial(self.n_trials, self.probabilities, size=size)

    @classmethod
    def rows(cls, n: int) -> MultinomialCounts:
        """Row-level bootstrap weights: how often each of ``n`` rows is drawn."""
        return cls(np.full(n, 1.0 / n), n)


@dataclass(frozen=True)
class RowCategories:
    """Categories of ``n_draws`` rows drawn with replacement from the rows of a count table.

    The same law as :class:`MultinomialCounts` with ``probabilities = counts / n`` (the counts
    of the drawn categories are ``Multinomial(n_draws, counts / n)``), returned as the
    ``(size, n_draws)`` categories themselves: ``O(n_draws log K)`` per replicate instead of
    ``O(K)``, the cheaper form when ``n_draws`` is much smaller than the number of categories
    (the m-out-of-n bootstrap of a large audit). Drawing uniform row numbers in ``[0, n)`` and
    mapping them through the cumulative counts is exact: a category without rows is never drawn.

    With ``tally=True`` it returns the ``(size, K)`` counts of the drawn categories: the law
    of :class:`MultinomialCounts`, in ``O(n_draws + K)`` per replicate instead of numpy's
    chain of ``K`` binomials, which is the cheaper way when most categories hold one or a few
    rows (the distinct rows of continuous data).
    """

    counts: np.ndarray
    n_draws: int
    tally: bool = False

    def __post_init__(self):
        c = np.asarray(self.counts)
        if c.ndim != 1 or c.size == 0 or np.any(c < 0) or not np.all(c == np.round(c)):
            raise ValueError("counts must be a non-empty 1-D array of non-negative integers.")
        c = c.astype(np.int64)
        if c.sum() == 0:
            raise ValueError("counts must hold at least one row.")
        object.__setattr__(self, "counts", c)
        object.__setattr__(self, "n_draws", _check_positive_int(self.n_draws, "n_draws"))

    @property
    def width(self) -> int:
        return self.counts.size if self.tally else self.n_draws

    def __call__(self, rng: np.random.Generator, size: int) -> np.ndarray:
        cumulative = np.cumsum(self.counts)
        rows = rng.integers(0, cumulative[-1], size=(size, self.n_draws))
        if not self.tally:
            return np.searchsorted(cumulative, rows, side="right")
        # One row per category (distinct continuous rows): the row is its category.
        category = (rows if self.counts.size == cumulative[-1]
                    else np.repeat(np.arange(self.counts.size), self.counts)[rows])
        category += (np.arange(size) * self.counts.size)[:, None]
        return np.bincount(category.ravel(), minlength=size * self.counts.size).reshape(
            size, self.counts.size)


@dataclass(frozen=True)
class HypergeometricCounts:
    """Counts of a size-``m`` subsample drawn **without** replacement from ``counts``.

    This is subsampling (Politis, Romano & Wolf 1999) through the sufficient statistics:
    ``numpy.random.Generator.multivariate_hypergeometric``.
    """

    counts: np.ndarray
    m: int

    def __post_init__(self):
        c = np.asarray(self.counts)
        if c.ndim != 1 or c.size == 0 or np.any(c < 0) or not np.all(c == np.round(c)):
            raise ValueError("counts must be a non-empty 1-D array of non-negative integers.")
        c = c.astype(np.int64)
        m = _check_positive_int(self.m, "m")
        if m > c.sum():
            raise ValueError(f"m={m} exceeds the number of observations {int(c.sum())}.")
        object.__setattr__(self, "counts", c)
        object.__setattr__(self, "m", m)

    @property
    def width(self) -> int:
        return self.counts.size

    def __call__(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return rng.multivariate_hypergeometric(self.counts, self.m, size=size, method="marginals")


@dataclass(frozen=True)
class PoissonWeights:
    """Independent Poisson(1) weights per row (the Poisson bootstrap, for streamed data)."""

    n: int

    def __post_init__(self):
        object.__setattr__(self, "n", _check_positive_int(self.n, "n"))

    @property
    def width(self) -> int:
        return self.n

    def __call__(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return rng.poisson(1.0, size=(size, self.n))


def _run_batch(statistic, draw, seed, size, chunk):
    """One batch from its own stream, evaluated ``chunk`` replicates at a time: the draws of
    consecutive chunks continue the batch's stream, so the bits do not depend on ``chunk``."""
    rng = np.random.default_rng(seed)
    if chunk >= size:
        return np.asarray(statistic(draw(rng, size)))
    return np.concatenate([np.asarray(statistic(draw(rng, part)))
                           for part in batch_layout(size, chunk)], axis=0)


def _run_batches(statistic, draw, seeds, sizes, chunk):
    """Consecutive batches, each from its own stream (one parallel task)."""
    return np.concatenate([_run_batch(statistic, draw, seed, size, chunk)
                           for seed, size in zip(seeds, sizes, strict=True)], axis=0)


def replicate_cost(statistic, draw, bytes_per_replicate=None, batch_width=None,
                   fixed_bytes=None):
    """``(bytes_per_replicate, batch_width, fixed_bytes)`` of a statistic on a draw: given
    values first, then the statistic's own declarations, else the draw's weights alone."""
    width = getattr(draw, "width", 1)
    if bytes_per_replicate is None:
        bytes_per_replicate = getattr(statistic, "bytes_per_replicate", 8 * width)
    if batch_width is None:
        batch_width = getattr(statistic, "batch_width", width)
    if fixed_bytes is None:
        fixed_bytes = getattr(statistic, "fixed_bytes", 0)
    return bytes_per_replicate, batch_width, fixed_bytes


def resample(
    statistic,
    draw,
    n_resamples: int,
    *,
    batch_size: int | None = None,
    memory_limit=DEFAULT_MEMORY_LIMIT,
    bytes_per_replicate=None,
    batch_width=None,
    fixed_bytes=None,
    random_state=None,
    n_jobs: int | None = None,
    verbose: int = 0,
) -> np.ndarray:
    """Evaluate ``statistic`` on ``n_resamples`` resampled weight vectors, batch by batch.

    Parameters
    ----------
    statistic : callable
        ``statistic(weights) -> ndarray`` where ``weights`` has shape ``(size, width)``; the
        output's first axis must have length ``size`` (one entry per replicate), and each
        output row must depend on its own weight row only. It may declare
        ``bytes_per_replicate`` and ``batch_width`` attributes (see the module's memory rule).
    draw : callable
        ``draw(rng, size) -> ndarray (size, width)``, e.g. :class:`MultinomialCounts`,
        :class:`HypergeometricCounts` or :class:`PoissonWeights`. Must be picklable for
        process-based backends, and fill its rows in order from ``rng``.
    n_resamples : int
        Number of replicates B.
    batch_size : int, optional
        Replicates per batch. Defaults to :func:`default_batch_size` of ``batch_width``.
        Results depend on ``batch_size`` (it fixes the random streams) but never on
        ``memory_limit``, ``n_jobs`` or the joblib backend.
    memory_limit : int, float, str, None or MemoryBudget, default="2GiB"
        Budget of the replicates held at once in one worker: each batch is evaluated in
        chunks of :func:`replicates_per_batch` ``(bytes_per_replicate, batch_size,
        memory_limit)`` replicates. Refused with :class:`MemoryLimitError`, before drawing,
        when one replicate does not fit.
    bytes_per_replicate : int or float, optional
        Peak working set of one replicate, its draw included; default: the statistic's
        ``bytes_per_replicate`` attribute, else ``8 * draw.width``.
    batch_width : int, optional
        Width fixing the default batch layout; default: the statistic's ``batch_width``
        attribute, else ``draw.width``.
    fixed_bytes : int or float, optional
        Working set of an evaluation that does not grow with the replicates, taken off the
        budget; default: the statistic's ``fixed_bytes`` attribute, else 0.
    random_state : None, int, RandomState, Generator or SeedSequence
        Seed of the parent :class:`~numpy.random.SeedSequence`; each batch uses its own
        spawned child.
    n_jobs : int, optional
        Workers for :class:`sklearn.utils.parallel.Parallel`; ``None`` means 1 unless in a
        :func:`joblib.parallel_config` context. Each worker holds one chunk at a time.
    verbose : int
        0: silent; otherwise a progress bar over the replicates, advanced as each batch
        completes (:mod:`skfair_audit._progress`). It never changes the result.

    Returns
    -------
    ndarray
        The statistic of every replicate, concatenated along the first axis, in replicate order.

    Examples
    --------
    >>> import numpy as np
    >>> draw = MultinomialCounts(np.array([0.2, 0.3, 0.5]), n_trials=100)
    >>> mean = lambda c: c @ np.array([0.0, 1.0, 2.0]) / 100
    >>> means = resample(mean, draw, 1000, batch_size=256, random_state=0)
    >>> means.shape
    (1000,)
    >>> bool(abs(means.mean() - 1.3) < 0.02)
    True
    >>> small = resample(mean, draw, 1000, batch_size=256, random_state=0,
    ...                  memory_limit="1kB")  # 41 replicates of 24 bytes at a time
    >>> bool(np.array_equal(small, means))
    True
    """
    per_replicate, width, fixed = replicate_cost(statistic, draw, bytes_per_replicate,
                                                 batch_width, fixed_bytes)
    if batch_size is None:
        batch_size = default_batch_size(width)
    sizes = batch_layout(n_resamples, batch_size)
    chunk = replicates_per_batch(per_replicate, max(sizes), memory_limit, fixed_bytes=fixed)
    seeds = seed_sequence(random_state).spawn(len(sizes))

    def batches():
        if len(sizes) == 1:
            yield _run_batch(statistic, draw, seeds[0], sizes[0], chunk)
            return
        # A few tasks per worker, each a run of consecutive batches: the statistic and the
        # draw are shipped to the workers a few times, not once per batch; every batch keeps
        # its own seed, so the bits do not depend on the grouping. As a generator, the runs
        # arrive (in order) while the others work: the bar moves.
        runs = np.array_split(np.arange(len(sizes)),
                              min(len(sizes), 4 * max(1, effective_n_jobs(n_jobs))))
        yield from Parallel(n_jobs=n_jobs, return_as="generator" if verbose else "list")(
            delayed(_run_batches)(statistic, draw, [seeds[i] for i in run],
                                  [sizes[i] for i in run], chunk)
            for run in runs
        )

    parts = list(track(batches(), n_resamples, "bootstrap", unit="resample", verbose=verbose,
                       weight=len))
    return parts[0] if len(parts) == 1 else np.concatenate(parts, axis=0)


def _check_positive_int(value, name):
    if (
        not isinstance(value, numbers.Integral)
        or isinstance(value, bool)
        or value < 1
    ):
        raise ValueError(f"{name} must be a positive integer, got {value!r}.")
    return int(value)
