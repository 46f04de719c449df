"""Decoder-only transformers: shapes, parameter counts and FLOPs per token (docs/training.md).

A model is its shapes; everything else (parameters, FLOPs, activation sizes)
is derived from them. Presets are the published architectures; a local
Hugging Face ``config.json`` (Llama, Mistral, Mixtral, GPT-2 style keys) reads
into the same dataclass.

Parameter count of one layer (h hidden, g = kv_heads x head_dim, f ffn):

    attention   2 h^2 + 2 h g            (q and output projections; k and v)
    MLP         2 h f (GELU)  or 3 h f (SwiGLU), times the number of experts
    norms       2 h (RMSNorm) or 4 h (LayerNorm, with bias)
    biases      GPT-style models add h + 2 g + h (attention) and f + h (MLP)

FLOPs per token (matmuls only; 2 per multiply-add): forward
2 x (matmul weights, active experts only) + 4 x s x h_attn per layer for the
attention scores and values (non-causal, as Megatron counts them) + 2 h V for
the logits. Training is three forward passes (backward = 2 x forward).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace

from clusterplan.errors import ConfigError
from clusterplan.schema import FROZEN, check, suggest


@dataclass(**FROZEN)
class Transformer:
    name: str
    layers: int
    hidden: int
    heads: int
    ffn_hidden: int
    vocab: int
    seq_len: int                     # the training context length it was published with
    kv_heads: int = 0                # 0 = multi-head attention (kv_heads = heads)
    mlp: str = "gelu"                # "gelu" (2 matrices) or "swiglu" (3 matrices)
    norm: str = "layernorm"          # "layernorm" (weight and bias) or "rmsnorm"
    bias: bool = True                # linear layers carry biases (GPT) or not (Llama)
    tied_embeddings: bool = True
    learned_positions: bool = True   # GPT's position-embedding table (Llama uses RoPE: no weights)
    experts: int = 1                 # MoE: experts per MLP (1 = dense)
    experts_per_token: int = 1
    source: str = ""

    def __post_init__(self) -> None:
        for name in ("layers", "hidden", "heads", "ffn_hidden", "vocab", "seq_len", "experts", "experts_per_token"):
            check(getattr(self, name) >= 1, name, f"must be >= 1, got {getattr(self, name)}")
        check(self.hidden % self.heads == 0, "heads", f"{self.heads} heads do not divide hidden size {self.hidden}")
        check(self.kv_heads >= 0 and (self.kv_heads == 0 or self.heads % self.kv_heads == 0), "kv_heads",
              f"must divide the {self.heads} attention heads, got {self.kv_heads}")
        check(self.mlp in ("gelu", "swiglu"), "mlp", f"must be 'gelu' or 'swiglu', got {self.mlp!r}")
        check(self.norm in ("layernorm", "rmsnorm"), "norm", f"must be 'layernorm' or 'rmsnorm', got {self.norm!r}")
        check(self.experts_per_token <= self.experts, "experts_per_token",
              f"must be <= experts ({self.experts}), got {self.experts_per_token}")

    # Shapes ---------------------------------------------------------------------------------

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads

    @property
    def query_groups(self) -> int:
        return self.kv_heads or self.heads

    @property
    def kv_dim(self) -> int:
        return self.query_groups * self.head_dim

    @property
    def mlp_matrices(self) -> int:
        return 3 if self.mlp == "swiglu" else 2

    # Parameters -----------------------------------------------------------------------------

    @property
    def attention_params(self) -> int:
        h, g = self.hidden, self.kv_dim
        return 2 * h * h + 2 * h * g + (2 * h + 2 * g if self.bias else 0)

    @property
    def expert_params(self) -> int:
        """One expert's MLP."""
        f, h = self.ffn_hidden, self.hidden
        return self.mlp_matrices * h * f + (f * (self.mlp_matrices - 1) + h if self.bias else 0)

    @property
    def norm_params(self) -> int:
        return 2 * self.hidden if self.norm == "layernorm" else self.hidden

    @property
    def layer_params(self) -> int:
        router = self.hidden * self.experts if self.experts > 1 else 0
        return self.attention_params + self.experts * self.expert_params + router + 2 * self.norm_params

    @property
    def embedding_params(self) -> int:
        """Input embedding (and learned positions); the output layer shares it when tied."""
        return self.vocab * self.hidden + (self.seq_len * self.hidden if self.learned_positions else 0)

    @property
    def output_params(self) -> int:
        return 0 if self.tied_embeddings else self.vocab * self.hidden

    @property
    def params(self) -> int:
        return (self.layers * self.layer_params + self.embedding_params + self.output_params
                + self.norm_params)

    @property
    def active_layer_matmul_params(self) -> int:
        """Weights one token multiplies through in a layer (active experts only, no biases or norms)."""
        h, g, f = self.hidden, self.kv_dim, self.ffn_hidden
        return 2 * h * h + 2 * h * g + self.experts_per_token * self.mlp_matrices * h * f

    # FLOPs ----------------------------------------------------------------------------------

    def forward_flops_per_token(self, seq_len: int, *, causal: bool = False) -> float:
        """Forward matmul FLOPs per token: layers, attention scores and values, logits."""
        attention = 4 * seq_len * self.hidden * (0.5 if causal else 1.0)
        return (self.layers * (2 * self.active_layer_matmul_params + attention)
                + 2 * self.hidden * self.vocab)

    def model_flops_per_token(self, seq_len: int) -> float:
        """Training FLOPs per token that MFU counts: 3 x forward, no recomputation (6N + 12 L h s)."""
        return 3 * self.forward_flops_per_token(seq_len)


# Presets --------------------------------------------------------------------------------------

_SC21 = "Narayanan et al. SC21 (arXiv 2104.04473) Table 1"
_GPT = dict(vocab=51200, seq_len=2048, source=_SC21)
_LLAMA = dict(mlp="swiglu", norm="rmsnorm", bias=False, tied_embeddings=False, learned_positions=False)
_LLAMA2 = dict(_LLAMA, vocab=32000, seq_len=4096, source="Touvron et al. 2023, Llama 2 (arXiv 2307.09288) Table 1; "
               "meta-llama/Llama-2-*-hf config.json")
_LLAMA3 = dict(_LLAMA, vocab=128256, seq_len=8192, kv_heads=8,
               source="Llama Team 2024, The Llama 3 Herd of Models (arXiv 2407.21783) Table 3; "
                      "meta-llama/Meta-Llama-3.1-*/config.json")


def _gpt(name: str, layers: int, hidden: int, heads: int) -> Transformer:
    return Transformer(name=name, layers=layers, hidden=hidden, heads=heads, ffn_hidden=4 * hidden, **_GPT)


PRESETS: dict[str, Transformer] = {m.name: m for m in (
    _gpt("gpt-1.7b", 24, 2304, 24), _gpt("gpt-3.6b", 30, 3072, 32), _gpt("gpt-7.5b", 36, 4096, 32),
    _gpt("gpt-18b", 40, 6144, 48), _gpt("gpt-39b", 48, 8192, 64), _gpt("gpt-76b", 60, 10240, 80),
    _gpt("gpt-145b", 80, 12288, 96), _gpt("gpt-310b", 96, 16384, 128), _gpt("gpt-530b", 105, 20480, 128),
    _gpt("gpt-1t", 128, 25600, 160),
    Transformer(name="gpt3-175b", layers=96, hidden=12288, heads=96, ffn_hidden=4 * 12288, vocab=50257,
                seq_len=2048, source="Brown et al. 2020, GPT-3 (arXiv 2005.14165) Table 2.1"),
    Transformer(name="llama2-7b", layers=32, hidden=4096, heads=32, ffn_hidden=11008, **_LLAMA2),
    Transformer(name="llama2-13b", layers=40, hidden=5120, heads=40, ffn_hidden=13824, **_LLAMA2),
    Transformer(name="llama2-70b", layers=80, hidden=8192, heads=64, ffn_hidden=28672,
                **dict(_LLAMA2, kv_heads=8)),
    Transformer(name="llama3-8b", layers=32, hidden=4096, heads=32, ffn_hidden=14336, **_LLAMA3),
    Transformer(name="llama3-70b", layers=80, hidden=8192, heads=64, ffn_hidden=28672, **_LLAMA3),
    Transformer(name="llama3.1-8b", layers=32, hidden=4096, heads=32, ffn_hidden=14336, **_LLAMA3),
    Transformer(name="llama3.1-70b", layers=80, hidden=8192, heads=64, ffn_hidden=28672, **_LLAMA3),
    Transformer(name="llama3.1-405b", layers=126, hidden=16384, heads=128, ffn_hidden=53248, **_LLAMA3),
)}
ALIASES = {"gpt3": "gpt3-175b", "gpt-175b": "gpt3-175b", "llama3-405b": "llama3.1-405b"}


def preset(name: str) -> Transformer:
    """A published model by name (``clusterplan train --model``)."""
    key = ALIASES.get(name.lower(), name.lower())
    if key not in PRESETS:
        raise ConfigError(f"unknown model {name!r}{suggest(name, PRESETS)}; known: {', '.join(PRESETS)}",
                          key="workload.model")
    return PRESETS[key]


# Hugging Face config.json ---------------------------------------------------------------------

# Our field <- the first key present, per family (GPT-2 names, then Llama/Mistral names).
_HF_KEYS = {
    "layers": ("num_hidden_layers", "n_layer"),
    "hidden": ("hidden_size", "n_embd"),
    "heads": ("num_attention_heads", "n_head"),
    "vocab": ("vocab_size",),
    "seq_len": ("max_position_embeddings", "n_positions", "n_ctx"),
}


LARGEST_SHAPE = 2**31   # past any model's layers, width, heads, vocabulary or context, and safe in int64 FLOP counts


def from_hf_config(text: str, *, source: str = "config.json") -> Transformer:
    """A model from the text of a Hugging Face ``config.json``; missing or malformed keys are errors naming them."""
    config = _json_object(text, source)

    def integer(key: str, default: int | None = None) -> int | None:
        """``config[key]`` as a whole number in 1 .. 2**31 (``default`` where it is absent or null)."""
        value = config.get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= LARGEST_SHAPE:
            raise ConfigError(f"must be a whole number from 1 to {LARGEST_SHAPE:,}, got {value!r}", key=key,
                              source=source)
        return value

    def need(field: str) -> int:
        for key in _HF_KEYS[field]:
            if config.get(key) is not None:
                return integer(key)
        raise ConfigError(f"missing key (one of {', '.join(_HF_KEYS[field])})", key=_HF_KEYS[field][0],
                          source=source)

    shapes = {field: need(field) for field in _HF_KEYS}
    model_type = str(config.get("model_type", "")).lower()
    if model_type == "gpt2" or "n_embd" in config:
        ffn = integer("n_inner", 4 * shapes["hidden"])
        extra = dict(mlp="gelu", norm="layernorm", bias=True, learned_positions=True,
                     tied_embeddings=bool(config.get("tie_word_embeddings", True)))
    else:
        ffn = integer("intermediate_size")
        if ffn is None:
            raise ConfigError("missing key", key="intermediate_size", source=source)
        act = str(config.get("hidden_act", "silu")).lower()
        extra = dict(mlp="swiglu" if act in ("silu", "swish", "swiglu") else "gelu", norm="rmsnorm",
                     bias=bool(config.get("attention_bias", False) or config.get("mlp_bias", False)),
                     learned_positions=False, tied_embeddings=bool(config.get("tie_word_embeddings", False)),
                     kv_heads=integer("num_key_value_heads", 0), experts=integer("num_local_experts", 1),
                     experts_per_token=integer("num_experts_per_tok", 1))
    try:
        return Transformer(name=_model_name(config, model_type), ffn_hidden=ffn, source=source, **shapes, **extra)
    except ConfigError as error:
        raise ConfigError(error.message, key=error.key, source=source) from None


def _json_object(text: str, source: str) -> dict:
    try:
        config = json.loads(text)
    except json.JSONDecodeError as error:
        raise ConfigError(f"not valid JSON: {error.msg}", source=source, line=error.lineno) from None
    except RecursionError:
        raise ConfigError("not valid JSON: nested too deeply", source=source) from None
    if not isinstance(config, dict):
        raise ConfigError("expected a JSON object", source=source)
    return config


def _model_name(config: dict, model_type: str) -> str:
    """``_name_or_path``, else the first of ``architectures``, else the model type."""
    named = config.get("_name_or_path")
    if isinstance(named, str) and named:
        return named
    architectures = config.get("architectures")
    if isinstance(architectures, list) and architectures and isinstance(architectures[0], str):
        return architectures[0]
    return model_type or "model"


def with_seq_len(model: Transformer, seq_len: int) -> Transformer:
    return model if not seq_len or seq_len == model.seq_len else replace(model, seq_len=seq_len)
