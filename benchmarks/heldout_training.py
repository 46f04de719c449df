"""Predicted vs published MFU for runs that are not in the validation data and tuned nothing.

Llama 3 405B pre-training on H100 (Dubey et al. 2024, "The Llama 3 Herd of Models", arXiv 2407.21783,
Table 4: BF16 MFU for three layouts, 16M tokens per batch; the validation data holds only the 38-43 % range).
Each row runs on 400 Gb/s RoCE per GPU with the published tp, pp, cp and dp fixed; micro-batch,
interleaving and recomputation are searched. Meta does not state its FLOP convention, which matters most
for the 131K-token row: the table prints MFU with the full s x s attention (docs/training.md) and with
the causal half of it (PaLM-style 6N plus half the attention).

    python benchmarks/heldout_training.py [--write-baseline MODEL]

Below the table, the MFU errors (full attention) before (the baseline saved by ``--write-baseline`` from an
earlier model) and after.
"""

from __future__ import annotations

import argparse
import sys

import baseline
from validate_training import cluster, predict

from clusterplan.perf.layout import Constraints
from clusterplan.perf.model import with_seq_len
from clusterplan.perf.presets import preset

LLAMA3_TABLE4 = (  # GPUs, tp, cp, pp, dp, sequence, published BF16 MFU
    (8192, 8, 1, 16, 64, 8192, 0.43),
    (16384, 8, 1, 16, 128, 8192, 0.41),
    (16384, 8, 16, 16, 8, 131072, 0.38),
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write-baseline", metavar="MODEL",
                        help="save these errors as the 'before' of later runs (MODEL: the commit they come from)")
    args = parser.parse_args(argv)
    changes = []
    print(f"{'run':50s} {'published':>9s} {'full attn':>9s} {'error':>7s} {'causal':>7s} {'error':>7s}  layout")
    for gpus, tp, cp, pp, dp, seq, published in LLAMA3_TABLE4:
        model = with_seq_len(preset("llama3.1-405b"), seq)
        batch = 16 * 2**20 // seq
        best = predict(model, cluster("h100-sxm", gpus, "roce-400g", 8), gpus, seq, batch,
                       Constraints(tp=tp, pp=pp, cp=cp, dp=dp, zero=1))
        lay = best.layout
        full = model.model_flops_per_token(seq)
        causal = best.mfu * (full - 6 * model.layers * model.hidden * seq) / full   # half of 12 L h s
        name = f"llama3-405b {gpus} GPUs tp{tp} cp{cp} pp{pp} dp{dp} s{seq}"
        changes += [(baseline.SOURCE, "full attention", name, best.mfu / published - 1),
                    (baseline.SOURCE, "causal attention", name, causal / published - 1)]
        print(f"{name:50s} {published:9.1%} "
              f"{best.mfu:9.1%} {best.mfu / published - 1:+7.1%} {causal:7.1%} {causal / published - 1:+7.1%}"
              f"  mbs{lay.mbs} v{lay.virtual_stages} {lay.recompute}")
    print()
    if args.write_baseline:
        print(f"baseline written: {baseline.write('heldout', changes, args.write_baseline)}")
        return 0
    before, title = baseline.read("heldout"), baseline.header("heldout") or "no baseline saved"
    baseline.print_change({baseline.SOURCE: f"Before ({title}) and after: signed MFU error, Llama 3 405B Table 4"},
                          changes, before, {baseline.SOURCE: 20})
    return 0


if __name__ == "__main__":
    sys.exit(main())
