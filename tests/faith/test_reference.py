"""The FaiTH audit on a reference set fixed at fit (continuous features).

The estimand: an audit row ``z`` may move to a reference row (any protected level seen in fit),
to its own counterfactual twins, or stay; labels are kept. Tested against a generic LP solved
by HiGHS over exactly those moves, built here from the definition.
"""

import warnings

import numpy as np
import pytest
from scipy.optimize import linprog
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression

from skfair_audit.faith import EuclideanMetric, FaithAuditor

LEVELS = (0.0, 1.0)


def _draw(rng, n):
    group = rng.integers(0, 2, n).astype(float)
    X = np.column_stack([group, rng.normal(size=(n, 2)).round(1)])
    logit = X[:, 1] + 0.5 * X[:, 2] + 1.5 * group - 0.3
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    return X, y


def _model(rng):
    X, y = _draw(rng, 400)
    return FrozenEstimator(LogisticRegression().fit(X, y))


def _loss(model, X, y, kind):
    if kind == "zero_one":
        return (model.predict(X) != y).astype(float)
    proba = model.predict_proba(X)
    return -np.log(np.clip(proba[np.arange(len(y)), y], 1e-15, 1.0))


def _reference_lp(model, reference, X, y, epsilon, kind):
    """The audit LP over the moves of the definition, solved by HiGHS."""
    rows, counts = np.unique(np.column_stack([X, y]), axis=0, return_counts=True)
    f = counts / counts.sum()
    c_obj, a_eq_rows, cost_row = [], [], []
    for i, row in enumerate(rows):
        x, label = row[:-1], int(row[-1])
        moves = [x]
        for level in LEVELS:
            twin = x.copy()
            twin[0] = level
            moves.append(twin)
            for r in reference:
                dest = r.copy()
                dest[0] = level
                moves.append(dest)
        moves = np.array(moves)
        labels = np.full(len(moves), label)
        gain = _loss(model, moves, labels, kind) - _loss(model, x[None], labels[:1], kind)[0]
        cost = ((moves[:, 1:] - x[1:]) ** 2).sum(axis=1)
        c_obj.extend(-gain)
        a_eq_rows.append((i, len(moves)))
        cost_row.extend(cost)
    n_var = len(c_obj)
    A_eq = np.zeros((len(rows), n_var))
    start = 0
    for i, width in a_eq_rows:
        A_eq[i, start:start + width] = 1.0
        start += width
    res = linprog(c_obj, A_ub=np.array(cost_row)[None], b_ub=[epsilon], A_eq=A_eq, b_eq=f,
                  bounds=(0, None), method="highs")
    assert res.status == 0
    return -res.fun


@pytest.mark.parametrize("kind", ["zero_one", "log_loss"])
@pytest.mark.parametrize("epsilon", [0.0, 0.02, 0.3, 5.0])
def test_reference_audit_equals_the_lp_of_its_definition(kind, epsilon):
    rng = np.random.default_rng(3)
    model = _model(rng)
    reference, _ = _draw(rng, 15)
    X, y = _draw(rng, 25)
    auditor = FaithAuditor(
        model, protected=[0], metric=EuclideanMetric(columns=[1, 2]), loss=kind,
        epsilon=epsilon, reference=reference,
    ).fit(*_draw(rng, 50))
    assert auditor.space_kind_ == "reference"
    expected = _reference_lp(model, np.unique(reference, axis=0), X, y, epsilon, kind)
    assert auditor.audit_value(X, y) == pytest.approx(expected, abs=1e-9)


def test_dense_path_equals_the_nearest_neighbour_path():
    """A callable metric takes the dense K x K construction: same moves, same value."""
    from skfair_audit.faith import CallableMetric

    rng = np.random.default_rng(4)
    model = _model(rng)
    reference, _ = _draw(rng, 20)
    X, y = _draw(rng, 30)
    kwargs = dict(protected=[0], epsilon=0.1, reference=reference)
    sparse = FaithAuditor(model, metric=EuclideanMetric(columns=[1, 2]), **kwargs)
    dense = FaithAuditor(
        model, metric=CallableMetric(lambda a, b: np.sqrt(((a[1:] - b[1:]) ** 2).sum()),
                                     exponent=2),
        **kwargs,
    )
    train = _draw(rng, 50)
    assert sparse.fit(*train).audit_value(X, y) == pytest.approx(
        dense.fit(*train).audit_value(X, y), abs=1e-12)


def test_estimand_does_not_depend_on_the_other_audit_rows():
    """At ε = 0 the value is a mean of per-row terms: auditing two samples together gives the
    weighted mean of auditing them apart (the old empirical space let the rows of one sample
    be destinations of the other's)."""
    rng = np.random.default_rng(5)
    model = _model(rng)
    auditor = FaithAuditor(model, protected=[0], metric="protected_euclidean", epsilon=0.0)
    auditor.fit(*_draw(rng, 300))
    (Xa, ya), (Xb, yb) = _draw(rng, 200), _draw(rng, 600)
    joint = auditor.audit_value(np.vstack([Xa, Xb]), np.concatenate([ya, yb]))
    apart = (200 * auditor.audit_value(Xa, ya) + 600 * auditor.audit_value(Xb, yb)) / 800
    assert joint == pytest.approx(apart, abs=1e-12)
    # At ε > 0 the per-row hulls are fixed too: the curve of the joint sample lies between.
    auditor.set_params(epsilon=0.05)
    values = [auditor.audit_value(X, y) for X, y in ((Xa, ya), (Xb, yb))]
    joint = auditor.audit_value(np.vstack([Xa, Xb]), np.concatenate([ya, yb]))
    assert min(values) - 1e-12 <= joint


def test_auto_space_picks_the_reference_set_on_numeric_features():
    rng = np.random.default_rng(6)
    X, y = _draw(rng, 300)
    auditor = FaithAuditor(LogisticRegression(), protected=[0]).fit(X, y)
    assert auditor.space_kind_ == "reference"
    assert len(auditor.reference_) == np.unique(X, axis=0).shape[0]
    result = auditor.audit(*_draw(rng, 300))
    assert "reference" in result.guarantee()


def test_unseen_protected_level_warns_and_moves_no_one_there():
    rng = np.random.default_rng(7)
    model = _model(rng)
    auditor = FaithAuditor(model, protected=[0], epsilon=0.1, metric="protected_euclidean")
    auditor.fit(*_draw(rng, 200))
    X, y = _draw(rng, 100)
    X[:5, 0] = 2.0
    with pytest.warns(UserWarning, match="not seen in fit"):
        value = auditor.audit_value(X, y)
    assert 0.0 <= value <= 1.0


@pytest.mark.parametrize("bad, match", [
    (dict(method="bogus"), "method"),
    (dict(confidence_level=1.5), "confidence_level"),
    (dict(random_state="x"), "random_state"),
    (dict(n_jobs="x"), "n_jobs"),
    (dict(space="reference", metric="euclidean", reference=np.zeros((2, 2)), protected="g",
          features=None, epsilon=-1), "epsilon"),
    (dict(space="grid", reference=np.zeros((3, 3))), "reference"),
])
def test_bad_parameters_fail_in_fit(bad, match):
    rng = np.random.default_rng(8)
    with pytest.raises(ValueError, match=match):
        FaithAuditor(LogisticRegression(), **{"protected": [0], **bad}).fit(*_draw(rng, 50))


def test_saturation_budgets_and_warning():
    from skfair_audit.faith import SaturatedBudgetWarning

    rng = np.random.default_rng(9)
    model = _model(rng)
    auditor = FaithAuditor(model, protected=[0], metric="protected_euclidean", epsilon=0.01,
                           n_resamples=50, random_state=0).fit(*_draw(rng, 300))
    X, y = _draw(rng, 400)
    result = auditor.audit(X, y)
    half, most = result.saturation_budgets
    assert 0 < half < most
    # The budgets are where the exact curve crosses half and 95% of psi(infinity).
    top = result.max_statistic
    for epsilon, share in ((half, 0.5), (most, 0.95)):
        value = auditor.set_params(epsilon=epsilon).audit_value(X, y)
        assert value == pytest.approx(share * top, abs=1e-9)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SaturatedBudgetWarning)
        assert not auditor.set_params(epsilon=half).audit(X, y).budget_saturated
    with pytest.warns(SaturatedBudgetWarning, match="does not bind"):
        saturated = auditor.set_params(epsilon=100 * most).audit(X, y)
    assert saturated.budget_saturated and saturated.statistic >= 0.99 * top
    assert saturated.to_frame().loc[0, "budget_saturated"]


@pytest.mark.real_data
def test_first_audit_of_getting_started_on_continuous_adult(adult_continuous):
    """The getting-started call, unchanged, on Adult's continuous columns: the default
    space picks the reference set of the training rows."""
    from sklearn.model_selection import train_test_split

    X, y = adult_continuous
    X_train, X_audit, y_train, y_audit = train_test_split(
        X, y, test_size=0.3, random_state=0, stratify=y)
    model = LogisticRegression(max_iter=1000)
    auditor = FaithAuditor(model, protected=["race", "sex"], epsilon=0.0, delta=0.04,
                           random_state=0, n_resamples=200).fit(X_train, y_train)
    result = auditor.audit(X_audit, y_audit)
    assert auditor.space_kind_ == "reference"
    assert result.n == len(y_audit)
    assert "reference individuals fixed at fit" in result.guarantee()
    assert "FaiTH audit (uniform bounds" in str(result)


def test_bootstrap_identical_for_any_n_jobs_and_backend():
    """Row draws and the batch's matrix product: the same bits serially, with loky workers
    (fewer BLAS threads each) and with threads."""
    from joblib import parallel_config

    rng = np.random.default_rng(10)
    model = _model(rng)
    training = _draw(rng, 300)
    X, y = _draw(rng, 400)
    kwargs = dict(protected=[0], metric="protected_euclidean", epsilon=0.05, n_resamples=60,
                  batch_size=16, random_state=3)
    serial = FaithAuditor(model, **kwargs).fit(*training).audit(X, y)
    assert serial.n_cells > 400  # distinct continuous rows: the bootstrap draws the rows
    for backend in ("loky", "threading"):
        with parallel_config(backend=backend):
            parallel = FaithAuditor(model, n_jobs=2, **kwargs).fit(*training).audit(X, y)
        np.testing.assert_array_equal(parallel.bootstrap_distribution,
                                      serial.bootstrap_distribution)
        assert parallel.upper_bound == serial.upper_bound


def test_rows_settled_by_their_twins_are_not_searched_and_change_nothing(monkeypatch):
    """A row whose twin already errs for free is left out of the reference search; the
    problem's bases, segments and value are the ones built with every row searched, bit for
    bit, and the search's threads do not matter either."""
    from joblib import parallel_config

    import skfair_audit.faith._auditor as auditor_module

    rng = np.random.default_rng(11)
    model = _model(rng)
    training = _draw(rng, 300)
    X, y = _draw(rng, 500)
    for loss in ("zero_one", "log_loss"):
        auditor = FaithAuditor(model, protected=[0], metric="protected_euclidean",
                               loss=loss, epsilon=0.05).fit(*training)
        _, counts, fast = auditor._audit_problem(X, y)
        searched = []
        original = auditor_module.prepare_metric_transport

        def search_all(*args, unsearched=None, _log=searched, _build=original, **kwargs):
            _log.append(0 if unsearched is None else np.size(unsearched))
            return _build(*args, **kwargs)

        monkeypatch.setattr(auditor_module, "prepare_metric_transport", search_all)
        with parallel_config(backend="threading"):  # the patch holds in threads
            _, _, full = auditor.set_params(n_jobs=2)._audit_problem(X, y)
        monkeypatch.undo()
        if loss == "zero_one":
            assert searched[0] > 0  # the model uses the protected attribute: twins flip
        for name in ("base_gain", "support", "segment_row", "segment_cost", "segment_gain"):
            np.testing.assert_array_equal(getattr(fast, name), getattr(full, name))
        # Only ties between equally good free moves may resolve differently (the twin, or a
        # reference row at the same point: the data are rounded, so such rows exist).
        np.testing.assert_array_equal(fast.loss[fast.base_destination],
                                      full.loss[full.base_destination])
        f = counts / counts.sum()
        assert fast.value(f, 0.05) == full.value(f, 0.05)


def test_hull_vertices_of_a_row_do_not_depend_on_the_other_rows():
    from skfair_audit.faith._solver import hull_vertices

    rng = np.random.default_rng(12)
    model = _model(rng)
    X, y = _draw(rng, 400)
    auditor = FaithAuditor(model, protected=[0], metric="protected_euclidean",
                           loss="log_loss").fit(*_draw(rng, 200))
    _, _, problem = auditor._audit_problem(X, y)
    rows, cost, gain, _ = hull_vertices(problem)
    some = problem.support[1::3]
    part_rows, part_cost, part_gain, _ = hull_vertices(problem.restrict(some))
    mine = np.isin(rows, some)
    np.testing.assert_array_equal(part_rows, rows[mine])
    np.testing.assert_array_equal(part_cost, cost[mine])
    np.testing.assert_array_equal(part_gain, gain[mine])


def test_chunks_change_nothing_but_rounding_and_nothing_with_n_jobs(monkeypatch):
    """Many chunks: the same audit up to rounding as one chunk (a chunk's points come from
    its own matrix products), and the same bits for any n_jobs, backend or partitioning."""
    from joblib import parallel_config

    import skfair_audit.faith._auditor as auditor_module
    from skfair_audit.scale import partitioned_faith_audit

    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(13)
    model = _model(rng)
    training = _draw(rng, 300)
    X, y = _draw(rng, 900)
    kwargs = dict(protected=[0], metric="protected_euclidean", epsilon=0.05, n_resamples=80,
                  random_state=5, loss="log_loss")
    whole = FaithAuditor(model, **kwargs).fit(*training).audit(X, y)
    monkeypatch.setattr(auditor_module, "REFERENCE_CHUNK", 100)
    auditor = FaithAuditor(model, **kwargs).fit(*training)
    chunked = auditor.audit(X, y)
    assert chunked.n_cells == whole.n_cells
    assert chunked.statistic == pytest.approx(whole.statistic, rel=1e-12)
    assert chunked.upper_bound == pytest.approx(whole.upper_bound, rel=1e-12)
    for backend in ("loky", "threading"):
        with parallel_config(backend=backend):
            parallel = FaithAuditor(model, n_jobs=2, **kwargs).fit(*training).audit(X, y)
        assert parallel.statistic == chunked.statistic
        np.testing.assert_array_equal(parallel.bootstrap_distribution,
                                      chunked.bootstrap_distribution)
    frame = pd.DataFrame(X).assign(label=y)
    parts = [frame.iloc[i:i + 250] for i in range(0, 900, 250)]
    partitioned = partitioned_faith_audit(parts[::-1], auditor, label="label")
    assert partitioned.statistic == chunked.statistic
    np.testing.assert_array_equal(partitioned.bootstrap_distribution,
                                  chunked.bootstrap_distribution)
