"""Run under torchrun by test_bench_collectives.py: every op and type in one process group.

Rank 0 prints one JSON line per case: {"case", "rows": [[size, count, wrong_oop, wrong_ip]], "notes"}.
The last cases corrupt all_reduce on rank 0 (one element per call), to show the check sees it.
"""

import datetime
import json

import torch
import torch.distributed as dist

from clusterplan.bench.collective_run import measure
from clusterplan.bench.collectives import BenchConfig, Group, rows_for
from clusterplan.perf.collectives import OPS

dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))
rank, n = dist.get_rank(), dist.get_world_size()
group = Group(rank=rank, world_size=n, backend="gloo", device=torch.device("cpu"))


def report(case: str, config: BenchConfig, **kwargs) -> None:
    rows, notes = measure(config, group, rows_for(config, n), **kwargs)
    if rank == 0:
        print(json.dumps({"case": case, "notes": list(notes), "rows": [
            [r.size_bytes, r.count, r.out_of_place.wrong, r.in_place.wrong if r.in_place else None,
             r.out_of_place.time_s] for r in rows]}), flush=True)


for op in OPS:
    for dtype in ("float", "half", "bfloat16"):
        report(f"{op}/{dtype}", BenchConfig(op=op, dtype=dtype, min_bytes=64, max_bytes=4096, step_factor=8,
                                            iterations=2, warmup=1))
report("reduce_scatter/emulated", BenchConfig(op="reduce_scatter", min_bytes=96, max_bytes=96, iterations=2,
                                              warmup=1), emulate_reduce_scatter=True)

real_all_reduce = dist.all_reduce


def corrupted(tensor, *args, **kwargs):
    work = real_all_reduce(tensor, *args, **kwargs)
    if rank == 0 and tensor.dtype == torch.float32:  # the data, not the int64 wrong counts
        tensor[0] += 1
    return work


dist.all_reduce = corrupted
report("all_reduce/corrupted", BenchConfig(op="all_reduce", min_bytes=64, max_bytes=256, iterations=1, warmup=0))
dist.all_reduce = real_all_reduce
dist.destroy_process_group()
