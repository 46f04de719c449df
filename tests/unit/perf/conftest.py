"""The step model's view of the reference cluster (128 x H100), shared by the perf tests."""

import pytest

from clusterplan.design.design import design
from clusterplan.perf.hardware import hardware


@pytest.fixture(scope="session")
def hw(reference, catalog):
    return hardware(design(reference, catalog))
