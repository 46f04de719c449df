"""Shared fixtures: the reference scenario and its plan; every property test draws the same examples each run
(HYPOTHESIS_PROFILE=explore draws new ones, to look for more)."""

import os

import pytest
from hypothesis import settings

from clusterplan.catalog import load_catalog
from clusterplan.plan import plan
from clusterplan.spec import load_spec

# The day plan's stale-price warning ages prices against: fixed, so outputs and goldens do not change by the day
os.environ.setdefault("CLUSTERPLAN_TODAY", "2026-12-05")

settings.register_profile("repeatable", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))


@pytest.fixture(scope="session")
def catalog():
    return load_catalog()


@pytest.fixture(scope="session")
def reference():
    return load_spec()


@pytest.fixture(scope="session")
def reference_plan(reference, catalog):
    return plan(reference, catalog)
