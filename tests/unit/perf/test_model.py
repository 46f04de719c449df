import json

import pytest

from clusterplan.errors import ConfigError
from clusterplan.perf.hf import from_hf_config
from clusterplan.perf.presets import PRESETS, preset

# Published sizes: Llama 2 paper / model cards, Llama 3 Herd paper, GPT-3 paper, SC21 Table 1.
PUBLISHED = {"llama2-7b": 6.74e9, "llama2-13b": 13.02e9, "llama2-70b": 68.98e9, "llama3-8b": 8.03e9,
             "llama3.1-70b": 70.55e9, "llama3.1-405b": 405.85e9, "gpt3-175b": 174.6e9, "gpt-1.7b": 1.7e9,
             "gpt-18b": 18.4e9, "gpt-145b": 145.6e9, "gpt-530b": 529.6e9, "gpt-1t": 1008e9}


@pytest.mark.parametrize("name", PUBLISHED)
def test_preset_parameter_counts_match_published_sizes(name):
    assert PRESETS[name].params == pytest.approx(PUBLISHED[name], rel=0.03 if name == "gpt-1.7b" else 0.005)


def test_gpt_flops_per_token_is_megatron_formula():
    m = preset("gpt-18b")
    L, h, s, V = m.layers, m.hidden, 2048, m.vocab
    assert m.model_flops_per_token(s) == pytest.approx(72 * L * h * h * (1 + s / (6 * h) + V / (12 * L * h)))


def test_causal_attention_halves_the_score_flops():
    m = preset("llama3-8b")
    full, causal = m.forward_flops_per_token(8192), m.forward_flops_per_token(8192, causal=True)
    assert full - causal == pytest.approx(m.layers * 2 * 8192 * m.hidden)


def test_hf_llama_config_reads_into_the_preset_shape():
    config = {"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "intermediate_size": 11008,
              "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 32, "vocab_size": 32000,
              "max_position_embeddings": 4096, "hidden_act": "silu", "tie_word_embeddings": False}
    model = from_hf_config(json.dumps(config))
    assert model.params == PRESETS["llama2-7b"].params


def test_hf_gpt2_config():
    config = {"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12, "vocab_size": 50257,
              "n_positions": 1024}
    assert from_hf_config(json.dumps(config)).params == pytest.approx(124.4e6, rel=0.002)


def test_mixtral_counts_every_expert_but_flops_only_the_active_ones():
    config = {"model_type": "mixtral", "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
              "num_hidden_layers": 32, "num_key_value_heads": 8, "vocab_size": 32000,
              "max_position_embeddings": 32768, "num_local_experts": 8, "num_experts_per_tok": 2}
    model = from_hf_config(json.dumps(config))
    assert model.params == pytest.approx(46.7e9, rel=0.01)   # Mixtral 8x7B: 46.7B total
    assert model.active_layer_matmul_params * model.layers == pytest.approx(12.6e9, rel=0.03)  # ~12.9B active


@pytest.mark.parametrize("text, message", [
    ('{"model_type": "llama", "hidden_size": 4096}', "num_hidden_layers: missing key"),
    ('{"hidden_size": 4096,', "not valid JSON"),
    ('[1, 2]', "expected a JSON object"),
    ('{"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 2, "num_attention_heads": 3, '
     '"vocab_size": 10, "max_position_embeddings": 8, "intermediate_size": 8}', "heads"),
])
def test_bad_config_json_names_the_key(text, message):
    with pytest.raises(ConfigError, match=message):
        from_hf_config(text)


def test_unknown_preset_suggests():
    with pytest.raises(ConfigError, match="did you mean 'llama2-13b'"):
        preset("llama2-31b")


LLAMA = {"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "intermediate_size": 11008,
         "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 32, "vocab_size": 32000,
         "max_position_embeddings": 4096, "model_type": "llama"}


@pytest.mark.parametrize(("change", "key"), [
    ({"num_key_value_heads": "eight"}, "num_key_value_heads"), ({"num_key_value_heads": [8]}, "num_key_value_heads"),
    ({"intermediate_size": 11008.5}, "intermediate_size"), ({"intermediate_size": 1e400}, "intermediate_size"),
    ({"num_local_experts": "8"}, "num_local_experts"), ({"vocab_size": 1e30}, "vocab_size"),
    ({"hidden_size": 2**62}, "hidden_size"),
])
def test_every_shape_is_a_whole_number_in_range(change, key):
    """Strings, lists, fractions, infinities and 2**62 widths are errors naming the key (issue 19 item 5)."""
    with pytest.raises(ConfigError, match=rf"c.json: {key}: must be a whole number from 1 to 2,147,483,648"):
        from_hf_config(json.dumps({**LLAMA, **change}), source="c.json")


def test_odd_names_and_deep_nesting():
    """architectures that are no list of names are errors naming the key (issue 19 item 5); 100,000 nested [ is
    one error."""
    for odd in (5, {"a": 1}):
        with pytest.raises(ConfigError, match="c.json: architectures: must be a list of strings"):
            from_hf_config(json.dumps({**LLAMA, "architectures": odd}), source="c.json")
    with pytest.raises(ConfigError, match="c.json:1: arrays and tables nested more than 64 deep"):
        from_hf_config("[" * 100_000, source="c.json")


def test_causal_flops_are_the_model_flops_less_half_the_attention():
    """Published MFU's 6N + causal attention: Megatron's 6N' + 12 L h s + 6 h V less 6 L h s (heads x head_dim = h)."""
    from clusterplan.perf.presets import preset
    model = preset("llama3-70b")
    s = 8192
    assert model.causal_flops_per_token(s) == pytest.approx(
        model.model_flops_per_token(s) - 6 * model.layers * model.hidden * s)


def test_routed_ffn_is_the_routed_share_of_active_ffn():
    """DeepSeek-V3: 58 of 61 layers MoE, top-8 of expert FFN 2,048 routed, one shared expert of 2,048, 3 dense
    layers of 18,432: routed 8 x 2,048 x 58 / 61, active that plus (58 x 2,048 + 3 x 18,432) / 61."""
    model = PRESETS["deepseek-v3"]
    assert model.routed_ffn == pytest.approx(8 * 2048 * 58 / 61)
    assert model.active_ffn == pytest.approx(8 * 2048 * 58 / 61 + (58 * 2048 + 3 * 18432) / 61)
    assert PRESETS["llama3-8b"].routed_ffn == 0
