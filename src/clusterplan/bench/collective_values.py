"""Known inputs and exact results of the correctness check of ``bench collectives`` (docs/bench.md).

Reducing ops sum small integers, chosen so that every partial sum is exact in
the element type; the ops that only move data carry (i + 37 rank) % 251. The
functions take an integer tensor of element indices (or anything with ``%``
and ``//``) and need no torch import.
"""

from __future__ import annotations

from clusterplan.bench.collectives import REDUCING, ROOT

# every integer up to this is exact: 2^(significand bits), e4m3 has 3 stored + 1 implicit
EXACT_INTEGERS = {"float": 2**24, "half": 2**11, "bfloat16": 2**8, "f8e4m3": 2**4}
COPY_MODULUS, COPY_STRIDE = 251, 37   # inputs of the ops that only move data: (i + 37 rank) % 251


def modulus(num_ranks: int, dtype: str) -> int:
    """Inputs of reducing ops are (i + rank) % m, m chosen so that every partial sum stays exact.

    The sum over ranks is at most (m - 1) n; 0 means too many ranks even for 0/1 inputs, and then
    exactly one rank holds a 1 per element ((i + rank) % n == 0), so every sum is 1.
    """
    room = EXACT_INTEGERS[dtype] // num_ranks
    return min(5, room + 1) if room >= 1 else 0


def input_values(op: str, rank: int, num_ranks: int, index, m: int):
    """This rank's input at element ``index`` (an integer tensor)."""
    if op in REDUCING:
        return ((index + rank) % num_ranks == 0).long() if m == 0 else (index + rank) % m
    return (index + COPY_STRIDE * rank) % COPY_MODULUS


def expected_values(op: str, rank: int, num_ranks: int, count: int, index, m: int):
    """The exact result at output element ``index`` on ``rank``."""
    if op in REDUCING:
        global_index = index + rank * count if op == "reduce_scatter" else index
        return _sum_over_ranks(global_index, num_ranks, m)
    if op in ("all_gather", "alltoall"):
        peer, offset = index // count, index % count
        return (offset + (rank * count if op == "alltoall" else 0) + COPY_STRIDE * peer) % COPY_MODULUS
    source = ROOT if op == "broadcast" else (rank - 1) % num_ranks   # broadcast, sendrecv
    return (index + COPY_STRIDE * source) % COPY_MODULUS


def _sum_over_ranks(index, num_ranks: int, m: int):
    """Sum over r < n of (index + r) % m, in closed form: whole cycles plus the remainder."""
    if m == 0:
        return index * 0 + 1
    total = index * 0 + (num_ranks // m) * (m * (m - 1) // 2)
    for k in range(num_ranks % m):
        total = total + (index + k) % m
    return total
