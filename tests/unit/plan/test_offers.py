"""compared_offers (plan/core.py): renting is compared against offers for the cluster's own GPU."""

import types

import pytest

from clusterplan.catalog import Catalog
from clusterplan.plan import plan
from clusterplan.plan.core import compared_offers
from clusterplan.report.export import plan_document
from clusterplan.spec import load_spec


@pytest.mark.parametrize("gpu", ["h200-sxm", "b200", "mi300x", "a100-80gb-sxm"])
def test_another_gpu_is_compared_against_its_own_offers(catalog, gpu):
    """--set cluster.gpu=X with the reference's H100 list: X's offers, one note, no 'rents h100-sxm' lines."""
    result = plan(load_spec(None, [f'cluster.gpu="{gpu}"']), catalog)
    rented = {rental.cost.offer.gpu for rental in result.rentals}
    assert rented == {gpu} and len(result.rentals) >= 3
    assert not any("rents h100-sxm" in line for line in result.warnings)
    notes = [line for line in result.warnings if "compared against the catalog's" in line]
    assert len(notes) == 1 and f" {gpu} offers instead" in notes[0]
    document = plan_document(result)
    assert catalog.get("cloud", document["cheapest_cloud"]["offer"]).gpu == gpu
    assert result.hybrid is None or result.hybrid.offer.gpu == gpu


def test_superseded_prices_are_left_out(catalog):
    """The pre-cut AWS prices (ids marked -pre-<date>) are not among the offers chosen for a GPU."""
    offers, _, _ = compared_offers(load_spec(None, ['cluster.gpu="a100-80gb-sxm"']), catalog)
    assert offers and not any("-pre-" in offer.id for offer in offers)


def test_the_scenario_list_stays_when_it_rents_the_gpu(catalog):
    """An H100 cluster keeps the reference's own ten offers, in order, with no note."""
    spec = load_spec()
    offers, burst, note = compared_offers(spec, catalog)
    assert [offer.id for offer in offers] == list(spec.cloud.offers) and note == ""
    assert burst is not None and burst.id == spec.cloud.burst_offer


def test_a_gpu_without_offers_says_so_in_one_line(catalog):
    """Where the catalog has no offer for the GPU: no rentals, no hybrid, one line that says so."""
    families = dict(catalog.families)
    families["cloud"] = types.MappingProxyType({key: offer for key, offer in catalog.families["cloud"].items()
                                                if offer.gpu != "b200"})
    bare = Catalog(types.MappingProxyType(families))
    result = plan(load_spec(None, ['cluster.gpu="b200"']), bare)
    assert result.rentals == () and result.hybrid is None
    assert [line for line in result.warnings if line.startswith("cloud:")] == [
        "cloud: the catalog has no b200 offer; renting is not compared (cloud.offers rent h100-sxm)"]
