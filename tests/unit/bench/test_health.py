"""Node and link health: outliers against the median, their numbers and likely causes."""

import math

import pytest

from clusterplan.bench.health import (CULPRIT_CAUSE, LINK_CAUSE, SLOW_FRACTION, LinkResult, NodeResult, analyse,
                                      is_slow, robust_z)
from clusterplan.errors import ConfigError

G, T = 1e9, 1e12


def cluster(num_nodes=8, **overrides):
    """Healthy H100-like nodes with a little spread; ``overrides`` maps a host to changed fields."""
    nodes = []
    for i in range(num_nodes):
        host = f"gpu-{i:02d}"
        fields = dict(gemm_flops_per_s=(740 + i % 3 * 2) * T, h2d_Bps=(53.2 + i % 2 * 0.2) * G,
                      d2h_Bps=(52.0 - i % 2 * 0.3) * G, h2h_Bps=21 * G, intra_busbw_Bps=(362 + i % 4) * G)
        fields.update(overrides.get(host, {}))
        nodes.append(NodeResult(host=host, **fields))
    return nodes


def all_links(num_nodes=8, slow=None):
    """Every pair at about 45.8 GB/s; ``slow`` maps a frozenset of two hosts to another busbw."""
    slow = slow or {}
    links = []
    for i in range(num_nodes):
        for j in range(i + 1, num_nodes):
            pair = (f"gpu-{i:02d}", f"gpu-{j:02d}")
            links.append(LinkResult(hosts=pair, busbw_Bps=slow.get(frozenset(pair), (45.8 + (i + j) % 3 * 0.1) * G)))
    return links


def test_healthy_cluster_has_no_findings():
    """Small spreads (< 1 %) flag nothing; every ratio is near 1."""
    health = analyse(cluster(), all_links())
    assert health.findings == ()
    assert all(0.98 < ranked.worst_ratio <= 1.02 for ranked in health.nodes)
    assert all(0.99 < ranked.ratio < 1.01 for ranked in health.links)


def test_slow_pcie_node_is_named_with_its_numbers():
    """gpu-07 at 24.9 GB/s host-to-device against a 53 GB/s median: a PCIe cause, listed first."""
    health = analyse(cluster(**{"gpu-07": {"h2d_Bps": 24.9 * G}}), all_links())
    (finding,) = health.findings
    assert finding.subject == "gpu-07" and finding.metric == "h2d_Bps" and finding.kind == "node"
    assert finding.message == "gpu-07: host-to-device 24.9 GB/s vs median 53.2 GB/s: PCIe link running at Gen4 or x8?"
    assert finding.ratio == pytest.approx(24.9 / 53.2) and finding.value == 24.9 * G
    assert health.nodes[0].node.host == "gpu-07"


def test_throttled_gpu_is_named_with_its_numbers():
    """A bf16 GEMM at 610 TFLOP/s vs a 742 median reads as throttling or capped clocks."""
    health = analyse(cluster(**{"gpu-03": {"gemm_flops_per_s": 610 * T}}), all_links(), gemm_label="bf16 GEMM")
    (finding,) = health.findings
    assert finding.message == ("gpu-03: bf16 GEMM 610 TFLOP/s vs median 742 TFLOP/s: thermal or power throttling, "
                               "or clocks capped?")
    assert health.nodes[0].node.host == "gpu-03" and health.nodes[0].worst_ratio == pytest.approx(610 / 742, rel=1e-3)


def test_one_bad_link_is_named_as_a_link():
    """gpu-02 <-> gpu-05 at 21 GB/s: a cable, optic or switch port, neither host blamed."""
    links = all_links(slow={frozenset(("gpu-02", "gpu-05")): 21.0 * G})
    health = analyse(cluster(), links)
    (finding,) = health.findings
    assert finding.kind == "link" and finding.subject == "gpu-02 <-> gpu-05" and finding.cause == LINK_CAUSE
    assert finding.message == "link gpu-02 <-> gpu-05: 21.0 GB/s vs median 45.9 GB/s: cable, optic or switch port?"
    assert health.links[0].link.hosts == ("gpu-02", "gpu-05")


def test_node_behind_several_slow_links_is_the_culprit():
    """Every link of gpu-06 slow: one finding for gpu-06 (its NIC or port), none per link."""
    slow = {frozenset(("gpu-06", f"gpu-{j:02d}")): (20.0 + j * 0.1) * G for j in range(8) if j != 6}
    health = analyse(cluster(), all_links(slow=slow))
    (finding,) = health.findings
    assert finding.kind == "culprit" and finding.subject == "gpu-06" and finding.cause == CULPRIT_CAUSE
    assert finding.message == ("gpu-06: 7 of its 7 links slow, 20.0-20.7 GB/s vs median 45.9 GB/s of the other "
                               "links: its NIC, cable or switch port?")


def test_culprit_and_an_unrelated_bad_link_both_reported():
    """A bad node in a ring of neighbour pairs, and a bad link elsewhere: culprit first, then the link."""
    hosts = [f"gpu-{i:02d}" for i in range(10)]
    links = []
    for i in range(10):
        pair = (hosts[i], hosts[(i + 1) % 10])
        busbw = 45.8 * G
        if "gpu-03" in pair:
            busbw = 19.5 * G
        if pair == ("gpu-07", "gpu-08"):
            busbw = 30.0 * G
        links.append(LinkResult(hosts=pair, busbw_Bps=busbw))
    health = analyse(cluster(10), links)
    assert [(f.kind, f.subject) for f in health.findings] == [("culprit", "gpu-03"), ("link", "gpu-07 <-> gpu-08")]
    assert "2 of its 2 links slow, 19.5 GB/s vs median 45.8 GB/s" in health.findings[0].message


def test_neighbours_of_a_culprit_are_not_blamed_in_a_small_full_mesh():
    """Four nodes, one bad: half the links are slow, yet only the bad node is named."""
    slow = {frozenset(("gpu-01", f"gpu-{j:02d}")): 21.0 * G for j in (0, 2, 3)}
    health = analyse(cluster(4), all_links(4, slow=slow))
    assert [(f.kind, f.subject) for f in health.findings] == [("culprit", "gpu-01")]


def test_several_findings_are_sorted_and_numbers_kept():
    """Slow PCIe, throttled GPU and a slow NVLink node all reported, each with value, median and ratio."""
    health = analyse(cluster(**{"gpu-07": {"h2d_Bps": 24.9 * G}, "gpu-03": {"gemm_flops_per_s": 610 * T},
                                "gpu-01": {"intra_busbw_Bps": 180 * G}}), all_links())
    assert {f.subject for f in health.findings} == {"gpu-07", "gpu-03", "gpu-01"}
    assert [f.ratio for f in health.findings] == sorted(f.ratio for f in health.findings)
    assert [r.node.host for r in health.nodes[:3]] == ["gpu-07", "gpu-01", "gpu-03"]
    nvlink = next(f for f in health.findings if f.metric == "intra_busbw_Bps")
    assert "180 GB/s vs median 364 GB/s" in nvlink.message and "NVLink" in nvlink.message


def test_a_noisy_metric_does_not_flag_its_ordinary_tail():
    """15 % below the median, but within 3.5 robust sigmas of a spread-out metric: not flagged."""
    values = [100, 90, 110, 80, 120, 95, 105, 85]
    nodes = [NodeResult(host=f"n{i}", gemm_flops_per_s=v * T) for i, v in enumerate(values)]
    assert analyse(nodes).findings == ()
    assert not is_slow(85, values) and 85 < (1 - SLOW_FRACTION) * 97.5


def test_just_under_ten_percent_is_not_flagged_even_with_zero_spread():
    """MAD = 0 makes z infinite, but 9 % below the median stays quiet; 11 % is flagged."""
    assert robust_z(91, [100, 100, 100, 91]) == math.inf
    assert not is_slow(91, [100, 100, 100, 91]) and is_slow(89, [100, 100, 100, 89])


def test_two_nodes_report_a_spread_without_naming_the_slow_one():
    """Two peers cannot be told apart by a median: a 'spread' finding with both numbers."""
    nodes = [NodeResult(host="a", h2d_Bps=53.0 * G), NodeResult(host="b", h2d_Bps=25.0 * G)]
    (finding,) = analyse(nodes).findings
    assert finding.kind == "spread" and finding.z is None
    assert finding.message.startswith("b: host-to-device 25.0 GB/s vs 53.0 GB/s on a: one of two nodes is slow")


def test_missing_checks_and_single_node():
    """None values are skipped; one node and no links flags nothing and ranks at 1.0."""
    health = analyse([NodeResult(host="only", gemm_flops_per_s=1 * T)])
    assert health.findings == () and health.nodes[0].worst_ratio == 1.0 and health.links == ()
    assert "h2d_Bps" not in health.medians


def test_bad_input_is_a_config_error():
    """Repeated hosts, negative values and self-links name what is wrong."""
    with pytest.raises(ConfigError, match="repeat"):
        analyse([NodeResult(host="a"), NodeResult(host="a")])
    with pytest.raises(ConfigError, match="h2d_Bps = -1"):
        NodeResult(host="a", h2d_Bps=-1)
    with pytest.raises(ConfigError, match="two different hosts"):
        LinkResult(hosts=("a", "a"), busbw_Bps=1.0)
