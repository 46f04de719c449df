"""The named choices that the scenario schema and the models share, defined once.

Below spec and the models in the import order: spec validates a scenario's value against
these, and perf encodes a layout's recompute choice as an index into ``RECOMPUTE``.
"""

RECOMPUTE = ("none", "selective", "full", "block")   # block: the fewest whole layers that fit
PRECISIONS = ("bf16", "fp8")
ATTENTION = ("flash", "flash2", "flash1", "unfused")
SHARDING = ("full", "hybrid")

# clusterplan size: the ways to get the GPUs (docs/size.md)
SIZE_MODES = ("own", "reserved", "on-demand", "spot", "hybrid")
