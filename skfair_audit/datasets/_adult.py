"""UCI Adult / Census Income data (Kohavi 1996; 1994 US Census extract)."""

from __future__ import annotations

from .._utils import import_optional
from ._base import RemoteFile, dataset_bunch, fetch_file

_UCI = "https://archive.ics.uci.edu/ml/machine-learning-databases/adult"

#: Training file (32,561 rows).
ADULT_DATA = RemoteFile(
    filename="adult/adult.data",
    url=f"{_UCI}/adult.data",
    sha256="5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
)

#: Test file (16,281 rows; first line ``|1x3 Cross validator``, labels end with ``.``).
ADULT_TEST = RemoteFile(
    filename="adult/adult.test",
    url=f"{_UCI}/adult.test",
    sha256="a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",
)

COLUMNS = (
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "income",
)

TARGET_NAMES = ("<=50K", ">50K")

#: Fixed category order of the sensitive attributes (every level of both files).
SENSITIVE_LEVELS = {
    "race": ("Amer-Indian-Eskimo", "Asian-Pac-Islander", "Black", "Other", "White"),
    "sex": ("Female", "Male"),
}

_SUBSETS = ("train", "test", "all")


def fetch_adult(
    *,
    data_home=None,
    subset="all",
    dropna=False,
    download_if_missing=True,
    as_frame=True,
):
    """Load the UCI Adult (Census Income) data: does income exceed $50K a year?

    ========  ==========  ====================
    subset    rows        rows with dropna=True
    ========  ==========  ====================
    train     32,561      30,162
    test      16,281      15,060
    all       48,842      45,222
    ========  ==========  ====================

    Parameters
    ----------
    data_home : str or os.PathLike, default=None
        Folder holding ``adult/adult.data`` and ``adult/adult.test``; see
        :func:`~skfair_audit.datasets.get_data_home`.
    subset : {"all", "train", "test"}, default="all"
        ``"train"`` reads ``adult.data``, ``"test"`` reads ``adult.test``, ``"all"`` both, the
        training rows first.
    dropna : bool, default=False
        Drop the rows with a missing value (written ``?`` in the files).
    download_if_missing : bool, default=True
        Download missing files (sha256-checked); if False, raise :class:`FileNotFoundError`.
    as_frame : bool, default=True
        If True, ``data`` and ``sensitive`` are DataFrames and ``target`` a Series; if False
        they are numpy arrays (``data`` and ``sensitive`` of object dtype) and ``frame`` is
        None.

    Returns
    -------
    data : sklearn.utils.Bunch
        Dictionary-like object with the following attributes.

        frame : pandas.DataFrame or None
            The 15 columns, index reset, whitespace stripped, ``?`` read as missing, the
            trailing ``.`` of the test labels removed.
        data : DataFrame of shape (n_samples, 14) or ndarray
            Every column but ``income``. ``fnlwgt`` is a census sampling weight rather than a
            feature of the person.
        target : Series or ndarray of int, shape (n_samples,)
            1 if ``income`` is ``">50K"``, else 0.
        sensitive : DataFrame or ndarray, shape (n_samples, 2)
            ``race`` and ``sex`` as categoricals with fixed categories (all levels of the files,
            alphabetical).
        feature_names : list of str
            The columns of ``data``.
        target_names : list of str
            ``["<=50K", ">50K"]``.
        DESCR : str
            Source, citation, license and the columns.
        filenames : list of str
            Paths of the files read.

    Raises
    ------
    ValueError
        Unknown ``subset``, or an income label other than ``<=50K`` / ``>50K``.
    FileNotFoundError, OSError
        See :func:`~skfair_audit.datasets._base.fetch_file`.

    References
    ----------
    .. [1] R. Kohavi, "Scaling Up the Accuracy of Naive-Bayes Classifiers: a Decision-Tree
       Hybrid", KDD 1996.
    .. [2] B. Becker and R. Kohavi, "Adult", UCI Machine Learning Repository, 1996,
       https://doi.org/10.24432/C5XW20 (CC BY 4.0).

    Examples
    --------
    >>> from skfair_audit.datasets import fetch_adult
    >>> adult = fetch_adult(subset="train")
    >>> adult.data.shape
    (32561, 14)
    >>> int(adult.target.sum())
    7841
    >>> list(adult.sensitive["sex"].cat.categories)
    ['Female', 'Male']
    """
    if subset not in _SUBSETS:
        raise ValueError(f"subset must be one of {list(_SUBSETS)}, got {subset!r}.")
    pd = import_optional("pandas", "load the Adult data")
    remotes = {"train": [ADULT_DATA], "test": [ADULT_TEST], "all": [ADULT_DATA, ADULT_TEST]}
    paths = [fetch_file(remote, data_home, download_if_missing) for remote in remotes[subset]]
    # adult.test opens with the line "|1x3 Cross validator".
    parts = [
        _read(pd, path, skiprows=int(remote is ADULT_TEST))
        for remote, path in zip(remotes[subset], paths, strict=True)
    ]
    frame = pd.concat(parts, ignore_index=True)
    if dropna:
        frame = frame.dropna().reset_index(drop=True)

    labels = set(frame["income"].unique())
    if not labels <= set(TARGET_NAMES):
        raise ValueError(f"Unexpected income labels {sorted(labels - set(TARGET_NAMES))}.")
    target = (frame["income"] == TARGET_NAMES[1]).astype("int64").rename("income")
    feature_names = list(COLUMNS[:-1])
    data = frame.loc[:, feature_names]
    sensitive = pd.DataFrame(
        {
            name: pd.Categorical(frame[name], categories=list(levels))
            for name, levels in SENSITIVE_LEVELS.items()
        }
    )
    if sensitive.isna().to_numpy().any():
        raise ValueError(f"Unexpected race or sex labels; expected {SENSITIVE_LEVELS}.")
    descr = _describe(subset, dropna, len(frame))
    return dataset_bunch(
        as_frame,
        frame,
        data=data,
        target=target,
        sensitive=sensitive,
        feature_names=feature_names,
        target_names=list(TARGET_NAMES),
        DESCR=descr,
        filenames=[str(path) for path in paths],
    )


def _read(pd, path, skiprows):
    """Read one Adult file; ``?`` is missing, a trailing ``.`` of the test labels is removed."""
    frame = pd.read_csv(
        path,
        header=None,
        names=list(COLUMNS),
        skiprows=skiprows,
        skipinitialspace=True,
        na_values=["?"],
    )
    frame["income"] = frame["income"].str.rstrip(".")
    return frame


def _describe(subset, dropna, n_rows):
    return (
        "Adult / Census Income data (UCI Machine Learning Repository)\n"
        "============================================================\n\n"
        "Extract of the 1994 US Census by Barry Becker; prediction task: income > $50K a year.\n"
        'Source: R. Kohavi, "Scaling Up the Accuracy of Naive-Bayes Classifiers: a Decision-Tree '
        'Hybrid", KDD 1996; B. Becker and R. Kohavi, "Adult", UCI Machine Learning Repository, '
        f"1996, https://doi.org/10.24432/C5XW20, {_UCI}.\n"
        "License: CC BY 4.0 (as listed by the UCI ML Repository).\n"
        f"Files: adult.data (sha256 {ADULT_DATA.sha256}), adult.test (sha256 "
        f"{ADULT_TEST.sha256}).\n\n"
        f"Subset: {subset!r} (train = adult.data, test = adult.test, all = both, train first); "
        f"dropna={dropna} (rows with a '?' {'dropped' if dropna else 'kept, as missing values'}).\n"
        f"Rows: {n_rows:,}.\n\n"
        "Target: income, 1 for '>50K', 0 for '<=50K' (the test file's trailing '.' removed).\n"
        "Sensitive attributes: race, sex.\n"
        f"Columns: {', '.join(COLUMNS)}. fnlwgt is a census sampling weight.\n"
    )
