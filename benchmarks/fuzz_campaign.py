"""A fuzz campaign over every input surface: scenario --set values, config.json fields, nccl-tests rows and trace
lines, run through the real CLI in this process (``cli.main.main``), counted by outcome.

Usage: python benchmarks/fuzz_campaign.py [--examples N] [--seed S] [--surfaces set,config,nccl,trace]

Each example must end as the contract says: exit 0, 2 or 3; no traceback; an exit 2 is one line on stderr that
names the key (``--set``), or the file and line (logs, traces), or the file (config.json); the folder it ran in
holds afterwards only what it held before, plus the -o file when the command succeeded; /dev/null is still a
character device. hypothesis draws the examples (derandomised from ``--seed``) and shrinks any that break it.
tests/properties/test_fuzz_inputs.py runs the same checks with a small budget.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import json
import os
import stat
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, given, seed, settings, strategies as st

from clusterplan.cli.main import main
from clusterplan.spec import Spec

SECTIONS = {field.name: field.type for field in dataclasses.fields(Spec)}
HOSTILE_NUMBERS = ["inf", "-inf", "nan", "1e308", "1e999", "-1", "0", "1e-320", "9223372036854775807", "2**53",
                   "9007199254740993", "0.5", "3", "1e30", "-0", "1e7", "1e9"]
HOSTILE_TEXT = ['"inf"', '"1e999PB"', '"1e999<unit>"', '"\\u0000"', '""', '"x"', "[]", '["meteor"]', "{}",
                "{meteor=1}", "true", '"80GiB"', '"200Gbps"', '"$30K"', '"-5TB"', '"nan W"', "[1, 2]", '"é"']
CONFIG = {"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 2, "hidden_size": 256,
          "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 512, "vocab_size": 1000,
          "max_position_embeddings": 128}
CONFIG_VALUES = [None, True, "eight", "8", [8], {"a": 1}, 8.5, 11008.5, -1, 0, 2**62, 1e30, 1e400, "nan", "x", 5]
NCCL_HEADER = ("# nccl-tests version 2.17.8\n# Collective test starting: all_reduce_perf\n"
               "#       size         count      type   redop    root     time   algbw   busbw  #wrong"
               "     time   algbw   busbw  #wrong\n")
NCCL_ROW = "{size:>12} {count:>13} {type:>9} {redop:>7} {root:>7} {time:>8} {algbw:>7} {busbw:>7} {wrong:>7}" \
           " {time:>8} {algbw:>7} {busbw:>7} {wrong:>7}"
NCCL_FIELDS = {"size": "1048576", "count": "262144", "type": "float", "redop": "sum", "root": "-1",
               "time": "309.4", "algbw": "3.39", "busbw": "6.35", "wrong": "0"}
NCCL_TOKENS = ["nan", "inf", "-inf", "1e400", "-5", "N/A", "x", "1e30", "0", "1.5", "99999999999999999999", ""]
SWF_LINE = ["1", "0", "-1", "100", "4", "-1", "-1", "4", "200", "-1", "1", "3", "-1", "-1", "1", "1", "-1", "-1"]
SWF_TOKENS = ["nan", "inf", "1e30", "-1", "0", "x", "1e400", "99999999999999999999999999999999999999999", "0x10",
              "1.5", "", "-", "1e15"]


def scenario_keys() -> list[str]:
    keys = [f"{section}.{field.name}" for section, kind in SECTIONS.items() if dataclasses.is_dataclass(kind)
            for field in dataclasses.fields(kind)]
    return sorted(keys) + ["prices.h100-sxm", "reliability.failure_rates.gpu"]


@dataclasses.dataclass
class Tally:
    """Examples run and their exit codes, per surface; the slowest example."""

    counts: Counter = dataclasses.field(default_factory=Counter)
    slowest_s: float = 0.0

    def surface(self, surface: str) -> str:
        codes = {code: n for (name, code), n in self.counts.items() if name == surface}
        return f"{surface} {sum(codes.values())} (" + ", ".join(f"exit {c}: {n}" for c, n in sorted(codes.items())) + ")"

    def line(self) -> str:
        surfaces = sorted({surface for surface, _ in self.counts})
        return (f"{sum(self.counts.values())} examples: " + "; ".join(map(self.surface, surfaces))
                + f"; slowest {self.slowest_s:.1f} s")


TALLY = Tally()


def run(surface: str, argv: list[str], folder: Path, *, names: str) -> int:
    """``clusterplan ARGV`` in ``folder``; asserts the contract and counts the exit code."""
    before = set(os.listdir(folder))
    out, err = io.StringIO(), io.StringIO()
    start = time.perf_counter()
    with contextlib.chdir(folder), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = int(main(argv))
    TALLY.slowest_s = max(TALLY.slowest_s, time.perf_counter() - start)
    TALLY.counts[surface, code] += 1
    errors = err.getvalue()
    assert code in (0, 2, 3), f"exit {code}: {errors[-500:]}"
    assert "Traceback" not in errors
    if code in (2, 3):
        lines = [line for line in errors.splitlines() if line.startswith("clusterplan:")]
        assert len(lines) == 1 and lines[0].startswith(("clusterplan: error:", "clusterplan: infeasible:")), errors
        assert code == 3 or names in lines[0], f"{names!r} not named in {lines[0]!r}"
    after = set(os.listdir(folder))
    expected = before | ({"out.json"} if code == 0 and "-o" in argv else set())
    assert after <= expected, f"left behind: {sorted(after - expected)}"
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode), "/dev/null is no longer a device"
    return code


# --- the surfaces -------------------------------------------------------------------------------------------

KEYS = scenario_keys()
set_values = st.one_of(st.sampled_from(HOSTILE_NUMBERS), st.sampled_from(HOSTILE_TEXT),
                       st.floats(allow_nan=True, allow_infinity=True).map(repr),
                       st.integers(-2**70, 2**70).map(str),
                       st.text(st.characters(codec="utf-8", exclude_characters="\n\r"), max_size=12).map(json.dumps))


def check_set(folder: Path, key: str, value: str) -> None:
    run("set", ["plan", "--format", "json", "--set", f"{key}={value}", "-o", "out.json"], folder, names=key)


config_values = st.one_of(st.sampled_from(CONFIG_VALUES), st.integers(-2**64, 2**64),
                          st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=8))


def check_config(folder: Path, field: str, value) -> None:
    path = folder / "config.json"
    path.write_text(json.dumps({**CONFIG, field: value}))
    run("config", ["plan", "--format", "json", "--set", 'workload.model_config="config.json"', "-o", "out.json"],
        folder, names="config.json")
    path.unlink()


def check_nccl(folder: Path, field: str, token: str, cut: int) -> None:
    rows = [NCCL_ROW.format(**NCCL_FIELDS), NCCL_ROW.format(**{**NCCL_FIELDS, "size": "2097152", field: token})]
    text = NCCL_HEADER + "\n".join(rows) + "\n# Avg bus bandwidth    : 6.35\n"
    if cut:
        text = NCCL_HEADER + rows[0] + "\n" + rows[1][:cut]
    (folder / "run.log").write_text(text)
    run("nccl", ["bench", "parse", "run.log", "-o", "out.json"], folder, names="run.log")
    (folder / "run.log").unlink()


def check_trace(folder: Path, index: int, token: str, skip_bad: bool) -> None:
    line = list(SWF_LINE)
    line[index] = token
    text = "; MaxProcs: 8\n" + " ".join(SWF_LINE) + "\n" + " ".join(line) + "\n"
    (folder / "t.swf").write_text(text)
    argv = ["schedule", "t.swf", "--set", "cluster.gpus_per_node=1", "--nodes", "8", "--policy", "fifo",
            "--format", "json", "-o", "out.json"] + (["--skip-bad"] if skip_bad else [])
    run("trace", argv, folder, names="t.swf")
    (folder / "t.swf").unlink()


SURFACES = {
    "set": (check_set, (st.sampled_from(KEYS), set_values)),
    "config": (check_config, (st.sampled_from(sorted(CONFIG)), config_values)),
    "nccl": (check_nccl, (st.sampled_from(sorted(NCCL_FIELDS)),
                          st.one_of(st.sampled_from(NCCL_TOKENS), st.floats().map(repr),
                                    st.text(st.characters(codec="ascii", exclude_characters="\n\r\t "), max_size=6)),
                          st.sampled_from([0, 0, 0, 5, 30, 60, 90]))),
    "trace": (check_trace, (st.integers(0, 17), st.one_of(st.sampled_from(SWF_TOKENS), st.floats().map(repr)),
                            st.booleans())),
}


def campaign(surface: str, examples: int, seed_value: int = 19) -> None:
    """Run ``examples`` examples of ``surface``; an AssertionError (shrunk by hypothesis) when one breaks the contract."""
    check, strategies = SURFACES[surface]

    @seed(seed_value)
    @settings(max_examples=examples, deadline=None, database=None, derandomize=False,
              suppress_health_check=list(HealthCheck), print_blob=False)
    @given(st.tuples(*strategies))
    def example(values):
        with tempfile.TemporaryDirectory() as folder:
            check(Path(folder), *values)

    example()


def main_campaign() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=500, help="examples per surface (default 500)")
    parser.add_argument("--seed", type=int, default=19)
    parser.add_argument("--surfaces", default=",".join(SURFACES))
    args = parser.parse_args()
    start = time.perf_counter()
    for surface in args.surfaces.split(","):
        campaign(surface, args.examples, args.seed)
        print(f"  {TALLY.surface(surface)}", flush=True)
    print(f"fuzz campaign, seed {args.seed}, {time.perf_counter() - start:.0f} s: {TALLY.line()}")
    print("every example: exit 0, 2 or 3, no traceback, an exit 2 one line naming its key or file, nothing left behind")


if __name__ == "__main__":
    main_campaign()
