"""The real engine: a local ``dask.distributed`` cluster (2 worker processes, loopback only).

One module-scoped cluster; small data. Checks that partitioned audits on Dask equal the
in-memory results bit for bit (discrete metric) and the chunked results (Poisson bootstrap),
that repartitioning changes nothing, that the joblib Dask backend gives the serial results,
and that losing a worker mid-run gives either the in-memory answer or a clear error.
"""

import concurrent.futures
import os
import time
import warnings

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")
dd = pytest.importorskip("dask.dataframe")
pd = pytest.importorskip("pandas")

import joblib  # noqa: E402
from sklearn.base import clone  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import OneHotEncoder  # noqa: E402

from skfair_audit.faith import DegenerateMetricWarning, FaithAuditor  # noqa: E402
from skfair_audit.group import certify_bounds, flag_groups  # noqa: E402
from skfair_audit.scale import (  # noqa: E402
    partitioned_cell_counts,
    partitioned_certify_bounds,
    partitioned_faith_audit,
    partitioned_flag_groups,
)

ATTRS = ["race", "age", "sex"]
# The toy model's decisions follow the group, which a FaiTH audit at a small budget flips for
# free: it says so with a DegenerateMetricWarning (the verdict stands).
DECIDES_BY_GROUP = "decides? by the protected attributes alone"


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
        dashboard_address=":0", silence_logs=50,  # any free port: 8787 may be taken
    ) as cluster, distributed.Client(cluster) as c:
        yield c


def _trail(n, seed=0):
    rng = np.random.default_rng(seed)
    race = rng.choice(["A", "B", "C", "D"], n, p=[0.4, 0.3, 0.2, 0.1])
    y = rng.integers(0, 2, n)
    flip = rng.random(n) < np.where(race == "D", 0.3, 0.15)
    frame = pd.DataFrame({
        "race": race, "age": rng.choice(["<25", "25-45", ">45"], n),
        "sex": rng.choice(["F", "M"], n), "y": y, "y_pred": np.where(flip, 1 - y, y),
    })
    frame.index = rng.permutation(n)  # unique row ids, not in row order
    return frame


def _chunks(frame, k):
    return [frame.iloc[i::k] for i in range(k)]


BOUNDS = dict(label="y", prediction="y_pred", protected=ATTRS, metric="error_rate",
              alternative="two-sided", n_resamples=200, random_state=3)


def _in_memory(frame, **kwargs):
    kwargs = {k: v for k, v in {**BOUNDS, **kwargs}.items()
              if k not in ("label", "prediction", "protected")}
    return certify_bounds(frame.y, frame.y_pred, frame[ATTRS], **kwargs)


def _assert_identical(res, ref):
    assert res.names == ref.names and res.critical_value == ref.critical_value
    for name in ("bootstrap_distribution", "lower", "upper", "estimates"):
        np.testing.assert_array_equal(getattr(res, name), getattr(ref, name), err_msg=name)


def test_dask_group_audit_is_the_in_memory_audit_whatever_the_partitioning(client):
    frame = _trail(8000)
    expected = _in_memory(frame)
    ddf = dd.from_pandas(frame, npartitions=4)
    for trail in (ddf, ddf.repartition(npartitions=3), ddf.repartition(npartitions=9)):
        res = partitioned_certify_bounds(trail, **BOUNDS)
        assert res.bootstrap == "multinomial"
        _assert_identical(res, expected)
    flags = partitioned_flag_groups(ddf, label="y", prediction="y_pred", protected=ATTRS,
                                    metric="fpr", epsilon0=0.02)
    ref = flag_groups(frame.y, frame.y_pred, frame[ATTRS], metric="fpr", epsilon0=0.02)
    np.testing.assert_array_equal(flags.pvalues, ref.pvalues)
    # the Poisson bootstrap (forced here) is partition-invariant too
    poisson = [partitioned_certify_bounds(t, bootstrap="poisson", **BOUNDS)
               for t in (ddf, ddf.repartition(npartitions=7))]
    assert poisson[0].bootstrap == "poisson"
    np.testing.assert_array_equal(poisson[0].bootstrap_distribution,
                                  poisson[1].bootstrap_distribution)


def test_dask_errors_are_raised_on_the_driver(client):
    ddf = dd.from_pandas(_trail(500).assign(race=lambda f: f.race.where(f.y == 1)),
                         npartitions=2)
    with pytest.raises(ValueError, match="missing value"):
        partitioned_certify_bounds(ddf, **BOUNDS)
    with pytest.raises(ValueError, match="not in the audit trail"):
        partitioned_certify_bounds(ddf, **{**BOUNDS, "protected": ["nope"]})


def _faith_data(n, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"group": rng.choice(["a", "b"], n),
                      "priors": rng.choice(["0", "1-3", ">3"], n)})
    y = (rng.random(n) < np.where(X.group == "b", 0.6, 0.3)).astype(int)
    return X, y


def test_dask_faith_counts_and_audit_equal_in_memory(client):
    X, y = _faith_data(3000)
    auditor = FaithAuditor(make_pipeline(OneHotEncoder(), LogisticRegression()),
                           protected=["group"], epsilon=0.0, n_resamples=200,
                           random_state=0).fit(X, y)
    trail = dd.from_pandas(X.assign(y=y), npartitions=5)
    counts = partitioned_cell_counts(trail, auditor, label="y")
    np.testing.assert_array_equal(counts, auditor.space_.counts(X, y))
    with pytest.warns(DegenerateMetricWarning, match=DECIDES_BY_GROUP):
        res = partitioned_faith_audit(trail, auditor, label="y")
        ref = auditor.audit(X, y)
    assert res.statistic == ref.statistic
    np.testing.assert_array_equal(res.bootstrap_distribution, ref.bootstrap_distribution)
    assert (res.lower_bound, res.upper_bound) == (ref.lower_bound, ref.upper_bound)


def test_dask_reference_audit_equals_in_memory(client):
    rng = np.random.default_rng(5)
    X = pd.DataFrame({"group": rng.integers(0, 2, 4000).astype(float),
                      "income": rng.normal(size=4000), "age": rng.normal(size=4000)})
    y = (rng.random(4000) < 1 / (1 + np.exp(-X.income - 0.8 * X.group))).astype(int)
    auditor = FaithAuditor(LogisticRegression(), protected=["group"], epsilon=0.05,
                           n_resamples=200, random_state=0).fit(X[:1000], y[:1000])
    trail = dd.from_pandas(X[1000:].assign(y=y[1000:]), npartitions=7)
    res = partitioned_faith_audit(trail, auditor, label="y")
    ref = auditor.audit(X[1000:], y[1000:])
    assert res.statistic == ref.statistic
    np.testing.assert_array_equal(res.bootstrap_distribution, ref.bootstrap_distribution)
    assert (res.lower_bound, res.upper_bound) == (ref.lower_bound, ref.upper_bound)


def test_joblib_dask_backend_equals_serial_faith_audit(client):
    X, y = _faith_data(2000, seed=1)
    auditor = FaithAuditor(make_pipeline(OneHotEncoder(), LogisticRegression()),
                           protected=["group"], epsilon=0.05, n_resamples=240, batch_size=40,
                           random_state=0).fit(X, y)
    with pytest.warns(DegenerateMetricWarning, match=DECIDES_BY_GROUP):
        serial = auditor.audit(X, y)
    parallel_auditor = clone(auditor).set_params(n_jobs=2).fit(X, y)
    with joblib.parallel_config(backend="dask"), distributed.get_task_stream(client) as tasks:
        with pytest.warns(DegenerateMetricWarning, match=DECIDES_BY_GROUP):
            parallel = parallel_auditor.audit(X, y)
    assert len(tasks.data) >= 2  # the batches really ran on the cluster
    np.testing.assert_array_equal(parallel.bootstrap_distribution,
                                  serial.bootstrap_distribution)
    assert (parallel.lower_bound, parallel.upper_bound) == (serial.lower_bound,
                                                            serial.upper_bound)


def test_joblib_dask_backend_equals_serial_model_selection(client):
    selection = pytest.importorskip("skfair_audit.model_selection")
    X, y = _faith_data(1200, seed=2)
    model = make_pipeline(OneHotEncoder(drop="first"), selection.l1_logistic_regression())
    selector = selection.FairModelSelector(
        model, param_grid={"logisticregression__C": [0.01, 0.1, 1.0]}, delta=0.05,
        protected=["group"], cv=2, on_none="fairest",
        auditor=FaithAuditor(None, epsilon=0.0, n_resamples=100), random_state=0,
    )
    # The audits of the fold models warn (their decisions follow the group) in the parent
    # process or in the workers, whose warnings are not sent back.
    with pytest.warns(DegenerateMetricWarning, match=DECIDES_BY_GROUP):
        serial = clone(selector).fit(X, y)
    with joblib.parallel_config(backend="dask"), distributed.get_task_stream(client) as tasks:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            parallel = clone(selector).set_params(n_jobs=2).fit(X, y)
    # scikit-learn 1.6 also reads n_jobs=None of the refit LogisticRegression as the Dask
    # backend's worker count and warns that liblinear ignores it.
    liblinear = "'n_jobs' > 1 does not have any effect when 'solver' is set to 'liblinear'"
    assert all(issubclass(w.category, DegenerateMetricWarning)
               or str(w.message).startswith(liblinear) for w in caught)
    assert len(tasks.data) >= 2
    assert parallel.best_index_ == serial.best_index_
    for key, value in serial.cv_results_.items():
        if "time" in key or key.startswith("param"):
            continue
        if key == "params":
            assert parallel.cv_results_[key] == value
        else:
            np.testing.assert_array_equal(parallel.cv_results_[key], value, err_msg=key)


def _slow(frame):
    time.sleep(0.15)  # a partition that takes time to read, so that the loss hits mid-run
    return frame


@pytest.mark.filterwarnings("ignore:Sending large graph:UserWarning")
@pytest.mark.parametrize("bootstrap", ["auto", "poisson"])
def test_losing_a_worker_mid_run_gives_the_right_result_or_a_clear_error(client, bootstrap):
    frame = _trail(120_000, seed=4)
    kwargs = {**BOUNDS, "n_resamples": 400, "bootstrap": bootstrap}
    ddf = dd.from_pandas(frame, npartitions=24).map_partitions(_slow, meta=frame.iloc[:0])
    expected = (_in_memory(frame, n_resamples=400) if bootstrap == "auto"
                else partitioned_certify_bounds(frame, **kwargs))
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        future = pool.submit(partitioned_certify_bounds, ddf, **kwargs)
        deadline = time.monotonic() + 30
        while not any(client.processing().values()) and time.monotonic() < deadline:
            time.sleep(0.02)
        victim = sorted(client.scheduler_info()["workers"])[0]
        assert not future.done()  # the worker is lost while the audit runs
        try:
            client.run(os._exit, 1, workers=[victim])
        except Exception:  # noqa: BLE001 - the worker dies while answering
            pass
        try:
            res = future.result(timeout=180)
        except Exception as exc:  # noqa: BLE001 - a clear, typed failure is acceptable
            assert type(exc).__name__ in {"KilledWorker", "CancelledError", "CommClosedError",
                                          "FutureCancelledError"}, repr(exc)
            return
    # the retried partitions recompute the same integers: bit for bit the expected result
    assert res.bootstrap == ("multinomial" if bootstrap == "auto" else "poisson")
    _assert_identical(res, expected)


def test_progress_bar_counts_partitions_on_the_cluster(client, capsys):
    """verbose=1 on the distributed scheduler: a bar over the partitions, the same result."""
    frame = _trail(4000, seed=5)
    trail = dd.from_pandas(frame, npartitions=5)
    options = dict(label="y", prediction="y_pred", protected=ATTRS, metric="error_rate",
                   n_resamples=200, random_state=0)
    quiet = partitioned_certify_bounds(trail, **options)
    capsys.readouterr()
    loud = partitioned_certify_bounds(trail, verbose=1, **options)
    np.testing.assert_array_equal(quiet.lower, loud.lower)
    np.testing.assert_array_equal(quiet.upper, loud.upper)
    err = capsys.readouterr().err
    assert "partitions summarised" in err and "5/5" in err
