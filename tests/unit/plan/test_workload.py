"""plan/workload.py: a scenario's [workload] resolved on its design (model, GPUs, options, fixed layout)."""

import json

import pytest

from clusterplan.design import design
from clusterplan.errors import ConfigError
from clusterplan.jobs import Workload
from clusterplan.perf.layout import Constraints
from clusterplan.perf.model import with_seq_len
from clusterplan.perf.presets import preset
from clusterplan.plan.workload import (MAX_TOKENS_PER_BATCH, global_batches, job_domain_gpus, job_gpus, resolve,
                                     workload_model)
from clusterplan.spec import load_spec


def test_workload_model_from_preset_or_config(tmp_path):
    """A preset by name, a config.json by path, and an unreadable path named in the error."""
    assert workload_model(Workload(model="llama3-8b")).name == "llama3-8b"
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 256, "num_attention_heads": 4,
                                  "intermediate_size": 512, "vocab_size": 1000, "max_position_embeddings": 128}))
    assert workload_model(Workload(model_config=str(config))).layers == 2
    with pytest.raises(ConfigError, match="workload.model_config: cannot read"):
        workload_model(Workload(model_config=str(tmp_path / "missing.json")))
    with pytest.raises(ConfigError, match="workload.model: unknown model"):
        workload_model(Workload(model="llama9"))
    assert workload_model(Workload(), default="llama2-7b").name == "llama2-7b"
    with pytest.raises(ConfigError, match="no model"):
        workload_model(Workload())


def test_job_gpus_are_whole_nodes_within_the_cluster(reference, catalog):
    """workload.gpus, or the whole cluster; more than the cluster, or part of a node, is an error."""
    built = design(reference, catalog)
    assert job_gpus(Workload(), built) == 128 and job_gpus(Workload(gpus=64), built) == 64
    with pytest.raises(ConfigError, match="the cluster has 128 GPUs, got 256"):
        job_gpus(Workload(gpus=256), built)
    with pytest.raises(ConfigError, match="12 GPUs are not whole nodes of 8"):
        job_gpus(Workload(gpus=12), built)


def test_resolve_holds_the_given_degrees_and_searches_the_rest(catalog):
    """tp and recompute given are held; the rest are None (searched); the batch is about 4M tokens."""
    spec = load_spec(None, ['workload.model="llama2-13b"', "workload.tp=4", 'workload.recompute="full"',
                            "workload.seq_len=2048"])
    job = resolve(spec.workload, design(spec, catalog))
    assert job.model.seq_len == 2048 and job.options.seq_len == 2048 and job.num_gpus == 128
    assert job.options.global_batch == 2048   # 4 Mi tokens / 2048
    assert job.fixed == Constraints(tp=4, recompute="full")


@pytest.mark.parametrize(("overrides", "message"), [
    (["workload.tp=3"], "workload.tp: 3 does not divide the 128 GPUs"),
    (["workload.tp=32"], "workload.tp: the model's 40 attention heads are not divisible by tp = 32"),
    (["workload.tp=8", "workload.pp=2", "workload.dp=4"], "workload.dp: tp x pp x dp x cp = 64, not the 128 GPUs"),
])
def test_resolve_rejects_degrees_that_cannot_hold(catalog, overrides, message):
    """A fixed degree that does not divide the job, or that the heads or the GPU count refuse, names its key."""
    spec = load_spec(None, ['workload.model="llama2-13b"', *overrides])
    with pytest.raises(ConfigError) as error:
        resolve(spec.workload, design(spec, catalog))
    assert str(error.value) == message


def test_a_workload_fixes_what_it_sets_and_frees_the_rest(catalog):
    """[workload] zero = -1 and the 0 / "" keys are free (None); zero = 0 and recompute = "none" are held."""
    spec = load_spec(None, ["workload.model=\"llama2-13b\"", "workload.tp=2"])
    job = resolve(spec.workload, design(spec, catalog))
    assert job.fixed == Constraints(tp=2) and job.num_gpus == 128
    spec = load_spec(None, ["workload.model=\"llama2-13b\"", "workload.zero=0", "workload.recompute=\"none\""])
    assert resolve(spec.workload, design(spec, catalog)).fixed == Constraints(zero=0, recompute="none")


@pytest.mark.parametrize("model, tokens, expected", [
    ("llama3-405b", 15e12, (512, 1024, 2048)),     # 4M -> 16M tokens of 8,192: Llama 3 405B's final batch
    ("llama2-7b", 0.0, (1024,)),                    # Chinchilla budget: the compute-optimal batch is below 4M
    ("llama2-13b", 2e12, (1024, 2048)),             # 2T tokens: B_opt about 11M tokens, so 4M and 8M
])
def test_global_batches_stay_within_the_stated_range(model, tokens, expected):
    """The search's global batches: 4M tokens, doubling within 16M and DeepSeek's compute-optimal batch."""
    shaped = preset(model)
    batches = global_batches(shaped, tokens)
    assert batches == expected
    assert all(b * shaped.seq_len <= MAX_TOKENS_PER_BATCH for b in batches)
    assert global_batches(with_seq_len(shaped, 2048), tokens)[0] == expected[0] * shaped.seq_len // 2048


def test_a_fixed_global_batch_is_not_searched(reference, catalog):
    """workload.global_batch set holds the batch; left at 0 the job lists the batches to search."""
    built = design(reference, catalog)
    searched = resolve(Workload(model="llama3-405b", tokens=15e12), built)
    fixed = resolve(Workload(model="llama3-405b", tokens=15e12, global_batch=2048), built)
    assert searched.global_batches == (512, 1024, 2048) and fixed.global_batches == (2048,)


def test_the_workload_s_model_is_trained_at_its_seq_len():
    """Every caller (plan, train, reliability, the no-layout fallback) gets the model at workload.seq_len."""
    model = workload_model(Workload(model="gpt-1.7b", seq_len=8192))
    assert model.seq_len == 8192 and model.params == preset("gpt-1.7b").params + (8192 - 2048) * 2304
    assert workload_model(Workload(model="gpt-1.7b")) == preset("gpt-1.7b")


NVL72 = ['cluster.gpu="gb200"', 'cluster.server="gb200-nvl72"', "cluster.gpus_per_node=4",
         'network.fabric="ib-ndr400"', "network.nics_per_node=4", "cluster.num_nodes=288"]


@pytest.mark.parametrize(("gpus", "used"), [(1152, 0), (576, 0), (1024, 64), (512, 64), (36, 36), (120, 60)])
def test_a_job_uses_whole_domains_or_the_most_trays_of_each_that_divide_it(catalog, gpus, used):
    """1,152 and 576 GPUs: whole 72-GPU domains (0 = all); 1,024 and 512: 64 of each (16 trays of 18); 36: one
    domain's 36; 120: 60 of each of 2. On HGX the domain is the server and always whole (0)."""
    built = design(load_spec(None, NVL72), catalog)
    assert job_domain_gpus(gpus, built) == used
    assert job_domain_gpus(64, design(load_spec(None, []), catalog)) == 0


def test_a_job_that_needs_more_domains_than_the_cluster_names_workload_gpus(catalog):
    """1,000 GPUs fit 40 of each domain (25 domains); the cluster has 16."""
    built = design(load_spec(None, NVL72), catalog)
    with pytest.raises(ConfigError, match="workload.gpus: 1,000 GPUs take 40 of each 72-GPU NVLink domain, 25 domains; "
                                          "the cluster has 16"):
        job_domain_gpus(1000, built)


@pytest.mark.parametrize(("overrides", "message"), [
    (["workload.tp=16"], "workload.tp: tp = 16 does not tile the 72 GPUs the job uses of each 72-GPU NVLink domain"),
    (["workload.tp=16", "workload.gpus=1024"], None),
    (["workload.tp=128", "workload.gpus=1024"], None),
    (["workload.tp=32", "workload.gpus=1008"], "workload.tp: 32 does not divide the 1008 GPUs"),
])
def test_a_fixed_tp_must_tile_the_domain(catalog, overrides, message):
    """tp 16 straddles 72-GPU domains (an error naming workload.tp); on 64 of each it tiles; 128 spans two whole."""
    spec = load_spec(None, [*NVL72, 'workload.model="llama3.1-405b"', *overrides])
    if message is None:
        assert resolve(spec.workload, design(spec, catalog)).fixed.tp == spec.workload.tp
        return
    with pytest.raises(ConfigError) as error:
        resolve(spec.workload, design(spec, catalog))
    assert str(error.value).startswith(message)


def test_the_workload_s_software_and_moe_keys_reach_the_options(catalog):
    """software applies its era's switches over the keys, the merged MoE schedule among them (no older stack had
    it); grad_reduce, moe_dispatcher and expert_imbalance are passed as set; the defaults are BF16 gradients and no
    MoE overlap."""
    spec = load_spec(overrides=['workload.model="llama2-7b"', 'workload.software="deepspeed-2023"',
                                'workload.grad_reduce="fp32"', "workload.moe_overlap=true",
                                'workload.moe_dispatcher="deepep"', "workload.expert_imbalance=1.25"])
    options = resolve(spec.workload, design(spec, catalog)).options
    assert (options.attention, options.sequence_parallel, options.tp_overlap, options.overlap_grad_reduce) == (
        "flash1", False, False, False)
    assert (options.grad_reduce, options.moe_overlap, options.moe_dispatcher, options.expert_imbalance) == (
        "fp32", False, "deepep", 1.25)
    default = resolve(load_spec(overrides=['workload.model="llama2-7b"']).workload,
                      design(load_spec(), catalog)).options
    assert (default.grad_reduce, default.moe_overlap, default.moe_dispatcher) == ("bf16", False, "alltoall")


@pytest.mark.parametrize("key, value", [("software", '"jax-2019"'), ("grad_reduce", '"fp16"'),
                                        ("moe_dispatcher", '"nccl"'), ("expert_imbalance", "0.5")])
def test_bad_software_and_moe_keys_name_themselves(key, value):
    """A value outside a key's choices is an error naming workload.<key>."""
    with pytest.raises(ConfigError, match=key):
        load_spec(overrides=[f"workload.{key}={value}"])


def test_cuda_graphs_and_routing_reach_the_options(catalog):
    """workload.cuda_graphs and workload.moe_routing are passed as set; the defaults are eager launches (Megatron-
    Core's cuda_graph_impl none) and a dropless router."""
    spec = load_spec(overrides=['workload.model="qwen3-30b-a3b"', 'workload.cuda_graphs="attention+router"',
                                'workload.moe_routing="tokendrop"'])
    options = resolve(spec.workload, design(spec, catalog)).options
    assert (options.cuda_graphs, options.moe_dropless) == ("attention+router", False)
    default = resolve(load_spec(overrides=['workload.model="qwen3-30b-a3b"']).workload,
                      design(load_spec(), catalog)).options
    assert (default.cuda_graphs, default.moe_dropless) == ("none", True)


def test_a_whole_iteration_graph_of_a_dropless_moe_model_is_refused_naming_the_key(catalog):
    """Full capture needs static shapes: a dropless MoE router is refused (workload.cuda_graphs); token dropping
    and dense models take it."""
    spec = load_spec(overrides=['workload.model="qwen3-30b-a3b"', 'workload.cuda_graphs="full"'])
    with pytest.raises(ConfigError) as error:
        resolve(spec.workload, design(spec, catalog))
    assert error.value.key == "workload.cuda_graphs"
    for extra in ('workload.model="qwen3-30b-a3b"', 'workload.model="llama2-7b"'):
        spec = load_spec(overrides=[extra, 'workload.cuda_graphs="full"', 'workload.moe_routing="tokendrop"'])
        assert resolve(spec.workload, design(spec, catalog)).options.cuda_graphs == "full"


@pytest.mark.parametrize("key, value", [("cuda_graphs", '"layers"'), ("moe_routing", '"capacity"')])
def test_a_bad_cuda_graphs_or_routing_value_names_its_key(key, value):
    """A capture scope or a routing outside the choices names workload.<key>."""
    with pytest.raises(ConfigError, match=key):
        load_spec(overrides=[f"workload.{key}={value}"])
