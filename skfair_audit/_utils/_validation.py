"""Declarative parameter validation (our own: scikit-learn's is private API).

Every public function states the admissible values of its parameters in a dictionary,
``{"alpha": [Interval("real", 0, 1, closed="neither")], ...}``, checked at entry by the
:func:`validate_params` decorator; estimators hold the same kind of dictionary in
``_parameter_constraints`` and check it in ``fit`` with :func:`check_params`. A value is
valid when it satisfies *one* of its constraints; otherwise :class:`InvalidParameterError`
(a ``ValueError`` and a ``TypeError``) names the parameter, what it may be and what it got.

Constraints: :class:`Interval`, :class:`Options`, :class:`InstanceOf`, :class:`Predicate`,
``None`` (the value ``None``) and the ready-made :data:`RANDOM_STATE`, :data:`CALLABLE`,
:data:`ARRAY_LIKE`.
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
from abc import ABC, abstractmethod
from dataclasses import dataclass

from ._seeds import RANDOM_STATE_TYPES, is_random_state


class InvalidParameterError(ValueError, TypeError):
    """A parameter has a value outside its declared constraints."""


class Constraint(ABC):
    """A set of admissible values with a description in words."""

    description = "valid"

    @abstractmethod
    def is_satisfied_by(self, value) -> bool:
        """Whether ``value`` is admissible.

        Parameters
        ----------
        value : object

        Returns
        -------
        bool
        """

    def __str__(self):
        return self.description


@dataclass(frozen=True)
class Interval(Constraint):
    """Numbers (``"real"``, ``"integral"``) in ``[left, right]`` (``None``: unbounded).

    A constraint of a declared parameter (:class:`skfair_audit.group.Parameter`).

    Parameters
    ----------
    kind : {"real", "integral"}
        Real numbers (finite unless ``allow_inf``) or integers (not bools).
    left, right : float or None, default=None
        The bounds; None leaves a side unbounded.
    closed : {"both", "left", "right", "neither"}, default="both"
        Which bounds belong to the interval.
    allow_inf : bool, default=False
        Whether an unbounded side admits the infinity.
    """

    kind: str
    left: float | None = None
    right: float | None = None
    closed: str = "both"
    allow_inf: bool = False

    def is_satisfied_by(self, value) -> bool:
        if isinstance(value, bool):
            return False
        if self.kind == "integral":
            if not isinstance(value, numbers.Integral):
                return False
            value = int(value)
        else:
            if not isinstance(value, numbers.Real):
                return False
            value = float(value)
            if math.isnan(value) or (math.isinf(value) and not self.allow_inf):
                return False
        low_closed = self.closed in ("both", "left")
        high_closed = self.closed in ("both", "right")
        if self.left is not None and (value < self.left or (value == self.left
                                                            and not low_closed)):
            return False
        if self.right is not None and (value > self.right or (value == self.right
                                                              and not high_closed)):
            return False
        if math.isinf(value) and ((value > 0 and self.right is not None)
                                  or (value < 0 and self.left is not None)):
            return False
        return True

    is_satisfied_by.__doc__ = Constraint.is_satisfied_by.__doc__

    @property
    def description(self):
        noun = "an integer" if self.kind == "integral" else (
            "a number" if self.allow_inf else "a finite number")
        if self.left is None and self.right is None:
            return noun
        if self.kind == "real" and not self.allow_inf:
            noun = "a number"
        if self.right is None:
            sign = ">=" if self.closed in ("both", "left") else ">"
            if self.kind == "integral" and sign == ">=" and self.left in (0, 1):
                return "a positive integer" if self.left == 1 else "a non-negative integer"
            return f"{noun} {sign} {self.left:g}" + (" (inf allowed)" if self.allow_inf else "")
        if self.left is None:
            sign = "<=" if self.closed in ("both", "right") else "<"
            return f"{noun} {sign} {self.right:g}"
        low = "[" if self.closed in ("both", "left") else "("
        high = "]" if self.closed in ("both", "right") else ")"
        return f"{noun} in {low}{self.left:g}, {self.right:g}{high}"


@dataclass(frozen=True)
class Options(Constraint):
    """One of a finite set of values (compared with ``==``, strings case-sensitively).

    A constraint of a declared parameter (:class:`skfair_audit.group.Parameter`).

    Parameters
    ----------
    values : tuple
        The admissible values.
    """

    values: tuple

    def is_satisfied_by(self, value) -> bool:
        try:
            return any(isinstance(value, type(v)) and bool(value == v) for v in self.values)
        except (TypeError, ValueError):
            return False

    is_satisfied_by.__doc__ = Constraint.is_satisfied_by.__doc__

    @property
    def description(self):
        return "one of " + ", ".join(repr(v) for v in self.values)


@dataclass(frozen=True)
class InstanceOf(Constraint):
    """An instance of one of ``types``."""

    types: tuple
    description: str

    def is_satisfied_by(self, value) -> bool:
        return isinstance(value, self.types) and not (
            isinstance(value, bool) and bool not in self.types)


@dataclass(frozen=True)
class Predicate(Constraint):
    """Any value for which ``test(value)`` is true."""

    test: object
    description: str

    def is_satisfied_by(self, value) -> bool:
        try:
            return bool(self.test(value))
        except Exception:  # noqa: BLE001 - a failing test means "not satisfied"
            return False


def _is_array_like(value):
    return hasattr(value, "__len__") or hasattr(value, "__array__") or hasattr(value, "shape")


RANDOM_STATE = Predicate(is_random_state, RANDOM_STATE_TYPES)
CALLABLE = Predicate(callable, "a callable")
ARRAY_LIKE = Predicate(_is_array_like, "array-like")
BOOLEAN = InstanceOf((bool,), "a bool")
STRING = InstanceOf((str,), "a string")
POSITIVE_INT = Interval("integral", 1, None)
N_JOBS = [None, Interval("integral", None, None)]
#: ``verbose``: 0 / False silent, otherwise a progress bar (:mod:`skfair_audit._progress`).
VERBOSE = [BOOLEAN, Interval("integral", 0, None)]
PROBABILITY = Interval("real", 0, 1, closed="neither")


def _is_column_list(value):
    try:
        items = list(value)
    except TypeError:
        return False
    return all(isinstance(v, str | numbers.Integral) and not isinstance(v, bool)
               for v in items) and len(items) > 0


#: A non-empty list of column names or positions (e.g. ``protected=["race", "sex"]``).
COLUMN_LIST = Predicate(_is_column_list, "a list of column names or positions")


def _describe(constraints):
    words = ["None" if c is None else str(c) for c in constraints]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def validate_value(name, value, constraints, caller=None):
    """Raise :class:`InvalidParameterError` unless ``value`` satisfies one constraint."""
    for constraint in constraints:
        if constraint is None:
            if value is None:
                return
        elif constraint.is_satisfied_by(value):
            return
    where = f" (in {caller})" if caller else ""
    raise InvalidParameterError(
        f"{name} must be {_describe(constraints)}{where}, got {value!r}."
    )


def check_params(params: dict, constraints: dict, caller=None) -> None:
    """Check every parameter of ``params`` that has an entry in ``constraints``.

    Examples
    --------
    >>> check_params({"alpha": 0.1}, {"alpha": [PROBABILITY]})
    >>> check_params({"alpha": 2}, {"alpha": [PROBABILITY]})
    Traceback (most recent call last):
    ...
    skfair_audit._utils._validation.InvalidParameterError: alpha must be a number in (0, 1), got 2.
    """
    for name, value in params.items():
        if name in constraints:
            validate_value(name, value, constraints[name], caller)


def validate_params(constraints: dict):
    """Decorator: check the arguments of a function against ``constraints`` at every call.

    Examples
    --------
    >>> @validate_params({"q": [PROBABILITY]})
    ... def flag(q=0.1):
    ...     return q
    >>> flag(0.2)
    0.2
    >>> flag(q=0)
    Traceback (most recent call last):
    ...
    skfair_audit._utils._validation.InvalidParameterError: q must be a number in (0, 1), got 0.
    """

    def decorate(function):
        signature = inspect.signature(function)
        unknown = set(constraints) - set(signature.parameters)
        if unknown:
            raise TypeError(f"constraints for unknown parameters {sorted(unknown)} of "
                            f"{function.__name__}.")

        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            check_params(bound.arguments, constraints)
            return function(*args, **kwargs)

        wrapper.parameter_constraints = constraints
        return wrapper

    return decorate


# --------------------------------------------------------------------------- columns
def column_list(columns) -> list:
    """``protected``-style columns as a list: None is none, one name or position a list of
    one (so ``protected="group"`` is one column, not five letters)."""
    if columns is None:
        return []
    if isinstance(columns, str | numbers.Integral):
        return [columns]
    return list(columns)


def column_positions(columns, names, what="protected attribute", *, by_position=True) -> list:
    """Positions of ``columns`` among the columns ``names`` of the data.

    The one resolver of the estimators' ``protected``: a column is found by its name, or,
    when it is an integer that is not a name, by its position (negative from the end).

    Parameters
    ----------
    columns : None, name, position or sequence of them
    names : sequence
        The data's columns in order (a DataFrame's names, or ``range(n_features)``).
    what : str
        What the columns are, for the error message.
    by_position : bool, default=True
        Whether an integer that is not a name is a position (False: names only, e.g. the
        features of a sample space, which are named by the columns themselves).

    Returns
    -------
    list of int
    """
    names = list(names)
    positions = []
    for column in column_list(columns):
        if column in names:
            positions.append(names.index(column))
        elif by_position and isinstance(column, numbers.Integral) and not isinstance(
                column, bool) and -len(names) <= column < len(names):
            positions.append(int(column) % len(names))
        else:
            raise ValueError(f"{what} {column!r} is not a column of X (columns: "
                             f"{names[:20]}{' ...' if len(names) > 20 else ''}).")
    return positions
