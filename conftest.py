"""Root pytest configuration: applies to the tests and to the doctests of the package."""

import os

import pytest


def pytest_collection_modifyitems(config, items):
    # The loaders' doctests read the real data. Outside CI, skip them when the data home has
    # no copy (offline machines); in CI the data must be there, so they always run.
    from skfair_audit.datasets._base import get_data_home

    if os.environ.get("CI") == "true" or (get_data_home() / "compas").is_dir():
        return
    skip = pytest.mark.skip(reason="real data not in the data home (set SKFAIR_AUDIT_DATA)")
    for item in items:
        if item.name.endswith(("fetch_compas", "fetch_adult")):
            item.add_marker(skip)
