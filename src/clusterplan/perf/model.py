"""Decoder-only transformers: shapes, parameter counts and FLOPs per token (docs/training.md, docs/models.md).

A model is its shapes; everything else (parameters, FLOPs, activation sizes)
is derived from them. Presets are the published architectures (perf/presets.py);
a Hugging Face ``config.json`` reads into the same dataclass (perf/hf.py).

Parameter count of one layer (h hidden, q = heads x head_dim, k and v the key and value widths,
o = heads x v_head_dim, f ffn):

    attention   h q + h (k + v) + o h    (query, key and value, output projections); multi-head latent
                attention (DeepSeek) projects through its low-rank q and kv latents instead
    MLP         2 h f (plain) or 3 h f (gated: SwiGLU, GeGLU), times the experts of a MoE layer, plus its
                shared experts and router; dense layers of a MoE model use their own width
    norms       2 h (RMSNorm) or 4 h (LayerNorm, with bias)
    biases      GPT-style models add q + k + v + h (attention) and f + h (MLP)

FLOPs per token (matmuls only; 2 per multiply-add): forward
2 x (matmul weights, active experts only) + 2 x s' x heads x (head_dim + v_head_dim) per layer for the
attention scores and values (non-causal, as Megatron counts them; s' the keys a query attends: the
sequence, or the window of a sliding-window layer) + 2 h V for the logits. Training is three forward
passes (backward = 2 x forward).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from clusterplan.errors import ConfigError
from clusterplan.schema import FROZEN, check

GATED = ("swiglu", "geglu")       # three matrices: gate, up, down
MLPS = ("gelu", *GATED)


@dataclass(**FROZEN)
class Transformer:
    name: str
    layers: int
    hidden: int
    heads: int
    ffn_hidden: int                  # the MLP width (of one routed expert in a MoE model)
    vocab: int
    seq_len: int                     # the context it trains at (docs/models.md: the default and its note)
    kv_heads: int = 0                # 0 = multi-head attention (kv_heads = heads)
    head_dim: int = 0                # 0 = hidden / heads
    mlp: str = "gelu"                # "gelu" (2 matrices), "swiglu" or "geglu" (gated: 3 matrices)
    norm: str = "layernorm"          # "layernorm" (weight and bias) or "rmsnorm"
    bias: bool = True                # linear layers carry biases (GPT) or not (Llama)
    tied_embeddings: bool = True
    learned_positions: bool = True   # GPT's position-embedding table (Llama uses RoPE: no weights)
    experts: int = 1                 # MoE: routed experts per MoE layer (1 = dense)
    experts_per_token: int = 1
    shared_ffn_hidden: int = 0       # MoE: the width of the shared expert(s) every token passes through
    dense_layers: int = 0            # MoE: layers with a dense MLP instead of experts
    dense_ffn_hidden: int = 0        # their MLP width (0 = ffn_hidden)
    expert_groups: int = 0           # MoE group-limited routing: groups of experts (0 = none) ...
    expert_groups_per_token: int = 0  # ... and how many of them one token's experts come from
    q_lora_rank: int = 0             # multi-head latent attention (DeepSeek-V2/V3): 0 = none, or q unprojected
    kv_lora_rank: int = 0            # MLA: the compressed key-value latent (0 = not MLA)
    rope_head_dim: int = 0           # MLA: the decoupled RoPE part of head_dim, shared by all heads
    v_head_dim: int = 0              # 0 = head_dim
    sliding_window: int = 0          # tokens a sliding-window layer attends (0 = none)
    sliding_layers: int = 0          # layers that use the window (the rest attend the whole sequence)
    max_context: int = 0             # the longest context the config allows (0 = seq_len)
    seq_len_note: str = ""           # where seq_len came from
    source: str = ""

    def __post_init__(self) -> None:
        for name in ("layers", "hidden", "heads", "ffn_hidden", "vocab", "seq_len", "experts", "experts_per_token"):
            check(getattr(self, name) >= 1, name, f"must be >= 1, got {getattr(self, name)}")
        check(self.head_dim > 0 or self.hidden % self.heads == 0, "heads",
              f"{self.heads} heads do not divide hidden size {self.hidden}: give head_dim")
        check(self.kv_heads >= 0 and (self.kv_heads == 0 or self.heads % self.kv_heads == 0), "kv_heads",
              f"must divide the {self.heads} attention heads, got {self.kv_heads}")
        check(self.mlp in MLPS, "mlp", f"must be one of {', '.join(MLPS)}, got {self.mlp!r}")
        check(self.norm in ("layernorm", "rmsnorm"), "norm", f"must be 'layernorm' or 'rmsnorm', got {self.norm!r}")
        check(self.experts_per_token <= self.experts, "experts_per_token",
              f"must be <= experts ({self.experts}), got {self.experts_per_token}")
        check(0 <= self.dense_layers <= self.layers, "dense_layers",
              f"must be 0 .. layers ({self.layers}), got {self.dense_layers}")
        check(0 <= self.sliding_layers <= self.layers, "sliding_layers",
              f"must be 0 .. layers ({self.layers}), got {self.sliding_layers}")
        check(self.rope_head_dim < self.attention_head_dim or not self.kv_lora_rank, "rope_head_dim",
              f"must be below head_dim ({self.attention_head_dim}), got {self.rope_head_dim}")

    # Shapes ---------------------------------------------------------------------------------

    @property
    def attention_head_dim(self) -> int:
        """Query and key width of one head (MLA: its no-RoPE and RoPE parts together)."""
        return self.head_dim or self.hidden // self.heads

    @property
    def value_head_dim(self) -> int:
        return self.v_head_dim or self.attention_head_dim

    @property
    def query_groups(self) -> int:
        return self.kv_heads or self.heads

    @property
    def q_dim(self) -> int:
        return self.heads * self.attention_head_dim

    @property
    def o_dim(self) -> int:
        """Width of the attention output (heads x value head dim), the output projection's input."""
        return self.heads * self.value_head_dim

    @property
    def k_dim(self) -> int:
        """Key width one token carries into attention (MLA: the decompressed keys of every head)."""
        return (self.heads if self.kv_lora_rank else self.query_groups) * self.attention_head_dim

    @property
    def v_dim(self) -> int:
        return (self.heads if self.kv_lora_rank else self.query_groups) * self.value_head_dim

    @property
    def kv_dim(self) -> int:
        """Mean of the key and value widths: 2 x kv_dim values per token are K and V."""
        return (self.k_dim + self.v_dim) // 2

    @property
    def kv_cache_width(self) -> int:
        """Values per token and layer that a KV cache keeps: K and V, or MLA's latent and RoPE key."""
        return self.kv_lora_rank + self.rope_head_dim if self.kv_lora_rank else self.k_dim + self.v_dim

    @property
    def gated(self) -> bool:
        return self.mlp in GATED

    @property
    def mlp_matrices(self) -> int:
        return 3 if self.gated else 2

    @property
    def moe_layers(self) -> int:
        return self.layers - self.dense_layers if self.experts > 1 else 0

    @property
    def dense_width(self) -> int:
        return self.dense_ffn_hidden or self.ffn_hidden

    @property
    def routed_ffn(self) -> float:
        """The routed experts' MLP width one token passes through, averaged over the layers (0 for a dense model)."""
        return self.experts_per_token * self.ffn_hidden * self.moe_layers / self.layers

    @property
    def active_ffn(self) -> float:
        """MLP width one token passes through, averaged over the layers (active experts and shared ones)."""
        shared = self.moe_layers * self.shared_ffn_hidden
        return self.routed_ffn + (shared + (self.layers - self.moe_layers) * self.dense_width) / self.layers

    def attended(self, seq_len: int) -> float:
        """Keys one query attends, averaged over the layers: the sequence, or a sliding layer's window."""
        window = min(seq_len, self.sliding_window) if self.sliding_window else seq_len
        return (self.sliding_layers * window + (self.layers - self.sliding_layers) * seq_len) / self.layers

    # Parameters -----------------------------------------------------------------------------

    @property
    def attention_matmul_params(self) -> int:
        h, heads, qk, rope = self.hidden, self.heads, self.attention_head_dim, self.rope_head_dim
        if not self.kv_lora_rank:
            return h * (self.q_dim + self.k_dim + self.v_dim) + self.o_dim * h
        q = h * self.q_lora_rank + self.q_lora_rank * self.q_dim if self.q_lora_rank else h * self.q_dim
        kv = h * (self.kv_lora_rank + rope) + self.kv_lora_rank * heads * (qk - rope + self.value_head_dim)
        return q + kv + self.o_dim * h

    @property
    def attention_params(self) -> int:
        biases = self.q_dim + self.k_dim + self.v_dim + self.hidden if self.bias else 0
        latent_norms = self.q_lora_rank + self.kv_lora_rank          # MLA normalises its latents
        return self.attention_matmul_params + biases + latent_norms

    def mlp_params(self, width: int) -> int:
        """One MLP (one expert) of ``width``."""
        h = self.hidden
        return self.mlp_matrices * h * width + (width * (self.mlp_matrices - 1) + h if self.bias else 0)

    @property
    def expert_params(self) -> int:
        """One routed expert's MLP."""
        return self.mlp_params(self.ffn_hidden)

    @property
    def moe_mlp_params(self) -> int:
        shared = self.mlp_params(self.shared_ffn_hidden) if self.shared_ffn_hidden else 0
        return self.experts * self.expert_params + shared + self.hidden * self.experts

    @property
    def norm_params(self) -> int:
        return 2 * self.hidden if self.norm == "layernorm" else self.hidden

    @property
    def layers_params(self) -> int:
        """Every transformer layer together."""
        dense = self.layers - self.moe_layers
        return (self.layers * (self.attention_params + 2 * self.norm_params)
                + dense * self.mlp_params(self.dense_width) + self.moe_layers * self.moe_mlp_params)

    @property
    def layer_params(self) -> float:
        """One layer's parameters, averaged over dense and MoE layers."""
        return self.layers_params / self.layers

    @property
    def embedding_params(self) -> int:
        """Input embedding (and learned positions); the output layer shares it when tied."""
        return self.vocab * self.hidden + (self.max_context_length * self.hidden if self.learned_positions else 0)

    @property
    def max_context_length(self) -> int:
        return self.max_context or self.seq_len

    @property
    def output_params(self) -> int:
        return 0 if self.tied_embeddings else self.vocab * self.hidden

    @property
    def params(self) -> int:
        return self.layers_params + self.embedding_params + self.output_params + self.norm_params

    @property
    def active_params(self) -> int:
        """Parameters one token uses: all but the routed experts it is not sent to (embeddings included)."""
        idle = self.moe_layers * (self.experts - self.experts_per_token) * self.expert_params
        return self.params - idle

    @property
    def active_layer_matmul_params(self) -> float:
        """Weights one token multiplies through in a layer, averaged over the layers (active experts only,
        no biases or norms)."""
        router = self.hidden * self.experts * self.moe_layers / self.layers
        return self.attention_matmul_params + self.mlp_matrices * self.hidden * self.active_ffn + router

    # FLOPs ----------------------------------------------------------------------------------

    def attention_flops_per_token(self, seq_len: int, *, causal: bool = False) -> float:
        """Forward FLOPs of one layer's scores (q.k) and weighted values per token, averaged over layers."""
        per_key = 2 * self.heads * (self.attention_head_dim + self.value_head_dim)
        return per_key * self.attended(seq_len) * (0.5 if causal else 1.0)

    def forward_flops_per_token(self, seq_len: int, *, causal: bool = False) -> float:
        """Forward matmul FLOPs per token: layers, attention scores and values, logits."""
        return (self.layers * (2 * self.active_layer_matmul_params
                               + self.attention_flops_per_token(seq_len, causal=causal))
                + 2 * self.hidden * self.vocab)

    def model_flops_per_token(self, seq_len: int) -> float:
        """Training FLOPs per token that MFU counts: 3 x forward, no recomputation (6N + 12 L h s)."""
        return 3 * self.forward_flops_per_token(seq_len)

    def causal_flops_per_token(self, seq_len: int) -> float:
        """Training FLOPs per token as published MFU figures count them: 6N plus the causal half of the attention
        scores and values (6N + 6 L h s; docs/training.md, FLOP and MFU convention)."""
        return 3 * self.forward_flops_per_token(seq_len, causal=True)


def with_seq_len(model: Transformer, seq_len: int, note: str = "set by --seq-len (workload.seq_len)") -> Transformer:
    """``model`` trained at ``seq_len`` tokens (0 keeps its own); a learned position table grows to cover it."""
    if not seq_len or seq_len == model.seq_len:
        return model
    return replace(model, seq_len=seq_len, seq_len_note=note, max_context=max(seq_len, model.max_context_length))
