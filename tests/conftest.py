"""Shared fixtures: the reference scenario and its plan."""

import pytest

from clusterplan.catalog import load_catalog
from clusterplan.plan import plan
from clusterplan.spec import load_spec


@pytest.fixture(scope="session")
def catalog():
    return load_catalog()


@pytest.fixture(scope="session")
def reference():
    return load_spec()


@pytest.fixture(scope="session")
def reference_plan(reference, catalog):
    return plan(reference, catalog)
