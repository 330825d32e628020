"""The one categorical encoder and its missing-value rule, against plain Python references."""

import numpy as np
import pytest

from skfair_audit._utils import encode_categories, level_codes, missing_mask

pd = pytest.importorskip("pandas")


def _reference(values):
    """Sorted distinct values and the position of every value among them (pure Python)."""
    levels = sorted(set(values))
    return [levels.index(v) for v in values], levels


@pytest.mark.parametrize("make", [
    lambda v: np.array(v, dtype=object),
    lambda v: np.array(v),
    lambda v: pd.Series(v, dtype=object),
    lambda v: pd.Series(v, dtype="str"),
    lambda v: pd.Series(v, dtype="string"),
    lambda v: list(v),
])
def test_strings_every_container(make):
    values = ["b", "c", "a", "b", "c", "c"]
    codes, levels = encode_categories(make(values))
    ref_codes, ref_levels = _reference(values)
    assert levels == ref_levels and codes.tolist() == ref_codes
    assert codes.dtype == np.int8


@pytest.mark.parametrize("dtype", [np.int8, np.int64, np.uint16, float, bool])
def test_numbers(dtype):
    rng = np.random.default_rng(0)
    values = rng.integers(-3, 4, 1000) if dtype is not bool else rng.integers(0, 2, 1000)
    values = values.astype(dtype)
    codes, levels = encode_categories(values)
    ref_codes, ref_levels = _reference(values.tolist())
    assert levels == ref_levels and codes.tolist() == ref_codes
    assert all(type(v) is type(values.tolist()[0]) for v in levels)


def test_large_integer_range_and_non_integral_floats():
    values = np.array([10**12, -5, 10**12, 7])
    codes, levels = encode_categories(values)
    assert levels == [-5, 7, 10**12] and codes.tolist() == [2, 0, 2, 1]
    codes, levels = encode_categories(np.array([0.5, -1.25, 0.5]))
    assert levels == [-1.25, 0.5] and codes.tolist() == [1, 0, 1]


def test_categories_keep_their_order_and_unused_levels():
    values = pd.Categorical(["m", "f", "m"], categories=["m", "f", "x"])
    codes, levels = encode_categories(pd.Series(values))
    assert levels == ["m", "f", "x"] and codes.tolist() == [0, 1, 0]


def test_mixed_types_sort_by_repr():
    codes, levels = encode_categories(np.array(["x", 1, "x"], dtype=object))
    assert levels == sorted(["x", 1], key=repr) and codes.tolist() == [0, 1, 0]


@pytest.mark.parametrize("missing", [None, np.nan, pd.NA, pd.NaT])
@pytest.mark.parametrize("container", ["object", "series", "categorical"])
def test_every_missing_value_is_refused_with_the_column_named(missing, container):
    values = ["a", missing, "b"]
    if container == "object":
        data = np.array(values, dtype=object)
    elif container == "series":
        data = pd.Series(values, dtype=object)
    else:
        data = pd.Series(pd.Categorical(values))
    with pytest.raises(ValueError, match=r"'race' has 1 missing value"):
        encode_categories(data, "'race'")
    assert missing_mask(np.array(values, dtype=object)).tolist() == [False, True, False]


def test_float_nan_and_nullable_integers():
    with pytest.raises(ValueError, match="2 missing"):
        encode_categories(np.array([1.0, np.nan, np.nan]))
    with pytest.raises(ValueError, match="1 missing"):
        encode_categories(pd.Series([1, None, 2], dtype="Int64"))


def test_level_codes_against_given_levels():
    assert level_codes(np.array(["b", "a"]), ["a", "b", "c"]).tolist() == [1, 0]
    assert level_codes(np.array([1.0, 0.0]), np.array([0, 1])).tolist() == [1, 0]
    with pytest.raises(ValueError, match="not levels of the sample space: 'z'"):
        level_codes(np.array(["a", "z"]), ["a", "b"], "feature 'f'")


def test_intersections_faith_and_metrics_share_the_rule():
    """The same missing value is refused by the group collection, the FaiTH sample space and
    the metric, instead of becoming a group ``g=<NA>`` in one and an error in another."""
    from skfair_audit.faith import GridSpace
    from skfair_audit.group import get_metric, intersections

    frame = pd.DataFrame({"g": pd.array(["a", pd.NA, "b", "a"], dtype="string"),
                          "y": [0, 1, 0, 1]})
    with pytest.raises(ValueError, match="missing"):
        intersections(frame[["g"]])
    with pytest.raises(ValueError, match="missing"):
        GridSpace.from_data(frame[["g"]], frame.y, ["g"])
    with pytest.raises(ValueError, match="missing"):
        get_metric("fpr").evaluate(np.array([0, 1, None], dtype=object), np.array([0, 1, 1]))
