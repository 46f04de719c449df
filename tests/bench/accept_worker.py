"""Run ``clusterplan accept`` with a fault injected into one rank (test_accept.py starts it).

ACCEPT_SLOW_RANK=r: that rank's matrix multiplies each take ACCEPT_SLOW_FACTOR times as long (the extra
time asleep, so a loaded machine slows it in the same proportion), as a GPU throttled by heat or a capped
clock would. ACCEPT_KILL_RANK=r: that rank dies (os._exit) at its first
alltoall, in the middle of the intra-node phase. The other ranks run the real command unchanged.
"""

import os
import sys
import time

import torch
import torch.distributed as dist

from clusterplan.cli.main import main

rank = os.environ.get("RANK")
if rank is not None and rank == os.environ.get("ACCEPT_SLOW_RANK"):
    real_mm, factor = torch.mm, float(os.environ.get("ACCEPT_SLOW_FACTOR", "10"))

    def slow_mm(*args, **kwargs):
        began = time.perf_counter()
        result = real_mm(*args, **kwargs)
        time.sleep((factor - 1) * (time.perf_counter() - began))
        return result

    torch.mm = slow_mm
if rank is not None and rank == os.environ.get("ACCEPT_KILL_RANK"):
    def die(*args, **kwargs):
        sys.stdout.flush()
        os._exit(9)

    dist.all_to_all_single = die
sys.exit(main(sys.argv[1:]))
