"""perf/hf.py: every family's config.json keys read onto the model's shapes; bad values name their key."""

import json
from dataclasses import replace
from pathlib import Path

import pytest

from clusterplan.errors import ConfigError
from clusterplan.perf.hardware import Options
from clusterplan.perf.hf import DEFAULT_TRAINING_CONTEXT, FAMILIES, config_keys, from_hf_config
from clusterplan.perf.layout import Layout
from clusterplan.perf.presets import CONFIGS, PRESETS
from clusterplan.perf.step import evaluate


def read(stem: str):
    return from_hf_config((CONFIGS / f"{stem}.json").read_text(encoding="utf-8"), source=f"{stem}.json")


def config(stem: str) -> dict:
    return json.loads((CONFIGS / f"{stem}.json").read_text(encoding="utf-8"))


def test_issue_22_models_read_their_published_sizes():
    """Gemma-2-27B 27.2B (explicit head_dim, gated GELU), Qwen3-32B 32.8B (head_dim 128 x 64 heads on 5,120),
    Falcon-7B at all (no context key, multi-query)."""
    gemma = read("gemma2-27b")
    assert gemma.params == pytest.approx(27.2e9, rel=0.002) and gemma.mlp == "geglu" and gemma.tied_embeddings
    assert gemma.attention_head_dim == 128 and gemma.q_dim == 4096 != gemma.hidden
    assert (gemma.sliding_window, gemma.sliding_layers) == (4096, 23)
    qwen = read("qwen3-32b")
    assert qwen.params == pytest.approx(32.8e9, rel=0.002) and qwen.q_dim == 8192 and qwen.hidden == 5120
    falcon = read("falcon-7b")
    assert falcon.query_groups == 1 and falcon.seq_len == 2048 and "Falcon's default" in falcon.seq_len_note


def test_moe_counts_dense_and_expert_layers_apart():
    """DeepSeek-V3: 3 dense layers then 58 MoE layers of 256 routed + 1 shared expert; MLA latents."""
    model = read("deepseek-v3")
    assert (model.dense_layers, model.moe_layers, model.experts, model.experts_per_token) == (3, 58, 256, 8)
    assert model.dense_width == 18432 and model.ffn_hidden == 2048 and model.shared_ffn_hidden == 2048
    assert model.kv_cache_width == 512 + 64 and (model.attention_head_dim, model.value_head_dim) == (192, 128)
    assert model.params == pytest.approx(671e9, rel=0.002) and model.active_params < model.params / 17


def test_qwen_moe_keys_and_mlp_only_layers():
    """decoder_sparse_step and mlp_only_layers choose the MoE layers; shared_expert_intermediate_size is read."""
    base = config("qwen1.5-moe-a2.7b")
    model = from_hf_config(json.dumps(base))
    assert (model.moe_layers, model.shared_ffn_hidden, model.experts) == (24, 5632, 60)
    sparse = from_hf_config(json.dumps({**base, "decoder_sparse_step": 2, "mlp_only_layers": [1]}))
    assert sparse.moe_layers == 11 and sparse.dense_width == 5632 and sparse.params < model.params
    with pytest.raises(ConfigError, match="c.json: mlp_only_layers: must be a whole number from 0"):
        from_hf_config(json.dumps({**base, "mlp_only_layers": ["x"]}), source="c.json")


def test_nested_text_config_of_a_multimodal_gemma3():
    """Gemma3ForConditionalGeneration: the language model is read from text_config."""
    text = config("gemma3-1b")
    nested = {"architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3", "text_config": text,
              "vision_config": {"hidden_size": 1152}}
    assert from_hf_config(json.dumps(nested)).params == read("gemma3-1b").params
    with pytest.raises(ConfigError, match="text_config.num_hidden_layers: must be a whole number"):
        from_hf_config(json.dumps({**nested, "text_config": {**text, "num_hidden_layers": "26"}}))


def test_training_context_is_the_pretraining_one_at_most_the_default():
    """One rule: the pre-training context (before RoPE scaling), capped at 8,192; the note says where."""
    assert read("llama3.1-8b").seq_len == 8192 and "extended from 8,192" in read("llama3.1-8b").seq_len_note
    assert read("deepseek-v3").seq_len == 4096 and read("gpt2").seq_len == 1024
    mixtral = PRESETS["mixtral-8x7b"]
    assert mixtral.seq_len == DEFAULT_TRAINING_CONTEXT and "capped" in mixtral.seq_len_note
    assert mixtral.max_context == 32768 and mixtral.name == "mixtral-8x7b"


def test_name_from_name_or_path_or_type_and_size():
    """_name_or_path names the model (a local path by its last part), else the model type and size."""
    assert read("falcon-7b").name == "tiiuae/falcon-7b-instruct"
    assert read("mixtral-8x7b").name == "mixtral-46.7b"
    assert from_hf_config(json.dumps({**config("gpt2"), "_name_or_path": "/models/my-gpt/"})).name == "my-gpt"


def test_presets_are_their_shipped_configs():
    """A preset read from a shipped config.json equals a fresh read of that file: the two cannot disagree."""
    for name in ("llama3.1-8b", "gemma2-27b", "deepseek-v3", "qwen3-30b-a3b"):
        assert replace(read(name), name=name, source=PRESETS[name].source) == PRESETS[name]


def test_sliding_window_bounds_attention_flops():
    """A sliding layer attends its window: at 32k tokens Gemma 2's attention FLOPs are about half of full."""
    model = read("gemma2-27b")
    full = replace(model, sliding_layers=0)
    assert model.attention_flops_per_token(4096) == full.attention_flops_per_token(4096)
    ratio = model.attention_flops_per_token(32768) / full.attention_flops_per_token(32768)
    assert ratio == pytest.approx((23 * 4096 + 23 * 32768) / (46 * 32768))


def test_attention_flops_come_from_heads_times_head_dim():
    """Qwen3-32B's 64 x 128 query heads are 8,192 wide, not its 5,120 hidden: the scores count that width."""
    model = read("qwen3-32b")
    assert model.attention_flops_per_token(4096) == 4 * 4096 * 64 * 128
    assert model.attention_matmul_params == 5120 * (8192 + 2 * 1024) + 8192 * 5120


LLAMA = config("llama3.1-8b")


@pytest.mark.parametrize(("change", "key", "message"), [
    ({"num_attention_heads": 30}, "num_attention_heads", "30 heads do not divide hidden size 4096: give head_dim"),
    ({"num_local_experts": 4, "num_experts_per_tok": 8}, "num_experts_per_tok", "must be <= experts (4)"),
    ({"num_key_value_heads": 5}, "num_key_value_heads", "must divide the 32 attention heads"),
    ({"tie_word_embeddings": "yes"}, "tie_word_embeddings", "must be true or false"),
    ({"architectures": 5}, "architectures", "must be a list of strings"),
    ({"architectures": {"a": 1}}, "architectures", "must be a list of strings"),
    ({"rope_scaling": {"original_max_position_embeddings": 8192.5}}, "rope_scaling.original_max_position_embeddings",
     "must be a whole number"),
])
def test_inconsistent_or_malformed_values_name_the_key(change, key, message):
    with pytest.raises(ConfigError) as caught:
        from_hf_config(json.dumps({**LLAMA, **change}), source="c.json")
    assert caught.value.key == key and message in caught.value.message


@pytest.mark.parametrize("text, key", [
    ('"num_key_value_heads": NaN', "num_key_value_heads"), ('"intermediate_size": 1e400', "intermediate_size"),
    ('"num_key_value_heads": Infinity', "num_key_value_heads"), ('"vocab_size": 1e30', "vocab_size"),
])
def test_non_finite_and_huge_numbers_in_raw_json_name_the_key(text, key):
    """NaN, Infinity and 1e400 as written in a file (not via json.dumps) are errors naming the key."""
    raw = json.dumps(LLAMA)[:-1] + ", " + text + "}"
    with pytest.raises(ConfigError, match=rf"c.json: {key}: must be a whole number from 1 to 2,147,483,648"):
        from_hf_config(raw, source="c.json")


def test_gpt2_n_inner_must_be_a_whole_number():
    with pytest.raises(ConfigError, match="c.json: n_inner: must be a whole number"):
        from_hf_config(json.dumps({**config("gpt2"), "n_inner": "x"}), source="c.json")


def test_docs_models_lists_every_key_read():
    """docs/models.md's table names every config.json key the reader reads, and every family it knows."""
    text = (Path(__file__).resolve().parents[3] / "docs" / "models.md").read_text(encoding="utf-8")
    missing = {key for keys in config_keys().values() for key in keys if f"`{key}`" not in text}
    assert not missing
    assert all(f"`{model_type}`" in text for model_type in FAMILIES)


def test_step_time_counts_the_window_and_the_latent_projections(hw):
    """Gemma 2's sliding layers make a 32k-token step cheaper than full attention on every layer; MLA's
    down- and up-projections are GEMMs of their own (DeepSeek-V2-Lite computes, and its FLOPs count them)."""
    opts = Options(seq_len=32768, global_batch=8)
    gemma = PRESETS["gemma2-27b"]
    windowed = evaluate(gemma, hw, opts, Layout(tp=8, dp=1, mbs=1)).step.compute
    full = evaluate(replace(gemma, sliding_layers=0), hw, opts, Layout(tp=8, dp=1, mbs=1)).step.compute
    assert windowed < 0.95 * full
    lite = PRESETS["deepseek-v2-lite"]
    step = evaluate(lite, hw, Options(seq_len=4096, global_batch=8), Layout(mbs=1)).step
    unprojected = replace(lite, kv_lora_rank=0, rope_head_dim=0, kv_heads=0)
    assert lite.attention_matmul_params < unprojected.attention_matmul_params and step.total > 0
