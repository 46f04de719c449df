"""Published models by name (``clusterplan train --model``).

The models whose Hugging Face ``config.json`` ships in ``perf/hf_configs`` (with its source and published
parameter count in SOURCES.toml) are read from that file, so a preset and its config cannot disagree;
the Megatron GPT sizes, GPT-3 and Llama 2/3 keep their shapes from the papers cited beside them.
"""

from __future__ import annotations

import textwrap

from importlib import resources

from clusterplan.errors import ConfigError
from clusterplan.perf.hf import from_hf_config
from clusterplan.perf.model import Transformer
from clusterplan.schema import suggest

_SC21 = "Narayanan et al. SC21 (arXiv 2104.04473) Table 1"
_GPT = dict(vocab=51200, seq_len=2048, source=_SC21)
_LLAMA = dict(mlp="swiglu", norm="rmsnorm", bias=False, tied_embeddings=False, learned_positions=False)
_LLAMA2 = dict(_LLAMA, vocab=32000, seq_len=4096, source="Touvron et al. 2023, Llama 2 (arXiv 2307.09288) Table 1; "
               "meta-llama/Llama-2-*-hf config.json")
_LLAMA3 = dict(_LLAMA, vocab=128256, seq_len=8192, kv_heads=8,
               source="Llama Team 2024, The Llama 3 Herd of Models (arXiv 2407.21783) Table 3; "
                      "meta-llama/Meta-Llama-3.1-*/config.json")
CONFIGS = resources.files("clusterplan.perf") / "hf_configs"
# Presets read from the shipped config.json files (name -> file stem); SOURCES.toml cites each.
FROM_CONFIGS = ("llama3.1-8b", "llama3.1-70b", "llama3.2-1b", "llama3.2-3b", "mistral-7b", "mixtral-8x7b",
                "qwen2.5-7b", "qwen2.5-32b", "qwen3-32b", "qwen3-30b-a3b", "qwen3-235b-a22b", "qwen1.5-moe-a2.7b",
                "gemma-2b", "gemma2-9b", "gemma2-27b", "gemma3-1b", "phi-3.5-mini", "phi-4-mini", "olmo2-7b",
                "olmo2-13b", "olmo-1b", "gpt-j-6b", "redpajama-3b", "falcon-7b", "deepseek-v2-lite", "deepseek-v3")


def _gpt(name: str, layers: int, hidden: int, heads: int) -> Transformer:
    return Transformer(name=name, layers=layers, hidden=hidden, heads=heads, ffn_hidden=4 * hidden, **_GPT)


def from_config_file(stem: str) -> Transformer:
    """The shipped ``hf_configs/<stem>.json``, named ``stem``."""
    text = (CONFIGS / f"{stem}.json").read_text(encoding="utf-8")
    return from_hf_config(text, source=f"hf_configs/{stem}.json (SOURCES.toml)", name=stem)


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
    Transformer(name="llama3.1-405b", layers=126, hidden=16384, heads=128, ffn_hidden=53248, **_LLAMA3),
    *(from_config_file(stem) for stem in FROM_CONFIGS),
)}
ALIASES = {"gpt3": "gpt3-175b", "gpt-175b": "gpt3-175b", "llama3-405b": "llama3.1-405b"}


def preset(name: str) -> Transformer:
    """A published model by name (``clusterplan train --model``)."""
    key = ALIASES.get(name.lower(), name.lower())
    if key not in PRESETS:
        known = textwrap.fill(", ".join(PRESETS), width=72, initial_indent="  ", subsequent_indent="  ",
                              break_on_hyphens=False)
        raise ConfigError(f"unknown model {name!r}{suggest(name, PRESETS)}; known models:\n{known}",
                          key="workload.model")
    return PRESETS[key]
