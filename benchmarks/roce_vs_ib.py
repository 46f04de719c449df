"""Put the public RoCE-vs-InfiniBand claims to the model (docs/collectives.md).

Claims: RoCE reaches about 85 % of InfiniBand's all-reduce bandwidth; it trains
15-25 % slower; stragglers cost 12 % at 64 GPUs. The reference cluster is
priced on ib-ndr200 and on roce-200g (same NIC rate, same topology).
"""

from __future__ import annotations

from clusterplan.catalog import load_catalog
from clusterplan.design import design
from clusterplan.perf.collectives import predict, system_from_design
from clusterplan.perf.stragglers import implied_jitter, straggler_slowdown
from clusterplan.spec import load_spec

MiB, GiB = 2**20, 2**30


def main() -> None:
    catalog = load_catalog()
    built = {f: design(load_spec(overrides=[f"network.fabric={f}"]), catalog) for f in ("ib-ndr200", "roce-200g")}
    systems = {f: system_from_design(d) for f, d in built.items()}
    print("all_reduce busbw (GB/s), RoCE 200G / IB NDR200 on the reference cluster")
    print(f"  {'GPUs':>5} {'size':>8} {'IB':>8} {'RoCE':>8} {'ratio':>7}")
    ratios = {}
    for ranks in (16, 128):
        for size in (1 * MiB, 64 * MiB, 1 * GiB):
            ib, roce = (float(predict("all_reduce", [size], systems[f], ranks).busbw_GBps[0]) for f in systems)
            ratios[(ranks, size)] = roce / ib
            print(f"  {ranks:>5} {size // MiB:>6}Mi {ib:>8.1f} {roce:>8.1f} {roce / ib:>7.1%}")
    jitter = {f: d.parts.fabric.jitter_cv for f, d in built.items()}
    loss = {f: straggler_slowdown(64, cv) for f, cv in jitter.items()}
    print(f"stragglers at 64 GPUs: IB (cv {jitter['ib-ndr200']:.0%}) {loss['ib-ndr200']:.1%}, "
          f"RoCE (cv {jitter['roce-200g']:.0%}) {loss['roce-200g']:.1%}; "
          f"a 12 % loss needs cv {implied_jitter(64, 0.12):.1%} (normal)")
    slower = 1 / ratios[(128, 1 * GiB)] - 1
    print("training throughput lost on RoCE, by share of the step spent in exposed network collectives:")
    for exposed in (0.05, 0.10, 0.20, 0.30, 0.50):
        step = 1 + exposed * slower + loss["roce-200g"] - loss["ib-ndr200"]
        print(f"  exposed {exposed:4.0%}: {1 - 1 / step:6.1%} lower tokens/s")


if __name__ == "__main__":
    main()
