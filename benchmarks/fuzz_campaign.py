"""A fuzz campaign over every input surface: scenario --set values, config.json fields, nccl-tests rows and trace
lines, run through the real CLI in this process (``cli.main.main``), counted by outcome; then issue 31's hostile
classes: nesting and long numbers in every parsed text, special files (devices, FIFOs, gzip bombs, folders) in
every file-valued input, hostile -o targets, synthetic trace specs, long CSV cells, signals during a write (each run as its own
process) and, where benchmarks/fuzz_server.py exists, the live server on loopback.

Usage: python benchmarks/fuzz_campaign.py [--examples N] [--seed S] [--surfaces set,config,...,server]

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
import gzip
import io
import json
import os
import signal
import socket
import stat
import subprocess
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
        order = sorted(codes.items(), key=lambda item: (int(str(item[0]).split()[0]), str(item[0])))
        return f"{surface} {sum(codes.values())} (" + ", ".join(f"exit {c}: {n}" for c, n in order) + ")"

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


# --- issue 31: hostile classes -------------------------------------------------------------------------------

BENCHMARKS = Path(__file__).parent
GZIP_MEBIBYTE = gzip.compress(b"\0" * 2**20)       # members concatenate: N of them decompress to N MiB


def nested(depth: int, opener: str, *, toml: bool) -> str:
    """``depth`` levels of arrays ("[") or tables ("{") around a 1."""
    if opener == "[":
        return "[" * depth + "1" + "]" * depth
    return ("{a=" if toml else '{"a":') * depth + "1" + "}" * depth


NEST_PLACES = {   # place -> (argv, the file written (None for --set), what the error must name)
    "set": (["plan", "--format", "json", "--set", "cluster.num_nodes={v}", "-o", "out.json"], None, "cluster.num_nodes"),
    "scenario": (["plan", "s.toml", "--format", "json", "-o", "out.json"], "s.toml", "s.toml"),
    "config": (["plan", "--set", 'workload.model_config="config.json"', "--format", "json", "-o", "out.json"],
               "config.json", "config.json"),
    "measured": (["report", "--measured", "m.json", "--format", "json", "-o", "out.json"], "m.json", "m.json"),
    "calibrate": (["calibrate", "m.json", "-o", "out.json"], "m.json", "m.json"),
}


def nest_text(place: str, value: str) -> str:
    if place == "scenario":
        return f"[cluster]\nnum_nodes = {value}\n"
    if place == "config":
        return json.dumps(CONFIG)[:-1] + f', "rope_scaling": {value}}}'
    return '{"schema": "clusterplan.bench/1", "op": "all_reduce", "world_size": 8, "rows": ' + value + "}"


def check_nesting(folder: Path, place: str, depth: int, opener: str) -> None:
    """Nesting past 64 levels is exit 2 naming the key or file, whatever the depth (RecursionError before)."""
    value = nested(depth, opener, toml=place in ("set", "scenario"))
    check_bounded(folder, place, "nesting", value, within=depth <= 64, what=f"{depth} levels")


def check_digits(folder: Path, place: str, digits: int, sign: str) -> None:
    """A number of more than 100 digits is exit 2 naming it (Python's int-string limit, exit 1, before)."""
    check_bounded(folder, place, "digits", sign + "7" * digits, within=digits <= 100, what=f"{digits} digits")


def check_bounded(folder: Path, place: str, surface: str, value: str, *, within: bool, what: str) -> None:
    """``value`` at ``place`` (on the command line, or in the file the place reads): any exit within the bound,
    exit 2 past it."""
    argv, name, names = NEST_PLACES[place]
    if name:
        (folder / name).write_text(nest_text(place, value))
    code = run(surface, [a.replace("{v}", value) for a in argv], folder, names=names)
    assert within or code == 2, f"{place}: {what} gave exit {code}"
    if name:
        (folder / name).unlink()


FILE_PLACES = {   # place -> argv with {f} for the file
    "trace": ["schedule", "{f}", "--format", "json", "-o", "out.json"],
    "utilization_from_trace": ["plan", "--set", 'finance.utilization_from_trace="{f}"', "--format", "json"],
    "model_config": ["train", "--model-config", "{f}", "--format", "json"],
    "scenario": ["plan", "{f}", "--format", "json"],
    "measured": ["report", "--measured", "{f}", "--format", "json", "-o", "out.json"],
    "calibration": ["collectives", "--calibration", "{f}", "--format", "json"],
    "calibrate": ["calibrate", "{f}", "-o", "out.json"],
    "nccl_log": ["bench", "parse", "{f}"],
}


def special_file(folder: Path, kind: str, place: str) -> str:
    """The name of a file of ``kind`` made in ``folder`` (or a device's path)."""
    if kind.startswith("/dev/"):
        return kind
    path = folder / f"in.{kind}"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    elif kind == "socket":
        listener = socket.socket(socket.AF_UNIX)
        listener.bind(str(path))
        SOCKETS.append(listener)
    elif kind == "bomb":
        path.write_bytes(GZIP_MEBIBYTE * (513 if place in ("trace", "utilization_from_trace") else 65))
    return path.name


SOCKETS: list[socket.socket] = []


def check_files(folder: Path, place: str, kind: str) -> None:
    """A device, FIFO, socket, folder or gzip bomb as any input file: exit 2 naming it, at once (a hang or
    a MemoryError before)."""
    name = special_file(folder, kind, place)
    code = run("files", [a.replace("{f}", name) for a in FILE_PLACES[place]], folder, names=name)
    assert code == 2, f"{place} {kind}: exit {code}"
    while SOCKETS:
        SOCKETS.pop().close()


OUTPUT_CASES = ("loop", "long", "own-input", "hard-link-to-input", "missing-folder", "folder", "not-utf8",
                "read-only", "dev-null")


def check_output(folder: Path, case: str, length: int, raw: bytes) -> None:
    """Hostile -o targets: named refusals (exit 2) or a whole write (exit 0); inputs and read-only files kept,
    no temporary left."""
    scenario = folder / "in.toml"
    scenario.write_text("[cluster]\nnum_nodes = 2\n")
    target = {"loop": "loop-a", "long": "n" * length, "own-input": "in.toml", "hard-link-to-input": "hard.toml",
              "missing-folder": "none/out.json", "folder": "sub", "dev-null": os.devnull,
              "not-utf8": os.fsdecode(b"out-" + raw.replace(b"/", b"_").replace(b"\0", b"_") + b".json"),
              "read-only": "kept.json"}[case]
    if case == "loop":
        os.symlink("loop-b", folder / "loop-a")
        os.symlink("loop-a", folder / "loop-b")
    elif case == "hard-link-to-input":
        os.link(scenario, folder / "hard.toml")
    elif case == "folder":
        (folder / "sub").mkdir()
    elif case == "read-only":
        (folder / "kept.json").write_text("keep")
        (folder / "kept.json").chmod(0o444)
    before = set(os.listdir(folder))
    out, err = io.StringIO(), io.StringIO()
    as_nobody = case == "read-only" and os.geteuid() == 0    # root may write any file: test as another user
    folder.chmod(0o777) if as_nobody else None
    with contextlib.chdir(folder), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        if as_nobody:
            os.setegid(65534)
            os.seteuid(65534)
        try:
            code = int(main(["plan", "in.toml", "--format", "json", "-o", target]))
        finally:
            if as_nobody:
                os.seteuid(0)
                os.setegid(0)
    TALLY.counts["output", code] += 1
    lines = err.getvalue().splitlines()
    must_refuse = case not in ("dev-null", "not-utf8") and not (case == "long" and length <= 255)
    assert code == (2 if must_refuse else 0), f"-o {case}: exit {code}: {err.getvalue()[-300:]}"
    assert code == 0 or (len(lines) == 1 and "-o" in lines[0] and "Traceback" not in err.getvalue()), lines
    assert scenario.read_text() == "[cluster]\nnum_nodes = 2\n"
    assert case != "read-only" or (folder / "kept.json").read_text() == "keep"
    after = set(os.listdir(folder))
    written = {os.path.basename(target)} if code == 0 and target != os.devnull else set()
    assert after <= before | written and not any(n.startswith(".") for n in after), sorted(after - before)
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)


SYNTHETIC_SPECS = ["synthetic:seed=-1", "synthetic:gpus=1:inf", "synthetic:gpus=1:nan", "synthetic:jobs=999999999999",
                   "synthetic:jobs=2000000", "synthetic:jobs=" + "9" * 5000, "synthetic:load=1e999",
                   "synthetic:load=-1", "synthetic:jobs=0", "synthetic:median_run=0", "synthetic:users=0",
                   "synthetic:jobs=100,load=50"]


def check_synthetic(folder: Path, spec: str, policy: str) -> None:
    """Synthetic trace specs out of range: exit 2 naming the spec, at once (MemoryError, NaN or minutes before)."""
    run("synthetic", ["schedule", spec, "--policy", policy, "--nodes", "4", "--format", "json", "-o", "out.json"],
        folder, names="synthetic")


def check_csv_cell(folder: Path, length: int, quoted: bool) -> None:
    """A GPU-trace CSV with one cell of ``length`` characters: past the csv module's 131,072 it is exit 2 naming
    the file and line 3 (an internal error before)."""
    cell = "x" * length
    (folder / "t.csv").write_text("job_id,gpu_num,submit_time,duration,user\n1,1,0,10,a\n2,1,5,20," +
                                  (f'"{cell}"' if quoted else cell) + "\n")
    code = run("csv", ["schedule", "t.csv", "--nodes", "2", "--format", "json", "-o", "out.json"], folder,
               names="t.csv")
    assert length <= 131_072 or code == 2, f"a cell of {length} characters: exit {code}"
    (folder / "t.csv").unlink()


SLOW_DISK = ("import os, sys, time\n"
             "rename = os.replace\n"
             "os.replace = lambda *names: (time.sleep(30), rename(*names))   # a disk slow to rename\n"
             "from clusterplan.cli.main import entry\n"
             "sys.argv[0] = 'clusterplan'\n"
             "entry()\n")


def check_signal(folder: Path, name: str, delay_s: float) -> None:
    """``report -o out.html`` (a process of its own) sent SIGTERM, SIGHUP or SIGINT after ``delay_s``, or
    (``delay_s`` < 0) on a disk slow to rename, the moment its temporary file is seen beside the target: no
    temporary is left, and a target present is whole. The second kind is counted as "caught"."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    command = ["-c", SLOW_DISK] if delay_s < 0 else ["-m", "clusterplan"]
    process = subprocess.Popen([sys.executable, *command, "report", "--format", "html", "-o", "out.html"],
                               cwd=folder, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    caught = False
    if delay_s < 0:
        while process.poll() is None and not caught:
            caught = any(entry.startswith(".out.html.") for entry in os.listdir(folder))
            time.sleep(0.01)
        assert caught, f"no temporary seen: {process.stderr.read()[-300:]!r}"
    else:
        time.sleep(delay_s)
    process.send_signal(getattr(signal, name))
    _, err = process.communicate(timeout=120)
    TALLY.counts["signals", f"{process.returncode}{' caught' if caught else ''}"] += 1
    left = sorted(os.listdir(folder))
    assert left in ([], ["out.html"]), f"{name} after {delay_s:.2f} s left {left}"
    assert not left or (folder / "out.html").read_text().rstrip().endswith("</html>")
    assert not caught or process.returncode == {"SIGTERM": 143, "SIGHUP": 129, "SIGINT": 130}[name], process.returncode


def check_server(examples: int, seed_value: int) -> None:
    """The server's campaign (benchmarks/fuzz_server.py, loopback only, bounded), where it exists."""
    script = BENCHMARKS / "fuzz_server.py"
    if not script.exists():
        print("  server: benchmarks/fuzz_server.py not present; the server's campaign is not run", flush=True)
        return
    done = subprocess.run([sys.executable, str(script), "--examples", str(min(examples, 300)), "--seed", str(seed_value),
                           "--seconds", "300"], capture_output=True, text=True, timeout=900)
    for line in done.stdout.splitlines():          # its counts per class and its summary, as it prints them
        print(f"  {line}", flush=True)
    assert done.returncode == 0, f"fuzz_server.py exit {done.returncode}: {done.stderr[-500:]}"


SURFACES = {
    "set": (check_set, (st.sampled_from(KEYS), set_values)),
    "config": (check_config, (st.sampled_from(sorted(CONFIG)), config_values)),
    "nccl": (check_nccl, (st.sampled_from(sorted(NCCL_FIELDS)),
                          st.one_of(st.sampled_from(NCCL_TOKENS), st.floats().map(repr),
                                    st.text(st.characters(codec="ascii", exclude_characters="\n\r\t "), max_size=6)),
                          st.sampled_from([0, 0, 0, 5, 30, 60, 90]))),
    "trace": (check_trace, (st.integers(0, 17), st.one_of(st.sampled_from(SWF_TOKENS), st.floats().map(repr)),
                            st.booleans())),
    "nesting": (check_nesting, (st.sampled_from(sorted(NEST_PLACES)),
                                st.one_of(st.sampled_from([1, 3, 63, 64, 65, 500, 100_000]), st.integers(1, 3000)),
                                st.sampled_from("[{"))),
    "digits": (check_digits, (st.sampled_from(["set", "scenario", "config"]),
                              st.one_of(st.sampled_from([1, 17, 100, 101, 4300, 4301, 5000]), st.integers(1, 6000)),
                              st.sampled_from(["", "-", "+"]))),
    "files": (check_files, (st.sampled_from(sorted(FILE_PLACES)),
                            st.sampled_from(["/dev/zero", "/dev/urandom", "/dev/null", "fifo", "folder", "socket",
                                             "bomb"]))),
    "output": (check_output, (st.sampled_from(OUTPUT_CASES), st.integers(200, 400), st.binary(min_size=1, max_size=6))),
    "synthetic": (check_synthetic, (st.sampled_from(SYNTHETIC_SPECS), st.sampled_from(["fifo", "easy", "conservative"]))),
    "csv": (check_csv_cell, (st.one_of(st.sampled_from([131_072, 131_073, 400_000]), st.integers(1, 300_000)),
                             st.booleans())),
    "signals": (check_signal, (st.sampled_from(["SIGTERM", "SIGHUP", "SIGINT"]),
                               st.one_of(st.just(-1.0), st.floats(0.2, 4.0)))),
}
SUBPROCESS_SURFACES = {"signals": 20}     # each example is a process of its own: at most this many


def campaign(surface: str, examples: int, seed_value: int = 19) -> None:
    """Run ``examples`` examples of ``surface``; an AssertionError (shrunk by hypothesis) when one breaks the contract."""
    check, strategies = SURFACES[surface]
    examples = min(examples, SUBPROCESS_SURFACES.get(surface, examples))

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
    parser.add_argument("--surfaces", default=",".join([*SURFACES, "server"]))
    args = parser.parse_args()
    start = time.perf_counter()
    for surface in args.surfaces.split(","):
        if surface == "server":
            check_server(args.examples, args.seed)
        else:
            campaign(surface, args.examples, args.seed)
        if any(name == surface for name, _ in TALLY.counts):
            print(f"  {TALLY.surface(surface)}", flush=True)
    print(f"fuzz campaign, seed {args.seed}, {time.perf_counter() - start:.0f} s: {TALLY.line()}")
    print("every example: exit 0, 2 or 3, no traceback, an exit 2 one line naming its key or file, nothing left behind"
          " (signals: the process ends by its signal or its exit code, no temporary left, a target present is whole)")


if __name__ == "__main__":
    main_campaign()
