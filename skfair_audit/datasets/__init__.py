"""Real fairness benchmark data, loaded like ``sklearn.datasets.fetch_*``.

Files live in a data home (argument ``data_home``, else the environment variable
``SKFAIR_AUDIT_DATA``, else ``~/skfair_audit_data``) with the layout
``compas/compas-scores-two-years.csv``, ``adult/adult.data``, ``adult/adult.test``. Every file is
checked against its published sha256 before use; a missing file is downloaded from its canonical
source unless ``download_if_missing=False``.

- :func:`fetch_compas`: ProPublica's COMPAS two-year recidivism data (Angwin et al. 2016).
- :func:`fetch_adult`: UCI Adult / Census Income (Kohavi 1996).
- :func:`get_data_home`: the folder the loaders use.
"""

from ._adult import fetch_adult
from ._base import get_data_home
from ._compas import fetch_compas

__all__ = ["fetch_adult", "fetch_compas", "get_data_home"]
