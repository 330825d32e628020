"""Row selection of every container the estimators accept, against plain Python."""

import numpy as np
import pytest
import scipy.sparse as sp

from skfair_audit._utils import take_rows

pd = pytest.importorskip("pandas")

ROWS = [3, 0, 3, 1]
VALUES = [[0, 10], [1, 11], [2, 12], [3, 13], [4, 14]]


def test_arrays_lists_and_sparse_matrices():
    array = np.array(VALUES)
    assert take_rows(array, ROWS).tolist() == [VALUES[i] for i in ROWS]
    assert take_rows(array[:, 0], np.array(ROWS)).tolist() == [VALUES[i][0] for i in ROWS]
    assert take_rows(VALUES, ROWS) == [VALUES[i] for i in ROWS]
    for make in (sp.csr_matrix, sp.csc_matrix, sp.csr_array):
        taken = take_rows(make(array), ROWS)
        assert sp.issparse(taken) and taken.toarray().tolist() == [VALUES[i] for i in ROWS]


def test_pandas_rows_are_positions_not_labels():
    frame = pd.DataFrame(VALUES, columns=["a", "b"], index=[40, 30, 20, 10, 0])
    taken = take_rows(frame, ROWS)
    assert taken.to_numpy().tolist() == [VALUES[i] for i in ROWS]
    assert taken.index.tolist() == [10, 40, 10, 30]  # the labels travel with the rows
    series = frame["b"]
    assert take_rows(series, ROWS).tolist() == [VALUES[i][1] for i in ROWS]
    assert take_rows(frame, []).shape == (0, 2)
