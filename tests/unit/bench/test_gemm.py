"""GEMM shapes come from the training model's presets: the benchmark multiplies what the model counts."""

from dataclasses import replace

from clusterplan.bench.gemm import MODELS, TRANSFORMER_SHAPES, transformer_shapes
from clusterplan.perf.presets import PRESETS


def test_the_shapes_are_the_llama3_presets_projections():
    """QKV n = h + 2 kv_dim, up n = 2 ffn (SwiGLU), down k = ffn, for llama3-8b and -70b at 4096 and 8192 tokens."""
    assert [model.name for model in MODELS] == ["llama3-8b", "llama3-70b"]
    assert MODELS[0] is PRESETS["llama3-8b"]
    shapes = {s.name: (s.m, s.n, s.k) for s in TRANSFORMER_SHAPES}
    assert shapes["llama3-8b-qkv-t4096"] == (4096, 4096 + 2 * 8 * 128, 4096)
    assert shapes["llama3-8b-mlp-up-t8192"] == (8192, 2 * 14336, 4096)
    assert shapes["llama3-70b-mlp-down-t4096"] == (4096, 8192, 28672)
    assert list(shapes)[:3] == ["llama3-8b-qkv-t4096", "llama3-8b-mlp-up-t4096", "llama3-8b-mlp-down-t4096"]


def test_a_gelu_model_has_one_up_projection():
    """GPT-style MLP (two matrices): the up projection is ffn wide, not 2 ffn; multi-head attention QKV is 3 h."""
    qkv, up, down = transformer_shapes([replace(PRESETS["gpt-1.7b"], name="g")], tokens=[8])
    assert (qkv.name, qkv.n, up.name, up.n, down.k) == ("g-qkv-t8", 3 * 2304, "g-mlp-up-t8", 4 * 2304, 4 * 2304)
