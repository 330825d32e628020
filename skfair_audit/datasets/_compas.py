"""ProPublica's COMPAS two-year recidivism data ("Machine Bias", Angwin et al. 2016)."""

from __future__ import annotations

from .._utils import import_optional
from ._base import RemoteFile, dataset_bunch, fetch_file

_COMMIT = "bafff5da3f2e45eca6c2d5055faad269defd135a"
_REPOSITORY = "https://github.com/propublica/compas-analysis"

#: The two-year file, pinned to a commit of ProPublica's repository.
COMPAS_TWO_YEARS = RemoteFile(
    filename="compas/compas-scores-two-years.csv",
    url=(
        "https://raw.githubusercontent.com/propublica/compas-analysis/"
        f"{_COMMIT}/compas-scores-two-years.csv"
    ),
    sha256="c451db85908b2f7fef1d83203bedf6b71ecda0d5af468d82ae62178f91d0cc7d",
)

#: Every race level of the raw two-year file, so codes do not depend on the filter.
RACE_LEVELS = ("African-American", "Asian", "Caucasian", "Hispanic", "Native American", "Other")

PRIORS_LEVELS = ("0", "1-3", ">3")

#: The five grid features of the FaiTH COMPAS experiment, with their fixed category order.
#: ``race`` is filled in per preprocessing option.
_FEATURE_LEVELS = {
    "sex": ("Female", "Male"),
    "race": None,
    "age_cat": ("Less than 25", "25 - 45", "Greater than 45"),
    "priors_cat": PRIORS_LEVELS,
    "c_charge_degree": ("F", "M"),
}

_SENSITIVE = ("race", "sex", "age_cat")

_SCORE_TEXT_LEVELS = ("Low", "Medium", "High")

_PREPROCESSING = {
    "none": (RACE_LEVELS, "none: all 7,214 rows of the file"),
    "propublica": (
        RACE_LEVELS,
        "ProPublica's standard filter: -30 <= days_b_screening_arrest <= 30 (rows where it is "
        "missing are dropped), is_recid != -1, c_charge_degree != 'O' and score_text != 'N/A'",
    ),
    "propublica_aa_caucasian": (
        ("African-American", "Caucasian"),
        "ProPublica's standard filter (-30 <= days_b_screening_arrest <= 30, missing values "
        "dropped; is_recid != -1; c_charge_degree != 'O'; score_text != 'N/A'), restricted to "
        "race in {African-American, Caucasian}",
    ),
}

TARGET_NAMES = ("no recidivism", "recidivism")


def fetch_compas(
    *,
    data_home=None,
    preprocessing="propublica",
    download_if_missing=True,
    as_frame=True,
):
    """Load ProPublica's COMPAS two-year recidivism data (Broward County, 2013-2014).

    The file ``compas-scores-two-years.csv`` of ProPublica's ``compas-analysis`` repository
    (commit ``bafff5d``) has one row per defendant screened by COMPAS, with the risk score
    (``decile_score`` 1-10 and ``score_text`` Low / Medium / High) and whether the person was
    charged with a new offence within two years (``two_year_recid``).

    - ``preprocessing="none"``: all 7,214 rows;
    - ``"propublica"``: ProPublica's standard filter, 6,172 rows;
    - ``"propublica_aa_caucasian"``: the same, African-American and Caucasian only, 5,278 rows.

    ProPublica's standard filter keeps rows with
    :math:`-30 \\le \\text{days\\_b\\_screening\\_arrest} \\le 30` (missing values dropped),
    ``is_recid != -1``, ``c_charge_degree != 'O'`` and ``score_text != 'N/A'``. On this file
    only the first condition removes rows.

    Parameters
    ----------
    data_home : str or os.PathLike, default=None
        Folder holding ``compas/compas-scores-two-years.csv``; see
        :func:`~skfair_audit.datasets.get_data_home`.
    preprocessing : {"propublica", "propublica_aa_caucasian", "none"}, default="propublica"
        Row filter, see above.
    download_if_missing : bool, default=True
        Download the file (sha256-checked) if it is not in the data home; if False, raise
        :class:`FileNotFoundError` instead.
    as_frame : bool, default=True
        If True, ``data``, ``sensitive`` are DataFrames and ``target``, ``score``,
        ``score_text`` Series. If False they are numpy arrays (``data``, ``sensitive`` and
        ``score_text`` of object dtype holding the category labels) and ``frame`` is None.

    Returns
    -------
    data : sklearn.utils.Bunch
        Dictionary-like object with the following attributes.

        frame : pandas.DataFrame or None
            The filtered rows, index reset, with every column of the file plus ``priors_cat``
            (ordered categorical ``"0" < "1-3" < ">3"`` from ``priors_count``).
        data : DataFrame of shape (n_samples, 5) or ndarray
            The grid features of the FaiTH COMPAS experiment (Xue et al. 2020): ``sex``,
            ``race``, ``age_cat``, ``priors_cat``, ``c_charge_degree``, each a categorical
            with a fixed category order that does not depend on the filter: sex
            ``["Female", "Male"]``; race the six levels of the file (``"none"``,
            ``"propublica"``) or ``["African-American", "Caucasian"]``; age_cat
            ``["Less than 25", "25 - 45", "Greater than 45"]``; priors_cat
            ``["0", "1-3", ">3"]``; c_charge_degree ``["F", "M"]``.
        target : Series or ndarray of int, shape (n_samples,)
            ``two_year_recid`` (1 = charged with a new offence within two years).
        score : Series or ndarray of int
            COMPAS ``decile_score`` (1-10).
        score_text : Series or ndarray
            ``score_text``, ordered categorical ``Low < Medium < High``.
        sensitive : DataFrame or ndarray, shape (n_samples, 3)
            ``race``, ``sex``, ``age_cat`` (same categories as in ``data``).
        feature_names : list of str
            The columns of ``data``.
        target_names : list of str
            ``["no recidivism", "recidivism"]`` for target 0 and 1.
        DESCR : str
            Source, citation, the filter applied and its row count, the columns.
        filename : str
            Path of the csv file read.

    Raises
    ------
    ValueError
        Unknown ``preprocessing``.
    FileNotFoundError, OSError
        See :func:`~skfair_audit.datasets._base.fetch_file`.

    Notes
    -----
    pandas reads the literal ``N/A`` as missing, so ``score_text != 'N/A'`` is applied as "score
    text present and not ``N/A``". The file carries no license; cite the source.

    References
    ----------
    .. [1] J. Angwin, J. Larson, S. Mattu and L. Kirchner, "Machine Bias", ProPublica, 2016.
    .. [2] J. Larson, S. Mattu, L. Kirchner and J. Angwin, "How We Analyzed the COMPAS
       Recidivism Algorithm", ProPublica, 2016.
    .. [3] S. Xue, M. Yurochkin and Y. Sun, "Auditing ML Models for Individual Bias and
       Unfairness", AISTATS 2020.

    Examples
    --------
    >>> from skfair_audit.datasets import fetch_compas
    >>> compas = fetch_compas(preprocessing="propublica_aa_caucasian")
    >>> compas.data.shape
    (5278, 5)
    >>> list(compas.data["priors_cat"].cat.categories)
    ['0', '1-3', '>3']
    >>> round(float(compas.target.mean()), 4)
    0.4704

    The first call downloads the file when it is not in the data home:

    >>> compas = fetch_compas(data_home="~/my_data")  # doctest: +SKIP
    """
    if preprocessing not in _PREPROCESSING:
        raise ValueError(
            f"preprocessing must be one of {sorted(_PREPROCESSING)}, got {preprocessing!r}."
        )
    pd = import_optional("pandas", "load the COMPAS data")
    path = fetch_file(COMPAS_TWO_YEARS, data_home, download_if_missing)
    raw = pd.read_csv(path)

    race_levels, filter_text = _PREPROCESSING[preprocessing]
    frame = _filter_rows(raw, preprocessing).reset_index(drop=True)
    frame["priors_cat"] = _priors_category(pd, frame["priors_count"])

    levels = {**_FEATURE_LEVELS, "race": race_levels}
    data = pd.DataFrame(
        {name: _as_category(pd, frame[name], categories) for name, categories in levels.items()}
    )
    target = frame["two_year_recid"].astype("int64")
    score = frame["decile_score"].astype("int64")
    score_text = pd.Series(
        pd.Categorical(frame["score_text"], categories=_SCORE_TEXT_LEVELS, ordered=True),
        name="score_text",
    )
    sensitive = data.loc[:, list(_SENSITIVE)]
    descr = _describe(preprocessing, filter_text, len(frame), list(raw.columns))
    return dataset_bunch(
        as_frame,
        frame,
        data=data,
        target=target,
        score=score,
        score_text=score_text,
        sensitive=sensitive,
        feature_names=list(levels),
        target_names=list(TARGET_NAMES),
        DESCR=descr,
        filename=str(path),
    )


def _filter_rows(raw, preprocessing):
    """Rows kept by ``preprocessing`` (a boolean-mask filter, ProPublica's R code in pandas)."""
    if preprocessing == "none":
        return raw
    days = raw["days_b_screening_arrest"]
    keep = (
        days.between(-30, 30)  # NaN compares False, so missing days are dropped
        & (raw["is_recid"] != -1)
        & (raw["c_charge_degree"] != "O")
        & raw["score_text"].notna()
        & (raw["score_text"] != "N/A")
    )
    if preprocessing == "propublica_aa_caucasian":
        keep &= raw["race"].isin(["African-American", "Caucasian"])
    return raw.loc[keep]


def _priors_category(pd, priors_count):
    """Bin the number of prior offences into ``"0"``, ``"1-3"``, ``">3"``."""
    return pd.cut(
        priors_count,
        bins=[-1, 0, 3, float("inf")],
        labels=list(PRIORS_LEVELS),
        ordered=True,
    )


def _as_category(pd, column, categories):
    """``column`` as a categorical with exactly ``categories``; unknown labels are an error."""
    unknown = set(column.dropna().unique()) - set(categories)
    if unknown:
        raise ValueError(
            f"Column {column.name!r} has labels {sorted(unknown)} outside the expected "
            f"categories {list(categories)}."
        )
    ordered = column.name in ("age_cat", "priors_cat")
    return pd.Categorical(column, categories=list(categories), ordered=ordered)


def _describe(preprocessing, filter_text, n_rows, columns):
    return (
        "COMPAS two-year recidivism data (ProPublica, Broward County, Florida, 2013-2014)\n"
        "=================================================================================\n\n"
        'Source: J. Angwin, J. Larson, S. Mattu and L. Kirchner, "Machine Bias", ProPublica, '
        "2016;\n"
        f"file compas-scores-two-years.csv of {_REPOSITORY}, commit {_COMMIT}\n"
        f"(sha256 {COMPAS_TWO_YEARS.sha256}). The repository states no license.\n\n"
        f"Filter (preprocessing={preprocessing!r}): {filter_text}.\n"
        f"Rows after the filter: {n_rows:,}.\n\n"
        "Target: two_year_recid (1 = new charge within two years of the COMPAS screening).\n"
        "Score: decile_score (1-10); score_text (Low / Medium / High).\n"
        "Grid features (data): sex, race, age_cat, priors_cat (from priors_count: 0, 1-3, >3), "
        "c_charge_degree (F = felony, M = misdemeanour), as in Xue, Yurochkin and Sun (2020).\n"
        "Sensitive attributes: race, sex, age_cat.\n\n"
        f"Columns of the file ({len(columns)}): {', '.join(columns)}.\n"
    )
