"""Software era: an older stack's documented switches, applied over the options."""

import pytest

from clusterplan.perf.hardware import Options
from clusterplan.perf.software import with_software


def test_current_software_leaves_the_options():
    """"current" is the defaults: nothing changes."""
    options = Options(seq_len=2048, global_batch=8)
    assert with_software(options, "current") == options


def test_megatron_2021_is_what_the_sc21_validation_runs_with():
    """megatron-2021 sets the switches benchmarks/validate_training.py gives SC21's runs: unfused attention, no
    sequence parallelism, no TP or gradient-reduction overlap."""
    old = with_software(Options(seq_len=2048, global_batch=8), "megatron-2021")
    assert (old.attention, old.sequence_parallel, old.tp_overlap, old.overlap_grad_reduce) == (
        "unfused", False, False, False)


def test_deepspeed_2023_runs_flash_attention_1_without_overlap():
    """deepspeed-2023: FlashAttention 1, no sequence parallelism, ZeRO's overlap_comm at its default (off)."""
    old = with_software(Options(seq_len=2048, global_batch=8), "deepspeed-2023")
    assert (old.attention, old.sequence_parallel, old.tp_overlap, old.overlap_grad_reduce) == (
        "flash1", False, False, False)


def test_an_unknown_era_names_itself():
    """An era not in the table is refused, naming the value."""
    with pytest.raises(ValueError, match="software"):
        with_software(Options(seq_len=2048, global_batch=8), "jax-2019")
