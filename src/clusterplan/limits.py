"""The range each number of a scenario may take (docs/scenario.md, "Limits").

Far beyond any real cluster or price, and small enough that no model overflows or runs for minutes: a value
outside is bad input, named with its range, before any model runs.
"""

from collections.abc import Mapping

from clusterplan.schema import check

# Scenario key -> (least, largest) value; prices and failure rates are bounded by the two constants below.
LIMITS: Mapping[str, tuple[float, float]] = {
    "cluster.num_nodes": (1, 100_000), "cluster.gpus_per_node": (1, 72), "network.nics_per_node": (1, 32),
    "network.oversubscription": (1, 64), "storage.usable_tb": (0, 1e6), "storage.tb_per_gpu": (0, 1e4), "storage.read_Bps_per_gpu": (0, 1e11),
    "storage.burst_buffer_tb": (0, 1e6), "facility.electricity_usd_per_kwh": (0, 10), "facility.pue": (1, 5),
    "facility.rack_power_kw": (0.1, 2000), "facility.colocation_usd_per_kw_month": (0, 10_000),
    "facility.pdus_per_rack": (0, 16), "staff.setup_engineers": (0, 10_000), "staff.setup_months": (0, 120),
    "staff.ops_engineers": (0, 10_000), "staff.gpus_per_engineer": (1, 1e7), "staff.min_engineers": (0, 10_000), "staff.loaded_cost_usd_per_year": (0, 1e7),
    "finance.utilization": (0.001, 1), "finance.maintenance_fraction_per_year": (0, 1),
    "workload.tokens": (0, 1e16), "workload.gpus": (0, 9_437_184),
    "workload.seq_len": (0, 10_485_760), "workload.global_batch": (0, 10_485_760),
    "workload.sparsity_speedup": (1, 2), "reliability.days": (0, 3650),
    "reliability.checkpoint_interval_min": (0, 525_600), "reliability.checkpoint_metadata_s": (0, 86_400),
    "reliability.checkpoint_bytes_per_param": (0, 64), "reliability.checkpoints_kept": (1, 1000),
    "reliability.dataset_tb": (0, 1e6), "reliability.bytes_per_token": (0, 1e6), "reliability.detect_min": (0, 10_080),
    "reliability.restart_overhead_min": (0, 10_080), "reliability.repair_hours": (0, 8760),
    "reliability.long_context_seq_len": (0, 10_485_760), "reliability.eval_interval_steps": (0, 10_000_000),
    "reliability.eval_steps": (0, 10_000_000),
    "size.tokens": (0, 1e16), "size.deadline_days": (0, 36_500), "size.budget_usd": (0, 1e12),
    "size.max_gpus": (0, 800_000),
}
PRICE_LIMIT_USD = 1e9            # per unit: a whole data hall is a few hundred million
FAILURE_RATE_LIMIT = 1e6         # per 1,000 unit-days: a failure every 1.4 minutes per unit



def within(key: str, value: float, low: float, high: float) -> None:
    check(low <= value <= high, key, f"must be between {_number(low)} and {_number(high)}, got {_number(value)}")


def _number(value: float) -> str:
    """1,000,000 and 0.001 as written; 1e+300 where a plain number would not help."""
    return f"{int(value):,}" if float(value).is_integer() and abs(value) < 1e15 else f"{value:g}"
