"""The scenario TOML writer: what it writes loads back as the same Spec."""

import pytest

from clusterplan.schema import as_table
from clusterplan.serve.toml import dumps, value
from clusterplan.spec import load_spec


@pytest.mark.parametrize("overrides", [[], ['workload.model="llama2-13b"', 'workload.tokens="2T"',
                                            "prices.h100-sxm=30000", "reliability.failure_rates={gpu=0.3}",
                                            'about.name="a \\"quoted\\" name"', "cloud.offers=[]"]])
def test_round_trip(tmp_path, overrides):
    """dumps(as_table(spec)) read back by load_spec is the same Spec, header comments and all."""
    spec = load_spec(None, overrides)
    path = tmp_path / "s.toml"
    path.write_text(dumps(as_table(spec), header="made by a test\n  --set x=1"))
    assert load_spec(path) == spec


def test_values():
    """Booleans, floats, keys that need quotes, and infinities are written as TOML spells them."""
    assert value(True) == "true" and value(0.1) == "0.1" and value(float("inf")) == "inf"
    assert value({"h100-sxm": 1, "a.b": 2}) == '{h100-sxm = 1, "a.b" = 2}'
    with pytest.raises(TypeError):
        value(object())
