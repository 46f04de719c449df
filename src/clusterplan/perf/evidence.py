"""How far a prediction may be off: bands from the validation residuals, by regime (docs/evidence.md).

The band table (evidence.json beside this module) is data, written by ``benchmarks/evidence.py --write``
from the signed errors of every validated run: e = predicted / measured - 1 of a time (a step, a
collective), so e < 0 means the model was too fast. A regime is a key such as (GPU, precision, GPUs band,
model-size band, software era); the table holds every prefix of that key that has a point, each with its
n, median and band (10th to 90th percentile of e; where n < 10, widened to cover the regime's own extremes
and its parent's band). A lookup takes the most specific prefix it finds; a prediction outside every
validated regime (a GPU, precision or fabric with no point, more GPUs or a longer sequence than any run)
names why and gets the widest band: the extremes of every residual of its kind. A mixture-of-experts model's
prediction takes its band from the published MoE runs (benchmarks/validate_moe.py), a regime of its own keyed
by GPU, precision and GPUs, with the MoE runs' own envelope: their GPUs, precisions, scale, sequence, fabric,
routing (dropless or token dropping) and CUDA graphs (what they capture).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path

from clusterplan.schema import FROZEN

TABLE = Path(__file__).with_name("evidence.json")
GPU_BANDS = (8, 64, 512, 4096, 16384)                 # upper ends of the GPUs bands
SIZE_BANDS_B = (1, 10, 100)                           # model parameters, billions: upper ends
MESSAGE_BANDS = ((64 * 2**10, "< 64 KiB"), (64 * 2**20, "64 KiB - 64 MiB"))
# software era, told by the attention kernel a run used: Megatron-DeepSpeed-era unfused attention (2021-22),
# FlashAttention-1 (2022-23), FlashAttention-2/3 or cuDNN fused attention with current overlap (2023 on)
ERAS = {"unfused": "unfused 2021-22", "flash1": "flash1 2022-23", "flash2": "fused 2023+", "flash": "fused 2023+"}
TRAINING_KEYS = ("gpu", "precision", "gpus", "size", "era")
COLLECTIVE_KEYS = ("span", "gpu", "message")
MOE_KEYS = ("family", "gpu", "precision", "gpus")
MOE = "mixture-of-experts"
# how an out-of-domain reason names a MoE run's routing (names.MOE_ROUTING) and CUDA graphs (names.CUDA_GRAPHS)
ROUTING_WORDS = {"dropless": "a dropless router", "tokendrop": "token dropping"}
GRAPH_WORDS = {"none": "no CUDA graphs", "router": "a CUDA graph over the router",
               "attention+router": "CUDA graphs over attention and the router", "full": "a whole-iteration CUDA graph"}
SCHEDULE_WORDS = {"1f1b": "the 1F1B pipeline schedule", "dualpipe": "the DualPipe schedule"}


@dataclass(**FROZEN)
class Band:
    """The evidence behind one prediction: its regime, how many validated points it rests on, their
    median signed error and the band (signed errors of a time: predicted / measured - 1)."""

    kind: str                           # "training" or "collectives"
    regime: str                         # the matched regime, e.g. "h100-sxm, bf16, 65-512 GPUs, 10-100B"
    n: int                              # validated points in it (out of domain: every point of the kind)
    median: float
    low: float                          # the band's lower signed error (the model too fast by this much)
    high: float                         # ... and upper (too slow)
    out_of_domain: tuple[str, ...] = ()  # why no validated regime covers the prediction

    def time_range(self, seconds: float) -> tuple[float, float]:
        """(low, high) of a predicted time (a step, a run, its cost): measured = predicted / (1 + e)."""
        return seconds / (1 + self.high), seconds / (1 + self.low)

    def rate_range(self, rate: float) -> tuple[float, float]:
        """(low, high) of a predicted rate (tokens/s, bandwidth): measured = predicted x (1 + e)."""
        return rate * (1 + self.low), rate * (1 + self.high)

    @property
    def warning(self) -> str:
        """One line where the prediction is out of every validated regime, else empty."""
        if not self.out_of_domain:
            return ""
        return (f"{self.kind} prediction outside every validated regime ({'; '.join(self.out_of_domain)}): "
                f"widest band {self.low:+.0%} to {self.high:+.0%}")


def gpus_band(num_gpus: int) -> str:
    low = 1
    for high in GPU_BANDS:
        if num_gpus <= high:
            return f"{low:,}-{high:,} GPUs"
        low = high + 1
    return f"> {GPU_BANDS[-1]:,} GPUs"


def size_band(params: float) -> str:
    billions = params / 1e9
    low = 0
    for high in SIZE_BANDS_B:
        if billions < high:
            return f"{low}-{high}B"
        low = high
    return f">= {SIZE_BANDS_B[-1]}B"


def message_band(size_bytes: float) -> str:
    for high, label in MESSAGE_BANDS:
        if size_bytes < high:
            return label
    return ">= 64 MiB"


def training_regime(*, gpu: str, precision: str, num_gpus: int, params: float, attention: str) -> tuple[str, ...]:
    """The full regime key of a training prediction, in TRAINING_KEYS order."""
    return gpu, precision, gpus_band(num_gpus), size_band(params), ERAS[attention]


def moe_regime(*, gpu: str, precision: str, num_gpus: int) -> tuple[str, ...]:
    """The full regime key of a mixture-of-experts training prediction, in MOE_KEYS order."""
    return MOE, gpu, precision, gpus_band(num_gpus)


def collective_regime(*, gpu: str, num_nodes: int, size_bytes: float) -> tuple[str, ...]:
    """The full regime key of a collective's prediction, in COLLECTIVE_KEYS order."""
    return "one node" if num_nodes <= 1 else "2+ nodes", gpu, message_band(size_bytes)


@functools.cache
def table() -> dict:
    """The band table (evidence.json), read once."""
    return json.loads(TABLE.read_text(encoding="utf-8"))


def training_band(*, gpu: str, precision: str, num_gpus: int, params: float, attention: str, technology: str,
                  seq_len: int, experts: int = 1, domain_gpus: int = 0, routing: str = "dropless",
                  graphs: str = "none", schedule: str = "1f1b") -> Band:
    """The band of a training prediction (step time, tokens/s, time- and cost-to-train); ``domain_gpus``: the
    cluster's NVLink domain (0 = one server's); a model with ``experts`` > 1 takes the MoE runs' band, and its
    ``routing`` (dropless or tokendrop) must be among theirs; the CUDA ``graphs`` and the pipeline ``schedule``
    among the validated runs' of its kind."""
    if experts > 1:
        return _moe_band(gpu=gpu, precision=precision, num_gpus=num_gpus, technology=technology, seq_len=seq_len,
                         domain_gpus=domain_gpus, routing=routing, graphs=graphs, schedule=schedule)
    kind = table()["training"]
    envelope = kind["envelope"]
    reasons = _domain_reasons(domain_gpus, envelope["max_domain_gpus"]) + _setting_reasons(
        envelope, "run", graphs=graphs, schedule=schedule)
    if gpu not in envelope["gpus"]:
        reasons.append(f"no validated run on {gpu}")
    elif (gpu, precision) not in {tuple(pair) for pair in envelope["gpu_precisions"]}:
        reasons.append(f"no validated {precision} run on {gpu}")
    if num_gpus > envelope["max_num_gpus"]:
        reasons.append(f"{num_gpus:,} GPUs, more than any validated run ({envelope['max_num_gpus']:,})")
    if seq_len > envelope["max_seq_len"]:
        reasons.append(f"sequence {seq_len:,}, longer than any validated run ({envelope['max_seq_len']:,})")
    if num_gpus > envelope["gpus_per_node"] and technology not in envelope["technologies"]:
        reasons.append(f"no validated multi-node run over {technology}")
    key = training_regime(gpu=gpu, precision=precision, num_gpus=num_gpus, params=params, attention=attention)
    return _band("training", kind, key, reasons)


def _setting_reasons(envelope: dict, what: str, *, graphs: str, schedule: str) -> list[str]:
    """Why a prediction's CUDA graphs or pipeline schedule is outside the validated ``what`` runs'."""
    reasons = []
    if graphs not in envelope["cuda_graphs"]:
        reasons.append(f"no validated {what} with {GRAPH_WORDS[graphs]}")
    if schedule not in envelope["schedules"]:
        reasons.append(f"no validated {what} with {SCHEDULE_WORDS[schedule]}")
    return reasons


def _moe_band(*, gpu: str, precision: str, num_gpus: int, technology: str, seq_len: int, domain_gpus: int,
              routing: str, graphs: str, schedule: str) -> Band:
    """The band of a mixture-of-experts training prediction, from the published MoE runs and their envelope."""
    kind = table().get("moe")
    if kind is None:
        return Band(kind="training", regime="out of domain", n=0, median=0.0, low=0.0, high=0.0,
                    out_of_domain=("mixture-of-experts (no validated MoE run in the band table)",))
    envelope = kind["envelope"]
    reasons = _domain_reasons(domain_gpus, envelope["max_domain_gpus"])
    if gpu not in envelope["gpus"]:
        reasons.append(f"no validated mixture-of-experts run on {gpu}")
    elif (gpu, precision) not in {tuple(pair) for pair in envelope["gpu_precisions"]}:
        reasons.append(f"no validated {precision} mixture-of-experts run on {gpu}")
    if num_gpus > envelope["max_num_gpus"]:
        reasons.append(f"{num_gpus:,} GPUs, more than any validated mixture-of-experts run "
                       f"({envelope['max_num_gpus']:,})")
    if seq_len > envelope["max_seq_len"]:
        reasons.append(f"sequence {seq_len:,}, longer than any validated mixture-of-experts run "
                       f"({envelope['max_seq_len']:,})")
    if num_gpus > envelope["gpus_per_node"] and technology not in envelope["technologies"]:
        reasons.append(f"no validated multi-node mixture-of-experts run over {technology}")
    if routing not in envelope["routings"]:
        reasons.append(f"no validated mixture-of-experts run with {ROUTING_WORDS[routing]}")
    reasons += _setting_reasons(envelope, "mixture-of-experts run", graphs=graphs, schedule=schedule)
    return _band("training", kind, moe_regime(gpu=gpu, precision=precision, num_gpus=num_gpus), reasons)


def collective_band(*, gpu: str, num_nodes: int, size_bytes: float, technology: str, domain_gpus: int = 0) -> Band:
    """The band of a collective's predicted time (its bandwidths take the inverse); ``num_nodes`` counts NVLink
    domains, ``domain_gpus`` their GPUs (0 = one server's)."""
    kind = table()["collectives"]
    envelope = kind["envelope"]
    reasons = _domain_reasons(domain_gpus, table()["training"]["envelope"]["gpus_per_node"])
    if gpu not in envelope["gpus"]:
        reasons.append(f"no validated collective on {gpu}")
    if num_nodes > 1 and technology not in envelope["technologies"]:
        reasons.append(f"no validated multi-node collective over {technology}")
    if num_nodes > envelope["max_num_nodes"]:
        reasons.append(f"{num_nodes:,} nodes, more than any validated collective ({envelope['max_num_nodes']:,})")
    key = collective_regime(gpu=gpu, num_nodes=num_nodes, size_bytes=size_bytes)
    return _band("collectives", kind, key, reasons)


def _domain_reasons(domain_gpus: int, validated_gpus: int) -> list[str]:
    """Why a larger NVLink domain than any validated run's is out of domain."""
    if domain_gpus > validated_gpus:
        return [f"an NVLink domain of {domain_gpus} GPUs (every validated run: {validated_gpus}-GPU domains or less)"]
    return []


def _band(name: str, kind: dict, key: tuple[str, ...], reasons: list[str]) -> Band:
    """The most specific validated prefix of ``key``; the widest band where out of domain or none matches."""
    if not reasons:
        for length in range(len(key), 1, -1):
            row = kind["regimes"].get(" | ".join(key[:length]))
            if row is not None:
                return Band(kind=name, regime=", ".join(key[:length]), n=row["n"], median=row["median"],
                            low=row["low"], high=row["high"])
        reasons.append(f"no validated point in {', '.join(key[:2])}")
    widest = kind["widest"]
    return Band(kind=name, regime="out of domain", n=widest["n"], median=widest["median"], low=widest["low"],
                high=widest["high"], out_of_domain=tuple(reasons))
