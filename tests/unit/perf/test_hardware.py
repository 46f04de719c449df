import pytest

from clusterplan.errors import ConfigError
from clusterplan.perf.hardware import Options


def test_options_name_every_offending_value():
    """One error lists each bad option with its value."""
    with pytest.raises(ConfigError) as error:
        Options(seq_len=0, global_batch=8, precision="fp4", attention="flash9", sparsity_speedup=0.5)
    for phrase in ("seq_len(0)", "precision('fp4')", "attention('flash9')", "sparsity_speedup(0.5)"):
        assert phrase in str(error.value)


def test_the_reference_cluster_as_the_step_model_sees_it(hw):
    """The H100 node: BF16 peak, 80 GB of HBM, 8 GPUs a node."""
    assert hw.peak_flops > 9e14 and hw.hbm_bytes == pytest.approx(80e9, rel=0.1)
    assert hw.system.gpus_per_node == 8 and hw.fp8_flops >= hw.peak_flops
