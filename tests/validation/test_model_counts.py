"""Real config.json files read within 1 % of their published parameter counts (perf/hf_configs/SOURCES.toml)."""

import json
import tomllib

import pytest

from clusterplan.perf.presets import CONFIGS, from_config_file

SOURCES = tomllib.loads((CONFIGS / "SOURCES.toml").read_text(encoding="utf-8"))
FAMILIES = {"llama", "mistral", "mixtral", "qwen2", "qwen3", "qwen2_moe", "qwen3_moe", "gemma", "gemma2",
            "gemma3_text", "phi3", "olmo", "olmo2", "gpt_neox", "gptj", "gpt2", "falcon", "deepseek_v2", "deepseek_v3"}


def test_at_least_15_real_configs_across_the_families_each_cited():
    """>= 15 models, every family of issue 22, each with its source and citation."""
    assert len(SOURCES) >= 15
    types = {json.loads((CONFIGS / f"{stem}.json").read_text())["model_type"] for stem in SOURCES}
    assert FAMILIES <= types
    for stem, source in SOURCES.items():
        assert source["model"] and source["copy"] in ("mlc", "llmprof", "copied") and source["citation"], stem


@pytest.mark.parametrize("stem", SOURCES)
def test_parameter_count_matches_the_published_figure(stem):
    """Total parameters within 1 % (or the publisher's rounding); active parameters too for MoE models."""
    source, model = SOURCES[stem], from_config_file(stem)
    for count, read in (("total", model.params), ("active", model.active_params)):
        published = source.get(f"published_{count}")
        if published is not None:
            tolerance = max(0.01, source.get(f"{count}_rounded_to", 0) / published)
            assert read == pytest.approx(published, rel=tolerance), f"{stem} {count}"
    if model.experts > 1 and stem != "deepseek-v2-lite":     # its card's active count is unusable (SOURCES notes)
        assert "published_active" in source
