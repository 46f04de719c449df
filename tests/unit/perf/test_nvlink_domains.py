"""The collective, step and search models on a rack-scale NVLink domain (GB200 NVL72) against 8-GPU servers."""

import numpy as np
import pytest

from clusterplan.design import design
from clusterplan.perf.collectives import predict, system_from_design
from clusterplan.perf.evidence import training_band
from clusterplan.perf.hardware import Options, hardware
from clusterplan.perf.layout import Constraints
from clusterplan.perf.presets import preset
from clusterplan.perf.search import search
from clusterplan.perf.stage import ranks_per_domain
from clusterplan.spec import load_spec

NVL72 = ['cluster.gpu="gb200"', 'cluster.server="gb200-nvl72"', "cluster.gpus_per_node=4",
         'network.fabric="ib-ndr400"', "network.nics_per_node=4", "cluster.num_nodes=288"]
HGX = ['cluster.gpu="b200"', 'network.fabric="ib-ndr400"', "cluster.num_nodes=144"]


@pytest.fixture(scope="module")
def racks(catalog):
    return design(load_spec(overrides=NVL72), catalog)


@pytest.fixture(scope="module")
def servers(catalog):
    return design(load_spec(overrides=HGX), catalog)


def test_the_collective_node_is_the_nvlink_domain(racks, servers):
    """NVL72: 72 GPUs and 72 NICs a "node" of the collective model; HGX B200: the server's 8 and 8; both 400 Gb/s
    a GPU. 64 GPUs of each domain (a 1,024-GPU job) bring their 64 NICs."""
    big, small, part = system_from_design(racks), system_from_design(servers), system_from_design(racks, 64)
    assert (big.gpus_per_node, big.nics_per_node, small.gpus_per_node, small.nics_per_node) == (72, 72, 8, 8)
    assert (part.gpus_per_node, part.nics_per_node) == (64, 64)
    assert big.node_net_bw_Bps / 72 == small.node_net_bw_Bps / 8 == 50e9
    # the fat-tree's 32-port leaves take 32 tray NICs, not a whole domain: one domain per leaf at least
    assert big.nodes_per_leaf == 1


@pytest.mark.parametrize("gpus", [72, 144, 1152])
@pytest.mark.parametrize("op", ["all_reduce", "all_gather", "alltoall"])
def test_a_72_gpu_domain_is_faster_than_8_gpu_servers_for_the_same_gpus(racks, servers, gpus, op):
    """The same NVLink 5 per GPU and the same 400G NIC per GPU: the 72-GPU domain keeps 72 (or all) ranks on NVLink,
    so a 256 MiB collective on 72, 144 or 1,152 GPUs takes less time than over 9, 18 or 144 HGX servers."""
    size = [256 * 2**20]
    fast = predict(op, size, system_from_design(racks), gpus)
    slow = predict(op, size, system_from_design(servers), gpus)
    assert fast.num_nodes == gpus // 72 and slow.num_nodes == gpus // 8
    assert fast.time_s[0] < slow.time_s[0]


def test_ranks_per_domain_are_the_common_divisor_of_places_and_group():
    """8 places and a group of 16: 8; 9 places (72 GPUs at tp 8) and 16: 1; 9 and 9: 9; 72 and 64: 8 (groups of 64
    straddle 72-GPU domains); 8 and 12: 4; no place (tp wider than the domain): 1; arrays alike."""
    cases = [(8, 16), (9, 16), (9, 9), (72, 64), (9, 27), (8, 12), (0, 4), (64, 64)]
    assert [ranks_per_domain(p, g) for p, g in cases] == [8, 1, 9, 8, 9, 4, 1, 64]
    places, groups = np.array([p for p, _ in cases]), np.array([g for _, g in cases])
    assert ranks_per_domain(places, groups).tolist() == [8, 1, 9, 8, 9, 4, 1, 64]


def test_the_search_keeps_tp_inside_the_domain_and_lets_ep_span_it(racks, servers):
    """DeepSeek-V3 on 1,024 GPUs, 4M-token batches, ZeRO-1: on NVL72 (64 of each 72 GPUs) every layout's tp divides 64
    and the best is expert-parallel across more than one server (ep > 8, within the domain); on HGX B200 no tp
    passes 8, and its best layout is slower."""
    model = preset("deepseek-v3")
    options = Options(seq_len=model.seq_len, global_batch=1024)
    fixed = Constraints(zero=1)
    found = search(model, hardware(racks, domain_gpus=64), options, 1024, fixed, top=10)
    assert all(64 % p.layout.tp == 0 for p in found.best)
    best = found.best[0].layout
    assert 8 < best.ep <= 64 and (best.etp or best.tp) * best.ep <= 64   # the experts' own group, ep x etp
    hgx = search(model, hardware(servers), options, 1024, fixed, top=10)
    assert all(p.layout.tp <= 8 for p in hgx.best)
    assert found.best[0].tokens_per_s > hgx.best[0].tokens_per_s


def test_a_rack_scale_domain_is_out_of_every_validated_regime():
    """A larger NVLink domain than any validated run's (GB200's 72: NVIDIA's Megatron-Bridge runs) names itself as
    the reason and takes the widest band, even on a validated GPU; a GB200 FP8 run is validated, its BF16 is not."""
    band = training_band(gpu="h100-sxm", precision="bf16", num_gpus=1024, params=70e9, attention="flash",
                         technology="infiniband", seq_len=4096, domain_gpus=576)
    assert band.regime == "out of domain"
    assert band.out_of_domain == ("an NVLink domain of 576 GPUs (every validated run: 72-GPU domains or less)",)
    racks = dict(params=405e9, attention="flash", technology="infiniband", seq_len=8192, domain_gpus=72)
    assert training_band(gpu="gb200", precision="fp8", num_gpus=256, **racks).out_of_domain == ()
    assert training_band(gpu="gb200", precision="bf16", num_gpus=256, **racks).out_of_domain == (
        "no validated bf16 run on gb200",)
    servers = training_band(gpu="h100-sxm", precision="bf16", num_gpus=1024, params=70e9, attention="flash",
                            technology="infiniband", seq_len=4096, domain_gpus=8)
    assert servers.out_of_domain == () and band.high - band.low > servers.high - servers.low
