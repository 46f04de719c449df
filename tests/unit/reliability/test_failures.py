"""Failure causes scaled to a job: counts per scope, rates, overrides, MTTI and spare nodes."""

import math
import random

import pytest

from clusterplan.catalog import FailureRate, parse_family
from clusterplan.errors import CatalogError, ConfigError
from clusterplan.design import design
from clusterplan.reliability.failures import (Exposure, cluster_spares, exposure, failure_rates, interruptions,
                                              job_failures, poisson_quantile, spares)


def rate(cause_id, scope, per_1000, repair=True):
    return FailureRate(id=cause_id, name=cause_id, source="test", date="", scope=scope,
                       per_1000_unit_days=per_1000, repair=repair)


def test_exposure_counts_gpus_nodes_links_and_a_share_of_switches():
    """48 GPUs of 8 per node on a 16-node, 3-switch fabric: 6 nodes, 48 links, 6/16 of 3 switches."""
    job = exposure(num_gpus=48, gpus_per_node=8, nics_per_node=8, cluster_nodes=16, cluster_switches=3)
    assert (job.num_gpus, job.num_nodes, job.num_links) == (48, 6, 48)
    assert job.num_switches == pytest.approx(3 * 6 / 16)
    assert [job.count(scope) for scope in ("gpu", "node", "link", "switch")] == [48, 6, 48, 1.125]


def test_exposure_counts_a_share_of_the_switch_to_switch_links():
    """6 of 16 nodes on a fabric of 128 leaf-spine links: 48 of them; a fabric-link failure takes no node out."""
    job = exposure(num_gpus=48, gpus_per_node=8, nics_per_node=8, cluster_nodes=16, cluster_switches=3,
                   cluster_fabric_links=128)
    assert job.count("fabric-link") == pytest.approx(48)
    found = interruptions([rate("f", "fabric-link", 1.0, repair=False)], job)
    assert found.per_day == pytest.approx(0.048) and found.repair_per_day == 0


def test_interruption_rate_is_the_sum_of_rate_times_count():
    """0.5 per 1000 GPU-days on 1000 GPUs + 2 per 1000 node-days on 125 nodes = 0.75 a day; MTTI 32 h."""
    job = Exposure(num_gpus=1000, num_nodes=125, num_links=1000, num_switches=10.0)
    found = interruptions([rate("g", "gpu", 0.5), rate("s", "node", 2.0, repair=False)], job)
    assert found.per_day == pytest.approx(0.5 + 0.25)
    assert found.mtti_s == pytest.approx(86400 / 0.75)
    assert found.repair_per_day == pytest.approx(0.5)
    assert found.share() == pytest.approx({"g": 2 / 3, "s": 1 / 3})


def test_meta_rsc_projection_is_reproduced():
    """Meta's RSC-1 rate, 6.50 per 1000 node-days, gives 1.80 h at 16,384 GPUs (Kokolis et al. 2024 project 1.8 h)."""
    job = exposure(num_gpus=16384, gpus_per_node=8, nics_per_node=8, cluster_nodes=2048, cluster_switches=1)
    found = interruptions([rate("rsc1", "node", 6.50)], job)
    assert found.mtti_s / 3600 == pytest.approx(1.80, abs=0.01)


@pytest.mark.parametrize("mean, probability, k", [
    (1.0, 0.99, 4),       # P(<=3) = 0.9810, P(<=4) = 0.9963
    (1.0, 0.5, 1),        # P(0) = 0.3679, P(<=1) = 0.7358
    (0.16, 0.99, 2),      # P(<=1) = 0.9885, P(<=2) = 0.9994
    (10.0, 0.95, 15),     # P(<=14) = 0.9165, P(<=15) = 0.9513
    (0.0, 0.99, 0),
])
def test_poisson_quantile_hand_cases(mean, probability, k):
    """Smallest k with P(X <= k) >= p, checked against hand-summed Poisson tails."""
    assert poisson_quantile(mean, probability) == k


def test_poisson_quantile_large_mean_is_near_the_normal_quantile():
    """At mean 10,000 the 99 % quantile is about mean + 2.326 sqrt(mean) = 10,233."""
    assert abs(poisson_quantile(10_000.0, 0.99) - 10_233) <= 2


def _term_by_term(mean: float, probability: float) -> int:
    """The quantile as it was summed: every term from k = 0 (its work grew with the mean)."""
    cumulative, k = 0.0, 0
    while True:
        cumulative += math.exp(k * math.log(mean) - mean - math.lgamma(k + 1))
        if cumulative >= probability:
            return k
        k += 1


def test_poisson_quantile_equals_the_term_by_term_sum():
    """500 random means from 1e-4 to 3e5 and probabilities: the same k as summing every term from 0."""
    draw = random.Random(31)
    for _ in range(500):
        mean = 10 ** draw.uniform(-4, 5.5)
        probability = draw.choice([0.5, 0.9, 0.99, 0.999, draw.uniform(0.01, 0.99)])
        assert poisson_quantile(mean, probability) == _term_by_term(mean, probability)


def test_poisson_quantile_of_a_huge_mean_is_exact_and_quick():
    """Issue 31: 65,536 nodes, a GPU failure rate at its limit and 8,760 h repairs put 1.9e11 nodes in repair; the
    sum from k = 0 ran for hours. The 99 % quantile is 190,001,014,032: the regularised incomplete gamma
    (mpmath, 40 digits) gives P(X <= k - 1) = 0.98999995 and P(X <= k) = 0.99000001."""
    assert poisson_quantile(1.9e11, 0.99) == 190_001_014_032


def test_spares_cover_the_nodes_in_repair():
    """0.5 repair failures a day, 48 h repairs: 1.0 node out on average, 4 spares at 99 %."""
    job = Exposure(num_gpus=1000, num_nodes=125, num_links=0, num_switches=0.0)
    found = interruptions([rate("g", "gpu", 0.5), rate("s", "node", 2.0, repair=False)], job)
    cover = spares(found, repair_s=48 * 3600, confidence=0.99)
    assert cover.nodes_in_repair == pytest.approx(1.0)
    assert cover.spare_nodes == 4


def test_cluster_spares_follow_the_chain_on_every_gpu(reference, catalog):
    """A GPU cause of 500 / GPUs per 1,000 GPU-days strikes the whole cluster 0.5 times a day: 48 h repairs keep
    1.0 node out, 4 spares at 99 % (as above); a job on half the GPUs sees half: 0.5 nodes out, 3 spares."""
    built = design(reference, catalog)
    causes = [rate("g", "gpu", 500 / built.num_gpus)]
    assert cluster_spares(causes, built, repair_s=48 * 3600, confidence=0.99) == 4
    half = job_failures(causes, built, num_gpus=built.num_gpus // 2, repair_s=48 * 3600, confidence=0.99)
    assert half.job == exposure(num_gpus=built.num_gpus // 2, gpus_per_node=built.gpus_per_node,
                                nics_per_node=built.nics_per_node, cluster_nodes=built.num_nodes,
                                cluster_switches=built.topology.num_switches,
                                cluster_fabric_links=built.topology.num_switch_links)
    assert half.spares.nodes_in_repair == pytest.approx(0.5)
    assert half.spares.spare_nodes == poisson_quantile(0.5, 0.99) == 3


def test_catalog_causes_and_overrides(catalog):
    """The shipped causes resolve; an override replaces a rate and its range and says where it came from."""
    rates = failure_rates(catalog, ["gpu", "software"], {"gpu": 0.3})
    assert [r.id for r in rates] == ["gpu", "software"]
    assert rates[0].per_1000_unit_days == 0.3 and rates[0].low_per_1000_unit_days is None
    assert "override" in rates[0].source
    assert rates[1] == catalog.get("failures", "software")


@pytest.mark.parametrize("ids, overrides, message", [
    (["gpu", "gpus"], {}, "reliability.failures[1]: unknown failure id 'gpus' (did you mean 'gpu'"),
    (["gpu"], {"host": 1.0}, "reliability.failure_rates.host: 'host' is not among reliability.failures"),
])
def test_unknown_causes_name_the_key(catalog, ids, overrides, message):
    """A cause id that the catalog lacks, or an override for a cause not chosen, names its key."""
    with pytest.raises(ConfigError) as error:
        failure_rates(catalog, ids, overrides)
    assert message in str(error.value)


def test_every_shipped_rate_has_a_source_that_is_not_the_llama3_table(catalog):
    """The held-out validation run is never the source of a shipped rate."""
    for entry in catalog.families["failures"].values():
        assert entry.source and entry.date
        assert "Table 5" not in entry.source and "2407.21783" not in entry.source
        assert math.isfinite(entry.per_1000_unit_days) and entry.per_1000_unit_days > 0


# Meta FT-HSDP (arXiv 2602.00277), table of interruption root causes: the software group (Software Bug 48, NCCL
# Watchdog Timeouts 61, Unknown 7) against the other 562 of 678 interruptions.
FT_HSDP_SOFTWARE, FT_HSDP_OTHERS = 48 + 61 + 7, 678 - 116
BLUE_WATERS_SOFTWARE_PER_HARDWARE = 20 / 42


def node_hardware_per_1000_days(catalog, gpu_bound="per_1000_unit_days"):
    """The non-software rate of an 8-GPU node with 8 NIC links, from the catalog (GPU at the given bound)."""
    def figure(cause_id, field="per_1000_unit_days"):
        return getattr(catalog.get("failures", cause_id), field)
    return 8 * figure("gpu", gpu_bound) + figure("host") + 8 * figure("network-link")


def test_software_rate_is_the_llm_operator_ratio_on_the_catalog_hardware_rates(catalog):
    """Software = FT-HSDP's 116/562 x the catalog's 8-GPU node (0.712); low: the same ratio on the GPU low end
    (0.562); high: Blue Waters' 20/42 on the GPU high end (3.10). A changed hardware rate makes this fail until the
    derived software figure is recomputed."""
    software = catalog.get("failures", "software")
    ratio = FT_HSDP_SOFTWARE / FT_HSDP_OTHERS
    assert ratio == pytest.approx(0.2064, abs=1e-4)
    assert software.scope == "node" and not software.repair
    assert software.per_1000_unit_days == pytest.approx(ratio * node_hardware_per_1000_days(catalog), rel=2e-3)
    assert software.low_per_1000_unit_days == pytest.approx(
        ratio * node_hardware_per_1000_days(catalog, "low_per_1000_unit_days"), rel=2e-3)
    assert software.high_per_1000_unit_days == pytest.approx(
        BLUE_WATERS_SOFTWARE_PER_HARDWARE * node_hardware_per_1000_days(catalog, "high_per_1000_unit_days"), rel=2e-3)


def test_software_keeps_its_share_of_interruptions_at_any_job_size(catalog):
    """Per node, like the hardware causes: its share of a job's interruptions is the same at 2 and at 2,048 nodes
    (no fabric causes), so a bigger job never sees fewer software interruptions per node."""
    rates = failure_rates(catalog, ["gpu", "host", "network-link", "software"])

    def share(nodes):
        job = exposure(num_gpus=8 * nodes, gpus_per_node=8, nics_per_node=8, cluster_nodes=nodes, cluster_switches=1)
        return interruptions(rates, job).share()["software"]

    assert share(2) == pytest.approx(share(2048))
    assert share(2048) == pytest.approx(0.712 / (0.712 + 8 * 0.361 + 0.412 + 8 * 0.0187), rel=1e-3)


@pytest.mark.parametrize("text, message", [
    ('[x]\nname = "a"\nsource = "s"\ndate = "d"\nscope = "rack"\nper_1000_unit_days = 1\nrepair = false\n',
     "catalog/failures.toml:5: x.scope: must be one of gpu, node, link, fabric-link, switch, got 'rack'"),
    ('[x]\nname = "a"\nsource = "s"\ndate = "d"\nscope = "node"\nper_1000_unit_days = -0.5\nrepair = false\n',
     "catalog/failures.toml:6: x.per_1000_unit_days: must be > 0, got -0.5"),
    ('[x]\nname = "a"\nsource = "s"\ndate = "d"\nscope = "node"\nper_1000_unit_days = 0.7\n'
     'low_per_1000_unit_days = 0.9\nrepair = false\n', "catalog/failures.toml:6: x.per_1000_unit_days: must lie within"),
    ('[x]\nname = "a"\nsource = "s"\ndate = "d"\nscope = "node"\nper_1000_unit_days = "often"\nrepair = false\n',
     "catalog/failures.toml:6: x.per_1000_unit_days: expected a number, got a string 'often'"),
    ('[x]\nname = "a"\nsource = "s"\ndate = "d"\nscope = "node"\nper_1000_unit_days = 0.7\n',
     "catalog/failures.toml:1: x.repair: missing required key"),
])
def test_malformed_failure_rates_name_file_line_and_key(text, message):
    """A bad entry in the failures file is a CatalogError naming its file, line and key."""
    with pytest.raises(CatalogError) as error:
        parse_family(text, FailureRate, source="catalog/failures.toml")
    assert str(error.value).startswith(message)
