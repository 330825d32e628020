"""The one seed helper: every ``random_state`` of the library goes through here.

A ``random_state`` may be ``None`` (fresh entropy), a non-negative int, a
:class:`numpy.random.RandomState`, a :class:`numpy.random.Generator` or a
:class:`numpy.random.SeedSequence` — everywhere: auditors, the model selector, the functional
API, the partitioned audits and the command line.
"""

from __future__ import annotations

import numbers

import numpy as np

#: What the docstrings say a ``random_state`` may be.
RANDOM_STATE_TYPES = "None, int, numpy RandomState, Generator or SeedSequence"


def seed_sequence(random_state) -> np.random.SeedSequence:
    """Turn a scikit-learn style ``random_state`` into a :class:`~numpy.random.SeedSequence`.

    Parameters
    ----------
    random_state : None, int, numpy.random.RandomState, numpy.random.Generator or SeedSequence
        ``None`` draws fresh OS entropy. An int gives a reproducible sequence. A
        ``RandomState``/``Generator`` is advanced by one draw, so that successive calls with
        the same instance give different (but reproducible) sequences, as in scikit-learn.

    Returns
    -------
    numpy.random.SeedSequence

    Examples
    --------
    >>> seed_sequence(0).entropy
    0
    """
    if random_state is None:
        return np.random.SeedSequence()
    if isinstance(random_state, np.random.SeedSequence):
        return random_state
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        if random_state < 0:
            raise ValueError(f"random_state must be non-negative, got {random_state}.")
        return np.random.SeedSequence(int(random_state))
    if isinstance(random_state, np.random.RandomState):
        return np.random.SeedSequence(int(random_state.randint(0, 2**31 - 1)))
    if isinstance(random_state, np.random.Generator):
        return np.random.SeedSequence(int(random_state.integers(0, 2**63 - 1)))
    raise ValueError(f"random_state must be {RANDOM_STATE_TYPES}; got {random_state!r}.")


def int_seed(random_state) -> int:
    """One integer seed in ``[0, 2**31)`` for APIs that take an int (scikit-learn splitters).

    An int is returned unchanged (so that ``random_state=s`` means the same thing in every
    object); anything else goes through :func:`seed_sequence`.

    Examples
    --------
    >>> int_seed(7)
    7
    >>> 0 <= int_seed(np.random.default_rng(0)) < 2**31
    True
    """
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        seed_sequence(random_state)  # validates the sign
        return int(random_state)
    return int(seed_sequence(random_state).generate_state(1)[0] >> np.uint32(1))


def is_random_state(value) -> bool:
    """Whether ``value`` is an accepted ``random_state``."""
    return value is None or isinstance(
        value, (np.random.RandomState, np.random.Generator, np.random.SeedSequence)
    ) or (isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= 0)
