"""The chunk a tree pipeline moves, per message size, as NCCL sizes it.

A tree all-reduce moves each channel's share of the message up and down the tree in chunks; the pipeline
is full once a chunk has crossed every hop (the fill, ``collectives._fill``). NCCL 2.30 shrinks the LL128
chunk of a small message so that each channel still has chunks to pipeline:

- Simple keeps its 512 KiB (NCCL 2.20.3 dropped the halving 2.4-2.19 applied, ``calcCollChunking``; a
  message too small to fill a deep tree loses to a ring or an LL128 tree, which the tuner then picks).
- LL128 (NCCL 2.30 ``src/enqueue.cc``, calcCollChunking): from 576,000 B halve while ``size / (channels x
  chunk)`` is below ``steps x 64 / ppn`` above 128 KiB, then below ``steps x 16 / ppn`` above 32 KiB, with
  ``steps = 1 + floor(log2 nodes) + 0.1 ppn`` and ppn the ranks per node.
- LL (16 KiB) and the NVLS tree (128 KiB) keep their chunk.
"""

from __future__ import annotations

import math

import numpy as np

# Bytes of data in one chunk before any halving (NCCL 2.30 src/enqueue.cc, src/init.cc): Simple: 4 MiB buffer /
# 8 steps; LL128: its 120 x 640 x 8 x 8 B buffer / 8 steps, 15 of every 16 words data; LL: a 512 KiB buffer /
# 8 steps, halved, half of each line data; NVLS tree: nvlsChunkSize 128 KiB.
TREE_CHUNK_BYTES = {"LL": 16384, "LL128": 576000, "Simple": 524288}
NVLS_CHUNK_BYTES = 131072
# LL128: (chunks per channel under steps x this / ppn, halve while above)
LL128_HALVING = ((64, 131072), (16, 32768))


def thresholds(protocol: str, nodes: int, ranks_per_node: int) -> tuple[tuple[float, float], ...]:
    """(chunks per channel below which to halve, smallest chunk halved) of a tree's ``protocol``; () keeps it."""
    if protocol == "LL128":
        steps = 1 + int(math.log2(nodes)) + 0.1 * ranks_per_node
        return tuple((steps * factor / ranks_per_node, floor) for factor, floor in LL128_HALVING)
    return ()


def unhalved_from_bytes(channels: int, chunk: float, rules: tuple[tuple[float, float], ...]) -> float:
    """The smallest message NCCL moves in whole ``chunk``s (the rules' thresholds fall from the first on)."""
    return channels * chunk * math.ceil(max((below for below, _ in rules), default=0.0))


def chunk_bytes(size_bytes, channels: int, chunk: float, rules: tuple[tuple[float, float], ...]):
    """The chunk NCCL uses for ``size_bytes`` (a float or an array): ``chunk`` halved by ``rules`` in turn."""
    if type(size_bytes) is np.ndarray:
        chunks = np.full(size_bytes.shape, float(chunk))
        for below, floor in rules:
            while True:
                halve = (np.floor(size_bytes / (channels * chunks)) < below) & (chunks > floor)
                if not halve.any():
                    break
                chunks = np.where(halve, chunks / 2, chunks)
        return chunks
    for below, floor in rules:
        while size_bytes // (channels * chunk) < below and chunk > floor:
            chunk /= 2
    return chunk
