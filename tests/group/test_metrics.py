import dataclasses

import numpy as np
import pytest

from skfair_audit.group import Metric, available_metrics, get_metric


def test_fpr_conditions_on_requested_label_with_strings():
    y = np.array(["no", "no", "no", "yes", "yes"])
    y_pred = np.array(["yes", "no", "no", "yes", "no"])
    values, rows = get_metric("false_positive_rate", pos_label="yes").evaluate(y, y_pred)
    assert rows.tolist() == [True, True, True, False, False]
    assert values[rows].mean() == pytest.approx(1 / 3)
    # fairaudit ignored the requested label: with pos_label="no" the roles swap
    values, rows = get_metric("fpr", pos_label="no").evaluate(y, y_pred)
    assert rows.tolist() == [False, False, False, True, True]
    assert values[rows].mean() == pytest.approx(1 / 2)  # row 4 predicted "no" = positive


def test_pos_label_zero_on_integer_labels():
    y = np.array([0, 0, 1, 1, 1])
    y_pred = np.array([1, 0, 0, 1, 0])
    _, rows = get_metric("fpr", pos_label=0).evaluate(y, y_pred)
    assert rows.tolist() == [False, False, True, True, True]
    _, rows = get_metric("fpr").evaluate(y, y_pred)
    assert rows.tolist() == [True, True, False, False, False]


@pytest.mark.parametrize(
    "name, expected_rows, expected_mean",
    [
        ("tpr", [False, False, True, True], 0.5),
        ("fnr", [False, False, True, True], 0.5),
        ("ppv", [True, False, True, False], 0.5),
        ("npv", [False, True, False, True], 0.5),
        ("tnr", [True, True, False, False], 0.5),
    ],
)
def test_binary_metric_definitions(name, expected_rows, expected_mean):
    y = np.array([0, 0, 1, 1])
    y_pred = np.array([1, 0, 1, 0])
    values, rows = get_metric(name).evaluate(y, y_pred)
    assert rows.tolist() == expected_rows
    assert values[rows].mean() == expected_mean


def test_unconditional_metrics():
    y = np.array([0, 1, 1, 0])
    y_pred = np.array([1, 1, 0, 0])
    values, rows = get_metric("error_rate").evaluate(y, y_pred)
    assert rows.all() and values.tolist() == [1, 0, 1, 0]
    values, _ = get_metric("selection_rate").evaluate(y, y_pred)
    assert values.tolist() == [1, 1, 0, 0]
    values, _ = get_metric("squared_error").evaluate([1.0, 2.0], [0.5, 4.0])
    assert values.tolist() == [0.25, 4.0]


def test_metric_params_are_not_shared():
    a = get_metric("fpr", pos_label="a")
    b = get_metric("fpr")
    assert a.parameters == {"pos_label": "a"}
    assert b.parameters == {}
    a.parameters["pos_label"] = "z"  # a copy: the metric is unchanged
    assert a.parameters == {"pos_label": "a"}
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.params = ()
    # the default metric still infers 1 as positive, unaffected by the other instance
    _, rows = b.evaluate(np.array([0, 1]), np.array([0, 1]))
    assert rows.tolist() == [True, False]


def test_nan_predictions_raise():
    with pytest.raises(ValueError, match="NaN"):
        get_metric("fpr").evaluate(np.array([0, 1]), np.array([np.nan, 1.0]))
    with pytest.raises(ValueError, match="NaN"):
        get_metric("squared_error").evaluate(np.array([0.0, 1.0]), np.array([np.nan, 1.0]))


def test_labels_outside_domain_are_named():
    with pytest.raises(ValueError, match="maybe"):
        get_metric("fpr", pos_label="yes").evaluate(
            np.array(["no", "yes"]), np.array(["maybe", "yes"])
        )
    with pytest.raises(ValueError, match="pos_label"):
        get_metric("fpr").evaluate(np.array(["a", "b"]), np.array(["a", "b"]))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        get_metric("calibration").evaluate(np.array([0, 1]), np.array([0.5, 1.5]))


def test_mismatched_lengths():
    with pytest.raises(ValueError, match="lengths"):
        get_metric("error_rate").evaluate([0, 1, 1], [0, 1])


def test_coverage_intervals_and_sets():
    y = np.array([1.0, 5.0, 2.0])
    sets = np.array([[0.0, 2.0], [0.0, 2.0], [2.0, 3.0]])
    values, _ = get_metric("coverage").evaluate(y, sets)
    assert values.tolist() == [1.0, 0.0, 1.0]
    membership = np.array([[True, False], [True, True], [False, True]])
    values, _ = get_metric("coverage", classes=["a", "b"]).evaluate(
        np.array(["a", "a", "a"]), membership
    )
    assert values.tolist() == [1.0, 1.0, 0.0]
    with pytest.raises(ValueError, match="not columns"):
        get_metric("coverage", classes=["a", "b"]).evaluate(np.array(["c"] * 3), membership)


def test_calibration_bin_and_residual():
    y = np.array([1, 0, 1, 1])
    scores = np.array([0.1, 0.15, 0.6, 1.0])
    values, rows = get_metric("calibration", bin=(0.5, 1.0)).evaluate(y, scores)
    assert rows.tolist() == [False, False, True, True]
    assert values[rows].tolist() == [1.0, 1.0]
    values, _ = get_metric("calibration_residual").evaluate(y, scores)
    np.testing.assert_allclose(values, [0.9, -0.15, 0.4, 0.0])


def test_custom_callable_with_condition_and_bounds():
    metric = get_metric(
        lambda y, p: np.abs(y - p), condition=lambda y, p: y > 0, bounds=(0, 1), name="abs"
    )
    values, rows = metric.evaluate(np.array([0.0, 1.0, 2.0]), np.array([0.0, 0.5, 1.5]))
    assert metric.name == "abs"
    assert rows.tolist() == [False, True, True]
    assert values[rows].tolist() == [0.5, 0.5]
    bad = get_metric(lambda y, p: y - p, bounds=(0, 1))
    with pytest.raises(ValueError, match="outside its domain"):
        bad.evaluate(np.array([0.0]), np.array([1.0]))


def test_pandas_inputs():
    pd = pytest.importorskip("pandas")
    y = pd.Series(["n", "y", "n"], index=[10, 20, 30])
    y_pred = pd.Series(["y", "y", "n"], index=[3, 2, 1])
    values, rows = get_metric("fpr", pos_label="y").evaluate(y, y_pred)
    assert values[rows].tolist() == [1.0, 0.0]


def test_unknown_names_and_params():
    with pytest.raises(ValueError, match="unknown metric"):
        get_metric("auc")
    with pytest.raises(ValueError, match="does not take"):
        get_metric("fpr", pos=1)
    assert isinstance(get_metric(get_metric("ppv")), Metric)
    assert "false_positive_rate" in available_metrics()
