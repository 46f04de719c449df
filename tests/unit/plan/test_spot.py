"""spot goodput (plan/spot.py): a spot offer's reclaims join the job's failure causes."""

import pytest

from clusterplan.design.design import design
from clusterplan.plan.spot import reclaim_cause, spot_goodputs
from clusterplan.plan.training import training
from clusterplan.spec import load_spec


def test_reclaims_are_counted_per_instance(catalog):
    """An 8-GPU instance is reclaimed as a node, a one-GPU offer as a GPU, at the offer's own rate."""
    node = reclaim_cause(catalog.get("cloud", "nebius-h100-spot"))
    gpu = reclaim_cause(catalog.get("cloud", "crusoe-mi300x-spot"))
    assert (node.scope, gpu.scope) == ("node", "gpu") and not node.repair
    assert node.per_1000_unit_days == catalog.get("cloud", "nebius-h100-spot").reclaim_per_1000_instance_days


def test_spot_goodput_is_below_the_own_clusters_and_falls_with_the_rate(catalog):
    """The spot offer's goodput is below the owned cluster's; a higher reclaim rate lowers it further."""
    spec = load_spec(None, ['workload.model="llama2-13b"', 'workload.tokens="1T"'])
    built = design(spec, catalog)
    offer = catalog.get("cloud", "nebius-h100-spot")
    job = training(spec, catalog, built, 4.0, [offer, catalog.get("cloud", "aws-p5-on-demand")])
    assert set(job.offer_goodputs) == {offer.id}
    assert job.offer_goodputs[offer.id] < job.goodput
    effective = job.effective_costs_usd
    assert effective["aws-p5-on-demand"] == pytest.approx(job.costs_usd["aws-p5-on-demand"] / job.goodput, rel=1e-12)
    assert effective[offer.id] == job.costs_usd[offer.id] / job.offer_goodputs[offer.id]
    worse = offer.__class__(**{**{f: getattr(offer, f) for f in offer.__dataclass_fields__},
                               "reclaim_per_1000_instance_days": 100 * offer.reclaim_per_1000_instance_days})
    reclaimed = spot_goodputs(spec, catalog, built, job.model, job.num_gpus, [worse],
                           tokens_per_s=job.best.tokens_per_s, useful_s=job.time_to_train_s)
    assert reclaimed[offer.id] < job.offer_goodputs[offer.id]
