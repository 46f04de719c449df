"""The one timing loop: warm-up untimed, the mean over the timed calls, the wall clock off a GPU."""

import time

import pytest

from clusterplan.bench.timing import time_calls


class FakeDevice:
    def __init__(self, kind: str):
        self.type = kind


def test_warm_up_calls_are_made_and_not_timed():
    """3 warm-up calls of 20 ms, then 2 timed calls of 1 ms: 5 calls, about 1 ms per timed call."""
    calls = []

    def call():
        time.sleep(0.02 if len(calls) < 3 else 0.001)
        calls.append(1)

    seconds = time_calls(call, 2, warmup=3)
    assert len(calls) == 5
    assert 0.001 <= seconds < 0.015


@pytest.mark.parametrize("device", [None, FakeDevice("cpu")])
def test_wall_clock_off_a_gpu_is_the_mean_per_call(device):
    """No device or a CPU device: the wall clock, divided by the number of timed calls."""
    calls = []
    seconds = time_calls(lambda: (calls.append(1), time.sleep(0.002)), 4, device=device)
    assert len(calls) == 4 and 0.002 <= seconds < 0.05


def cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


@pytest.mark.skipif(not cuda_available(), reason="needs a CUDA GPU")
def test_cuda_events_time_the_kernels():
    """On a GPU, CUDA events: a 4096^3 bf16 matmul takes more than 10 us and less than 1 s."""
    import torch

    device = torch.device("cuda", torch.cuda.current_device())
    a = torch.randn(4096, 4096, dtype=torch.bfloat16, device=device)
    seconds = time_calls(lambda: a @ a, 5, warmup=2, device=device)
    assert 1e-5 < seconds < 1.0
