"""A tree all-reduce's two empirical corrections: NCCL's per-size factor and the throughput of its channels.

NCCL rates a tree below its links at medium sizes (treeCorrectionFactor, src/graph/tuning.cc) and runs each
tree channel's thread block split between the reduce going up and the broadcast coming down (runTreeSplit), so
a channel moves a node's tree traffic at about half a ring channel's rate (``CHANNEL_Bps``): on nodes with fast
NICs the channels, not the NICs, bound a plain tree (docs/collectives.md, tree throughput).
"""

from __future__ import annotations

import numpy as np

# NCCL's treeCorrectionFactor for Simple, LL and LL128, by log2(size / 64 B), 64 B .. 512 MiB
# (NCCL steps between buckets; the model interpolates, see ``correction``).
TREE_CORRECTION = {
    "Simple": (.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9),
    "LL": (1, 1, 1, 1, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1, 1, 1, 1, 1),
    "LL128": (1, 1, 1, 1, 1, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1, 1, 1),
}
_TABLES = {protocol: np.asarray(table, dtype=float) for protocol, table in TREE_CORRECTION.items()}
_FLOATS = {protocol: tuple(table.tolist()) for protocol, table in _TABLES.items()}
_BUCKETS = np.arange(len(TREE_CORRECTION["Simple"]))
# A plain tree's network throughput per channel, a node's tree traffic both ways (collectives._tree_net_algbw):
# calibrated on the NCCL_ALGO=Tree points of two B200 clusters with 8 x NDR400 a node on 2 nodes (busbw 335.2 and
# 338.6 GB/s at 16-32 GiB, together-nccl-tests 2026-05): algbw 179.7 GB/s, / 0.9 (NCCL's tree correction at these
# sizes) / 32 channels = 6.2 GB/s. Checked, not fitted: the same trees on 4 to 60 nodes (busbw 190.7-195.6 GB/s,
# the model 176-181: 8-9 % slow), A3 Mega's TCPXO tree on 2 nodes (algbw 181 GB/s) and NCCL's own choice of its
# NVLS tree over the plain tree on 2-node H100 InfiniBand (NVIDIA/nccl-tests #309: 466-469 GB/s, which no plain
# tree reaches there).
CHANNEL_Bps = 6.2e9


def correction(protocol: str, sizes):
    """NCCL's per-size tree factor, interpolated in log2(size) so that time still grows with size."""
    if type(sizes) is np.ndarray:
        return np.interp(np.log2(np.maximum(sizes, 64) / 64), _BUCKETS, _TABLES[protocol])
    return _interpolate(float(np.log2(max(sizes, 64) / 64)), _FLOATS[protocol])


def _interpolate(position: float, table: tuple[float, ...]) -> float:
    """``np.interp(position, [0, 1, 2 ...], table)`` for one position >= 0: the same arithmetic, without
    numpy's microseconds per call."""
    if position >= len(table) - 1:
        return table[-1]
    below = int(position)
    if position == below:
        return table[below]
    return (table[below + 1] - table[below]) * (position - below) + table[below]
