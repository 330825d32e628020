"""Counter-based Poisson(1) bootstrap weights that follow each row, not its partition.

The Poisson bootstrap (Hanley & MacGibbon 2006; Chamandy et al. 2012) replaces the
multinomial counts of Efron's bootstrap by independent weights :math:`w_{rb} \\sim
\\text{Poisson}(1)` per row :math:`r` and replicate :math:`b`. Its point is that a row's
weight can be computed where the row lives, without knowing :math:`n` or the other rows.
Here the weight is a *pure function* of a stable row key, the seed and the replicate number,

.. math::

    h_r = \\operatorname{mix}(k_r \\oplus \\operatorname{mix}(s)), \\qquad
    z_{rb} = \\operatorname{mix}\\big(h_r + (b + 1)\\,\\gamma \\bmod 2^{64}\\big), \\qquad
    w_{rb} = F^{-1}\\big(z_{rb} / 2^{64}\\big),

where :math:`\\operatorname{mix}` is the SplitMix64 finaliser (Steele, Lea & Flood 2014),
:math:`\\gamma = \\texttt{0x9E3779B97F4A7C15}` its increment (so :math:`z_{r0}, z_{r1},
\\dots` is exactly the SplitMix64 stream started at :math:`h_r`) and :math:`F^{-1}` the
Poisson(1) quantile function, evaluated by comparing :math:`z` with the 64-bit fixed-point
table :math:`\\lfloor 2^{64} F(k) \\rfloor`. A row therefore receives the same weights
however the data are partitioned, ordered or scheduled, and a retried task recomputes
exactly the same numbers: the partial sums are integers, so their total is bit-identical.

Everything is vectorised over ``rows × replicates`` in ``uint64`` arithmetic (numpy wraps
modulo :math:`2^{64}`, which is what the hash needs).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

__all__ = [
    "POISSON_THRESHOLDS",
    "mix64",
    "splitmix64",
    "row_states",
    "poisson_weights",
    "fill_poisson_weights",
]

_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_TWO64 = 2**64


def _poisson_thresholds(max_k: int = 32) -> np.ndarray:
    """``floor(2**64 * F(k))`` for the Poisson(1) CDF ``F``, k = 0..max_k, exactly rounded."""
    # exact rational arithmetic: e^{-1} by its alternating series (error < 1/41! ~ 3e-50)
    inv_e = sum(Fraction((-1) ** j, math.factorial(j)) for j in range(41))
    total, term, out = Fraction(0), Fraction(1), []
    for k in range(max_k + 1):
        if k:
            term /= k
        total += term
        out.append(min(math.floor(inv_e * total * _TWO64), _TWO64 - 1))
    return np.array(out, dtype=np.uint64)


#: Fixed-point Poisson(1) CDF: ``w = #{k : z >= POISSON_THRESHOLDS[k]}`` for a uniform 64-bit z.
POISSON_THRESHOLDS = _poisson_thresholds()

_BUCKET_BITS = 16


def _bucket_table():
    """Quantile of every one of the 2**16 buckets of the top bits of z (-1: straddles a
    threshold, resolved by a binary search). A table lookup is ~10x faster than searchsorted
    and gives the same numbers."""
    shift = 64 - _BUCKET_BITS
    first = np.arange(2**_BUCKET_BITS, dtype=np.uint64) << np.uint64(shift)
    last = first + np.uint64(2**shift - 1)
    low = np.searchsorted(POISSON_THRESHOLDS, first, side="right")
    high = np.searchsorted(POISSON_THRESHOLDS, last, side="right")
    return np.where(low == high, low, -1).astype(np.int8)


_BUCKETS = _bucket_table()


def mix64(z, out=None, *, work=None) -> np.ndarray:
    """SplitMix64 finaliser of ``uint64`` values (a bijection of 64-bit words).

    Parameters
    ----------
    z : array-like of uint64
    out : ndarray of uint64, optional
        Where to write the result (may be ``z`` itself, for in-place mixing).
    work : ndarray of uint64 with the shape of ``z``, optional
        Scratch buffer (avoids an allocation in hot loops).

    Returns
    -------
    ndarray of uint64

    Examples
    --------
    >>> hex(int(mix64(np.array([0x9E3779B97F4A7C15], dtype=np.uint64))[0]))
    '0xe220a8397b1dcdaf'
    """
    z = np.asarray(z, dtype=np.uint64)
    if out is None:
        out = z.copy()
    elif out is not z:
        np.copyto(out, z)
    tmp = np.empty_like(out) if work is None else work
    for shift, mult in ((30, _M1), (27, _M2)):
        np.right_shift(out, np.uint64(shift), out=tmp)
        np.bitwise_xor(out, tmp, out=out)
        np.multiply(out, mult, out=out)
    np.right_shift(out, np.uint64(31), out=tmp)
    np.bitwise_xor(out, tmp, out=out)
    return out


def splitmix64(state, n: int) -> np.ndarray:
    """The first ``n`` outputs of SplitMix64 started at ``state`` (reference generator).

    Examples
    --------
    >>> [hex(int(v)) for v in splitmix64(0, 2)]
    ['0xe220a8397b1dcdaf', '0x6e789e6aa1b965f4']
    """
    steps = np.arange(1, n + 1, dtype=np.uint64)
    return mix64(np.uint64(state) + steps * _GAMMA)


def _seed_word(seed) -> np.uint64:
    seed = int(seed)
    if not 0 <= seed < _TWO64:
        raise ValueError(f"seed must be an integer in [0, 2**64), got {seed!r}.")
    return mix64(np.array([seed], dtype=np.uint64))[0]


def row_states(keys, seed) -> np.ndarray:
    """Per-row SplitMix64 states :math:`h_r = \\mathrm{mix}(k_r \\oplus \\mathrm{mix}(s))`.

    Parameters
    ----------
    keys : array-like of uint64 (or integers, reinterpreted modulo :math:`2^{64}`)
        One stable key per row (e.g. a hash of a unique id).
    seed : int in [0, 2**64)

    Returns
    -------
    ndarray of uint64 of shape (n_rows,)
    """
    keys = np.asarray(keys)
    if keys.ndim != 1:
        raise ValueError(f"keys must be one-dimensional, got shape {keys.shape}.")
    if keys.dtype != np.uint64:
        if keys.dtype.kind not in "iu":
            raise ValueError(f"keys must be integers (e.g. uint64 hashes), got {keys.dtype}.")
        keys = keys.astype(np.int64).view(np.uint64)
    return mix64(np.bitwise_xor(keys, _seed_word(seed)))


def poisson_weights(states, start: int, stop: int, *, dtype=np.int64) -> np.ndarray:
    """Poisson(1) weights of the rows with ``states``, for replicates ``start`` to ``stop - 1``.

    Parameters
    ----------
    states : ndarray of uint64 of shape (n_rows,)
        From :func:`row_states`.
    start, stop : int
        Replicate range (``0 <= start < stop``).
    dtype : integer dtype, default=int64
        ``np.int8`` saves memory inside reductions (weights never exceed 127).

    Returns
    -------
    ndarray of shape (n_rows, stop - start)
        :math:`w_{rb}`, independent Poisson(1) across rows and replicates (up to the quality
        of SplitMix64), identical for a row wherever and whenever it is computed.

    Examples
    --------
    >>> h = row_states(np.arange(100_000), seed=0)
    >>> w = poisson_weights(h, 0, 20)
    >>> w.shape
    (100000, 20)
    >>> round(float(w.mean()), 2), round(float(w.var()), 2)
    (1.0, 1.0)
    >>> bool(np.array_equal(poisson_weights(h[5:9], 3, 7), w[5:9, 3:7]))
    True
    """
    states = np.asarray(states, dtype=np.uint64)
    start, stop = int(start), int(stop)
    if not 0 <= start < stop:
        raise ValueError(f"need 0 <= start < stop, got start={start}, stop={stop}.")
    out = np.empty((states.size, stop - start), dtype=np.int8)
    fill_poisson_weights(states, start, out, np.empty(out.shape, np.uint64),
                         np.empty(out.shape, np.uint64))
    return out.astype(dtype, copy=False)


def fill_poisson_weights(states, start, out, z, work):
    """:func:`poisson_weights` of replicates ``start .. start + out.shape[1] - 1`` written
    into the int8 array ``out``, with caller-owned ``uint64`` scratch buffers ``z`` and
    ``work`` of the same shape.

    Hot loops reuse their buffers: a worker process of ``dask.distributed`` sets
    ``MALLOC_TRIM_THRESHOLD_``, which makes every large temporary a fresh ``mmap`` (and page
    faults), more than doubling the cost of allocating versions.
    """
    width = out.shape[1]
    steps = np.arange(start + 1, start + width + 1, dtype=np.uint64) * _GAMMA
    np.add(states[:, None], steps[None, :], out=z)
    mix64(z, out=z, work=work)
    np.right_shift(z, np.uint64(64 - _BUCKET_BITS), out=work)
    np.take(_BUCKETS, work.view(np.int64), out=out)
    flat = out.reshape(-1)
    ambiguous = np.flatnonzero(flat < 0)
    if ambiguous.size:
        flat[ambiguous] = np.searchsorted(POISSON_THRESHOLDS, z.reshape(-1)[ambiguous],
                                          side="right")
    return out
