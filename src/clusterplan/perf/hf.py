"""Hugging Face ``config.json`` -> ``Transformer``: one reader for every family it knows (docs/models.md).

Each family maps its own keys onto the model's shapes: explicit ``head_dim``, gated or plain MLP,
grouped- or multi-query attention, MoE experts (routed, shared, dense layers between them),
multi-head latent attention, sliding-window layers, tied embeddings, and the context it trains at.
A key that is present must hold a value of its type and range, else the error names it; an
architecture the reader does not know is an error naming the families it knows.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from clusterplan.errors import ConfigError
from clusterplan.parsing import parse_json
from clusterplan.perf.model import Transformer
from clusterplan.schema import FROZEN

LARGEST_SHAPE = 2**31   # past any model's layers, width, heads, vocabulary or context, and safe in int64 FLOP counts
# The default training context: the context the model was pre-trained at (before any long-context RoPE
# extension), at most 8,192 tokens, the Llama 3 pre-training length (arXiv 2407.21783, section 3.4.1).
DEFAULT_TRAINING_CONTEXT = 8192
FALCON_CONTEXT = 2048   # Falcon configs state none: 2,048 is FalconConfig's default and Falcon's training context


@dataclass(**FROZEN)
class Family:
    name: str                       # as docs/models.md and the error name it
    kind: str                       # "decoder" (Llama-style keys), "gpt2", "gptj", "neox", "falcon"
    tied: bool = False              # tie_word_embeddings when the config omits it (the family's default)


FAMILIES = {
    "llama": Family(name="Llama 2/3/3.1/3.2/3.3", kind="decoder"),
    "mistral": Family(name="Mistral", kind="decoder"),
    "mixtral": Family(name="Mixtral", kind="decoder"),
    "qwen2": Family(name="Qwen2/2.5", kind="decoder"),
    "qwen3": Family(name="Qwen3", kind="decoder"),
    "qwen2_moe": Family(name="Qwen MoE", kind="decoder"),
    "qwen3_moe": Family(name="Qwen MoE", kind="decoder"),
    "gemma": Family(name="Gemma", kind="decoder", tied=True),
    "gemma2": Family(name="Gemma 2", kind="decoder", tied=True),
    "gemma3_text": Family(name="Gemma 3", kind="decoder", tied=True),
    "gemma3": Family(name="Gemma 3", kind="decoder", tied=True),
    "phi3": Family(name="Phi-3/Phi-4", kind="decoder"),
    "olmo": Family(name="OLMo", kind="decoder"),
    "olmo2": Family(name="OLMo 2", kind="decoder"),
    "deepseek_v2": Family(name="DeepSeek-V2", kind="decoder"),
    "deepseek_v3": Family(name="DeepSeek-V3", kind="decoder"),
    "falcon": Family(name="Falcon", kind="falcon", tied=True),
    "RefinedWebModel": Family(name="Falcon", kind="falcon", tied=True),
    "RefinedWeb": Family(name="Falcon", kind="falcon", tied=True),
    "gpt_neox": Family(name="GPT-NeoX", kind="neox"),
    "gpt2": Family(name="GPT-2", kind="gpt2", tied=True),
    "gptj": Family(name="GPT-J", kind="gptj"),
}
ARCHITECTURES = {
    "LlamaForCausalLM": "llama", "MistralForCausalLM": "mistral", "MixtralForCausalLM": "mixtral",
    "Qwen2ForCausalLM": "qwen2", "Qwen3ForCausalLM": "qwen3", "Qwen2MoeForCausalLM": "qwen2_moe",
    "Qwen3MoeForCausalLM": "qwen3_moe", "GemmaForCausalLM": "gemma", "Gemma2ForCausalLM": "gemma2",
    "Gemma3ForCausalLM": "gemma3_text", "Gemma3ForConditionalGeneration": "gemma3", "Phi3ForCausalLM": "phi3",
    "OlmoForCausalLM": "olmo", "Olmo2ForCausalLM": "olmo2", "DeepseekV2ForCausalLM": "deepseek_v2",
    "DeepseekV3ForCausalLM": "deepseek_v3", "FalconForCausalLM": "falcon", "RWForCausalLM": "falcon",
    "GPTNeoXForCausalLM": "gpt_neox", "GPT2LMHeadModel": "gpt2", "GPTJForCausalLM": "gptj",
}
# A shape the model rejects is reported under the config key it came from.
FIELD_KEYS = {"heads": "num_attention_heads", "kv_heads": "num_key_value_heads", "layers": "num_hidden_layers",
              "experts_per_token": "num_experts_per_tok", "dense_layers": "first_k_dense_replace",
              "sliding_layers": "sliding_window", "rope_head_dim": "qk_rope_head_dim", "hidden": "hidden_size",
              "vocab": "vocab_size", "ffn_hidden": "intermediate_size"}
KNOWN = ", ".join(dict.fromkeys(family.name for family in FAMILIES.values()))


class Config:
    """A config.json object whose values are checked as they are read; errors name the key."""

    def __init__(self, values: dict, source: str, prefix: str = ""):
        self.values, self.source, self.prefix = values, source, prefix

    def error(self, key: str, message: str) -> ConfigError:
        return ConfigError(message, key=self.prefix + key, source=self.source)

    def has(self, key: str) -> bool:
        return self.values.get(key) is not None

    def integer(self, key: str, default: int | None = None, *, low: int = 1) -> int | None:
        """``key`` as a whole number in low .. 2**31 (``default`` where it is absent or null)."""
        value = self.values.get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= LARGEST_SHAPE:
            raise self.error(key, f"must be a whole number from {low} to {LARGEST_SHAPE:,}, got {_shown(value)}")
        return value

    def need(self, *keys: str) -> int:
        """The first of ``keys`` present, as a whole number; missing is an error naming the first."""
        for key in keys:
            if self.has(key):
                return self.integer(key)
        raise self.error(keys[0], "missing key" + (f" (one of {', '.join(keys)})" if len(keys) > 1 else ""))

    def flag(self, key: str, default: bool) -> bool:
        value = self.values.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self.error(key, f"must be true or false, got {_shown(value)}")
        return value

    def text(self, key: str, default: str = "") -> str:
        value = self.values.get(key)
        if value is None:
            return default
        if not isinstance(value, str):
            raise self.error(key, f"must be a string, got {_shown(value)}")
        return value

    def table(self, key: str) -> dict:
        value = self.values.get(key)
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.error(key, f"must be an object, got {_shown(value)}")
        return value

    def integers(self, key: str) -> list[int]:
        value = self.values.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.error(key, f"must be a list of whole numbers, got {_shown(value)}")
        return [Config({key: item}, self.source, self.prefix).integer(key, low=0) for item in value]

    def texts(self, key: str) -> list[str]:
        value = self.values.get(key)
        if value is None:
            return []
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise self.error(key, f"must be a list of strings, got {_shown(value)}")
        return value


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def from_hf_config(text: str, *, source: str = "config.json", name: str = "") -> Transformer:
    """A model from the text of a Hugging Face ``config.json``; ``name`` overrides the name it carries."""
    top = Config(_json_object(text, source), source)
    model_type = _model_type(top)
    config = top
    if isinstance(top.values.get("text_config"), dict):           # multimodal: the language model's part
        config = Config(top.table("text_config"), source, "text_config.")
    family = FAMILIES[model_type]
    shapes = READERS[family.kind](config, family)
    shapes.update(_context(config, family))
    try:
        model = Transformer(name="model", source=source, **shapes)
        return Transformer(**{**_fields(model), "name": name or _model_name(top, model_type, model.params)})
    except ConfigError as error:
        key = config.prefix + FIELD_KEYS.get(error.key, error.key)
        raise ConfigError(error.message, key=key, source=source) from None


def _fields(model: Transformer) -> dict:
    return {field: getattr(model, field) for field in Transformer.__dataclass_fields__}


def _json_object(text: str, source: str) -> dict:
    try:
        config = parse_json(text, source=source)
    except json.JSONDecodeError as error:
        raise ConfigError(f"not valid JSON: {error.msg}", source=source, line=error.lineno) from None
    if not isinstance(config, dict):
        raise ConfigError("expected a JSON object", source=source)
    return config


def _model_type(config: Config) -> str:
    """The family key: ``model_type``, else the first of ``architectures``; unknown is an error."""
    model_type = config.text("model_type")
    architectures = config.texts("architectures")
    architecture = architectures[0] if architectures else ""
    if model_type in FAMILIES:
        return model_type
    if architecture in ARCHITECTURES:
        return ARCHITECTURES[architecture]
    if not model_type and not architecture and config.has("n_embd"):
        return "gpt2"                                                 # the oldest GPT-2 configs name neither
    named = " ".join(f"{key} {value!r}" for key, value in (("model_type", model_type), ("architectures",
                                                                                        architecture)) if value)
    raise config.error("model_type", f"unknown architecture ({named or 'neither model_type nor architectures'}); "
                                     f"known families: {KNOWN}")


def _model_name(config: Config, model_type: str, params: int) -> str:
    """``_name_or_path`` (its last part when it is a local path), else the model type and size."""
    named = config.values.get("_name_or_path")
    if isinstance(named, str) and named.strip():
        return named.rstrip("/").rsplit("/", 1)[-1] if named.startswith(("/", ".", "~")) else named
    size = f"{params / 1e9:.3g}b" if params >= 1e9 else f"{params / 1e6:.3g}m"
    return f"{model_type}-{size}"


# Families ---------------------------------------------------------------------------------------


def _decoder(config: Config, family: Family) -> dict:
    """Llama-style keys: Llama, Mistral/Mixtral, Qwen, Gemma, Phi-3/4, OLMo, DeepSeek."""
    hidden = config.need("hidden_size")
    act = config.text("hidden_activation") or config.text("hidden_act", "silu")
    shapes = dict(layers=config.need("num_hidden_layers"), hidden=hidden, heads=config.need("num_attention_heads"),
                  vocab=config.need("vocab_size"), kv_heads=config.integer("num_key_value_heads", 0),
                  head_dim=config.integer("head_dim", 0), mlp="geglu" if act.startswith("gelu") else "swiglu",
                  norm="rmsnorm", bias=config.flag("attention_bias", False) or config.flag("mlp_bias", False),
                  learned_positions=False, tied_embeddings=config.flag("tie_word_embeddings", family.tied))
    dense = config.integer("intermediate_size")
    shapes.update(_experts(config, shapes["layers"], dense))
    shapes.update(_latent_attention(config))
    shapes.update(_sliding(config, shapes["layers"]))
    return shapes


def _experts(config: Config, layers: int, dense: int | None) -> dict:
    """MoE keys of Mixtral, Qwen MoE and DeepSeek; a dense model needs ``intermediate_size``."""
    routed = (config.integer("num_local_experts") or config.integer("num_experts")
              or config.integer("n_routed_experts"))
    if not routed or routed == 1:
        if dense is None:
            raise config.error("intermediate_size", "missing key")
        return dict(ffn_hidden=dense)
    expert = config.integer("moe_intermediate_size") or dense
    if expert is None:
        raise config.error("intermediate_size", "missing key (or moe_intermediate_size)")
    shared = (config.integer("shared_expert_intermediate_size", 0, low=0)
              or config.integer("n_shared_experts", 0, low=0) * expert)
    first_dense = config.integer("first_k_dense_replace", 0, low=0)
    every = config.integer("moe_layer_freq", 1) if config.has("first_k_dense_replace") else \
        config.integer("decoder_sparse_step", 1)
    dense_only = set(config.integers("mlp_only_layers"))
    moe = [index for index in range(layers)
           if index >= first_dense and index not in dense_only
           and ((index % every == 0) if config.has("first_k_dense_replace") else ((index + 1) % every == 0))]
    # group-limited routing (DeepSeek-V3: 8 groups of experts, each token's experts from its best 4)
    groups, groups_per_token = config.integer("n_group", 0, low=0), config.integer("topk_group", 0, low=0)
    return dict(ffn_hidden=expert, experts=routed, experts_per_token=config.need("num_experts_per_tok"),
                shared_ffn_hidden=shared, dense_layers=layers - len(moe), dense_ffn_hidden=dense or 0,
                expert_groups=groups if groups_per_token else 0, expert_groups_per_token=groups_per_token)


def _latent_attention(config: Config) -> dict:
    """DeepSeek's multi-head latent attention: low-rank q and kv, decoupled RoPE keys."""
    if not config.has("kv_lora_rank"):
        return {}
    rope = config.need("qk_rope_head_dim")
    return dict(kv_lora_rank=config.integer("kv_lora_rank"), q_lora_rank=config.integer("q_lora_rank", 0),
                rope_head_dim=rope, head_dim=config.need("qk_nope_head_dim") + rope,
                v_head_dim=config.need("v_head_dim"))


def _sliding(config: Config, layers: int) -> dict:
    """Sliding-window layers: ``layer_types``, Gemma 2's alternation, Gemma 3's pattern, or all layers."""
    window = config.integer("sliding_window", 0, low=0)
    model_type = config.text("model_type")
    if not window or config.values.get("use_sliding_window") is False:
        return {}
    if config.has("layer_types"):
        sliding = sum(kind == "sliding_attention" for kind in config.texts("layer_types"))
    elif model_type == "gemma2":
        sliding = (layers + 1) // 2                                  # even layers slide, odd ones attend all
    elif config.has("sliding_window_pattern"):
        pattern = config.integer("sliding_window_pattern")           # every pattern-th layer is global
        sliding = layers - layers // pattern
    elif config.has("max_window_layers") and config.values.get("use_sliding_window"):
        sliding = max(0, layers - config.integer("max_window_layers", low=0))
    else:
        sliding = layers
    return dict(sliding_window=window, sliding_layers=sliding) if sliding else {}


def _gpt2(config: Config, family: Family) -> dict:
    hidden = config.need("n_embd", "hidden_size")
    return dict(layers=config.need("n_layer", "num_hidden_layers"), hidden=hidden,
                heads=config.need("n_head", "num_attention_heads"), vocab=config.need("vocab_size"),
                ffn_hidden=config.integer("n_inner", 4 * hidden), mlp="gelu", norm="layernorm", bias=True,
                learned_positions=family.kind == "gpt2",
                tied_embeddings=config.flag("tie_word_embeddings", family.tied))


def _neox(config: Config, family: Family) -> dict:
    return dict(layers=config.need("num_hidden_layers"), hidden=config.need("hidden_size"),
                heads=config.need("num_attention_heads"), vocab=config.need("vocab_size"),
                ffn_hidden=config.need("intermediate_size"), mlp="gelu", norm="layernorm", bias=True,
                learned_positions=False, tied_embeddings=config.flag("tie_word_embeddings", family.tied))


def _falcon(config: Config, family: Family) -> dict:
    """Falcon: multi-query attention (7B), grouped KV heads (``new_decoder_architecture``: 40B, 180B)."""
    hidden = config.need("hidden_size")
    heads = config.need("num_attention_heads", "n_head")
    if config.flag("new_decoder_architecture", config.text("model_type") == "RefinedWeb"):
        kv_heads = config.need("num_kv_heads", "n_head_kv")
    else:
        kv_heads = 1 if config.flag("multi_query", True) else heads
    return dict(layers=config.need("num_hidden_layers", "n_layer"), hidden=hidden, heads=heads, kv_heads=kv_heads,
                vocab=config.need("vocab_size"), ffn_hidden=config.integer("ffn_hidden_size", 4 * hidden),
                mlp="gelu", norm="layernorm", bias=config.flag("bias", False), learned_positions=False,
                tied_embeddings=config.flag("tie_word_embeddings", family.tied))


READERS = {"decoder": _decoder, "gpt2": _gpt2, "gptj": _gpt2, "neox": _neox, "falcon": _falcon}


def _context(config: Config, family: Family) -> dict:
    """The longest context the config allows, the one it trains at by default, and where that came from."""
    if family.kind == "falcon" and not config.has("max_position_embeddings"):
        longest, stated = FALCON_CONTEXT, f"the config states none: Falcon's default {FALCON_CONTEXT:,}"
    else:
        names = ("max_position_embeddings", "n_positions", "n_ctx")
        longest = config.need(*names)
        stated = f"config {next(name for name in names if config.has(name))} {longest:,}"
    pretrained = Config(config.table("rope_scaling"), config.source, config.prefix + "rope_scaling.").integer(
        "original_max_position_embeddings") or config.integer("original_max_position_embeddings")
    if pretrained and pretrained < longest:
        stated += f", extended from {pretrained:,} by RoPE scaling"
    else:
        pretrained = longest
    seq_len = min(pretrained, DEFAULT_TRAINING_CONTEXT)
    capped = " (capped at the default 8,192)" if seq_len < pretrained else ""
    return dict(seq_len=seq_len, max_context=longest,
                seq_len_note=f"the pre-training context{capped}; {stated}")


def config_keys() -> dict[str, tuple[str, ...]]:
    """The keys each kind of family reads (docs/models.md is checked against it)."""
    common = ("hidden_size", "num_hidden_layers", "num_attention_heads", "vocab_size", "max_position_embeddings",
              "tie_word_embeddings")
    return {
        "decoder": (*common, "num_key_value_heads", "head_dim", "intermediate_size", "hidden_act",
                    "hidden_activation", "attention_bias", "mlp_bias", "rope_scaling", "num_local_experts",
                    "num_experts", "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size",
                    "shared_expert_intermediate_size", "n_shared_experts", "first_k_dense_replace",
                    "moe_layer_freq", "decoder_sparse_step", "mlp_only_layers", "n_group", "topk_group", "q_lora_rank",
                    "kv_lora_rank",
                    "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim", "sliding_window", "use_sliding_window",
                    "layer_types", "sliding_window_pattern", "max_window_layers", "text_config"),
        "falcon": (*common, "n_layer", "n_head", "multi_query", "new_decoder_architecture", "num_kv_heads",
                   "n_head_kv", "ffn_hidden_size", "bias", "parallel_attn"),
        "neox": (*common, "intermediate_size", "use_parallel_residual"),
        "gpt2": ("n_embd", "n_layer", "n_head", "n_inner", "n_positions", "n_ctx", "vocab_size",
                 "tie_word_embeddings"),
    }
