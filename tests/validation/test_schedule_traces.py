"""Every policy on the Lublin, NASA and HPC2N traces prints today's figures: the tables of docs/scheduling.md,
line for line (issue 19 item 9: bounded backfill depth and the fast SWF reader must not change a result).

The tables are printed by benchmarks/schedule_traces.py's ``table``; the test runs it for the three SWF traces,
on their own machines and on the reference cluster, and compares its lines with the ones the document shows.
"""

import contextlib
import io
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
schedule_traces = pytest.importorskip("schedule_traces")

from clusterplan.sched.traces import read_trace  # noqa: E402

SWF_TRACES = ("lublin_256.swf", "NASA-iPSC-1993-3.1-cln.swf.gz", "hpc2n-alea-subset.swf")
# the shared data beside this checkout (as the benchmark reads it), or beside the folder of a worktree
TRACES_DIR = next((folder / "shared" / "data" / "traces" for folder in (ROOT.parent, ROOT.parent.parent)
                   if all((folder / "shared" / "data" / "traces" / name).exists() for name in SWF_TRACES)), None)
if TRACES_DIR is None:
    pytest.skip("shared traces not beside this checkout", allow_module_level=True)


def documented_tables() -> dict[str, list[str]]:
    """docs/scheduling.md's result tables by their first line (trace and machine)."""
    text = (ROOT / "docs" / "scheduling.md").read_text()
    block = text.split("## Results on every trace", 1)[1].split("```", 2)[1]
    tables: dict[str, list[str]] = {}
    for chunk in block.strip().split("\n\n"):
        lines = [line for line in chunk.splitlines() if not line.startswith("$ ")]   # the command shown
        tables[lines[0]] = lines
    return tables


@pytest.mark.parametrize("name", SWF_TRACES)
def test_every_policy_replays_the_documented_figures(name):
    """Utilization, mean/median/p95 wait, bounded slowdown and makespan of fifo, easy, conservative and fair-share,
    as printed, on the trace's own machine and on the reference cluster."""
    trace = read_trace(TRACES_DIR / name)
    own, where = schedule_traces.TRACES[name]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        schedule_traces.table(name, trace, own, where, own=True)
        schedule_traces.table(name, trace, schedule_traces.REFERENCE, "the reference cluster", own=False)
    documented = documented_tables()
    for chunk in printed.getvalue().strip().split("\n\n"):
        lines = chunk.splitlines()
        assert lines[0] in documented, lines[0]
        assert [line.rstrip() for line in lines] == [line.rstrip() for line in documented[lines[0]]]
