"""The declarative parameter validation and the seed helper."""

import numbers

import numpy as np
import pytest

from skfair_audit._utils import (
    CALLABLE,
    PROBABILITY,
    RANDOM_STATE,
    InstanceOf,
    Interval,
    InvalidParameterError,
    Options,
    check_params,
    int_seed,
    seed_sequence,
    validate_params,
)


@pytest.mark.parametrize(("constraint", "good", "bad"), [
    (Interval("real", 0, 1, closed="neither"), [0.5, np.float32(0.1)], [0, 1, True, "0.5",
                                                                          np.nan]),
    (Interval("integral", 1, None), [1, np.int64(7)], [0, 1.0, True]),
    (Interval("real", 0, None, closed="right", allow_inf=True), [0.1, np.inf],
     [0, -np.inf, np.nan]),
    (Interval("real", 0, None), [0.0, 3.0], [np.inf, -1]),
    (Interval("real"), [-3.5, 0], [np.inf, np.nan, None]),
    (Options(("a", "b")), ["a", np.str_("b")], ["c", None, ["a"]]),
    (InstanceOf((str,), "a string"), ["x"], [1]),
    (CALLABLE, [len], [1]),
    (RANDOM_STATE, [None, 0, np.random.RandomState(0), np.random.default_rng(0),
                    np.random.SeedSequence(0)], [-1, 1.5, "x", True]),
])
def test_constraints(constraint, good, bad):
    for value in good:
        assert constraint.is_satisfied_by(value), value
    for value in bad:
        assert not constraint.is_satisfied_by(value), value


def test_messages_name_the_parameter_and_what_it_may_be():
    with pytest.raises(InvalidParameterError, match=r"alpha must be a number in \(0, 1\)"):
        check_params({"alpha": 1.5}, {"alpha": [PROBABILITY]})
    with pytest.raises(ValueError, match="n must be None or a positive integer"):
        check_params({"n": 0}, {"n": [None, Interval("integral", 1, None)]})
    # an InvalidParameterError is a ValueError and a TypeError
    assert issubclass(InvalidParameterError, ValueError)
    assert issubclass(InvalidParameterError, TypeError)


def test_decorator_validates_at_entry_and_keeps_the_signature():
    @validate_params({"q": [PROBABILITY], "kind": [Options(("x", "y"))]})
    def f(a, *, q=0.1, kind="x"):
        """Doc."""
        return a, q, kind

    assert f(1, q=0.2) == (1, 0.2, "x")
    with pytest.raises(ValueError, match="kind must be one of 'x', 'y'"):
        f(1, kind="z")
    assert f.__doc__ == "Doc." and list(f.parameter_constraints) == ["q", "kind"]
    with pytest.raises(TypeError, match="unknown parameters"):
        validate_params({"nope": [PROBABILITY]})(f.__wrapped__)


def test_estimator_validates_in_fit_not_in_init():
    from sklearn.linear_model import LogisticRegression

    from skfair_audit.group import GroupDisparityAuditor

    auditor = GroupDisparityAuditor(LogisticRegression(), alpha=2.0)  # stored, not checked
    with pytest.raises(ValueError, match="alpha must be a number in"):
        auditor.fit(np.zeros((4, 1)), [0, 1, 0, 1])


def test_seed_helper():
    assert seed_sequence(3).entropy == 3
    assert int_seed(5) == 5
    for rs in (np.random.RandomState(0), np.random.default_rng(0), np.random.SeedSequence(1),
               None):
        seed = int_seed(rs)
        assert isinstance(seed, numbers.Integral) and 0 <= seed < 2**31
    # a Generator is advanced: two calls give two seeds, reproducibly
    g1, g2 = np.random.default_rng(0), np.random.default_rng(0)
    assert [int_seed(g1), int_seed(g1)] == [int_seed(g2), int_seed(g2)]
    with pytest.raises(ValueError, match="non-negative"):
        int_seed(-1)
    with pytest.raises(ValueError, match="random_state must be"):
        seed_sequence("seed")
