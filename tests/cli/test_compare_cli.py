"""`clusterplan compare SCENARIO --vary KEY=V1,V2`: what-ifs without files (issue 29), in process."""

import json
from pathlib import Path

import pytest

from clusterplan.cli.main import main

REFERENCE = str(Path(__file__).parents[2] / "examples" / "reference-128x-h100.toml")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_vary_is_one_column_per_value_each_as_plan_set_prints_it(capsys):
    """Each column is the scenario with the key set: its TCO is `plan --set KEY=V`'s; labels, sources and the
    varied keys are in the document."""
    code, out, err = run(capsys, "compare", REFERENCE, "--vary", "network.fabric=ib-ndr400,roce-400g",
                         "--format", "json")
    assert code == 0 and err == ""
    doc = json.loads(out)
    assert doc["labels"] == ["fabric=ib-ndr400", "fabric=roce-400g"] and doc["baseline"] == "fabric=ib-ndr400"
    assert doc["varied"] == [{"key": "network.fabric", "values": ["ib-ndr400", "roce-400g"]}]
    assert doc["sources"][1] == f"{REFERENCE} --set network.fabric=roce-400g"
    assert [s["network"]["fabric"] for s in doc["scenarios"]] == ["ib-ndr400", "roce-400g"]
    tco = next(row for row in doc["headlines"] if row["key"] == "cost.tco_usd")
    for value, fabric in zip(tco["values"], ("ib-ndr400", "roce-400g")):
        code, out, _ = run(capsys, "plan", REFERENCE, "--set", f"network.fabric={fabric}", "--format", "json")
        assert value == json.loads(out)["cost"]["tco_usd"]
    assert tco["deltas"][1] == tco["values"][1] - tco["values"][0] and tco["changed"]


def test_vary_grid_and_set_apply_together(capsys):
    """Two --vary make every combination (first key slowest); --set applies to every column alike."""
    code, out, _ = run(capsys, "compare", "--vary", "cluster.num_gpus=64,256", "--vary", "finance.years=3,5",
                       "--set", "network.fabric=roce-400g", "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["labels"] == ["num_gpus=64 years=3", "num_gpus=64 years=5",
                                           "num_gpus=256 years=3", "num_gpus=256 years=5"]
    assert [(s["cluster"]["num_nodes"], s["finance"]["years"], s["network"]["fabric"]) for s in doc["scenarios"]] \
        == [(8, 3, "roce-400g"), (8, 5, "roce-400g"), (32, 3, "roce-400g"), (32, 5, "roce-400g")]
    assert doc["sources"][0] == ("reference scenario --set network.fabric=roce-400g --set cluster.num_gpus=64 "
                                 "--set finance.years=3")


def test_many_columns_print_each_delta_under_its_value_four_to_a_table(capsys):
    """Five scenarios: two tables of headline figures (1-4, 5-5), each delta under its value, nothing cut."""
    code, out, _ = run(capsys, "compare", "--vary", "finance.years=1,2,3,4,5")
    assert code == 0 and out.startswith("clusterplan compare: 5 scenarios, deltas against years=1")
    assert "Headline figures (1-4 of 5)" in out and "Headline figures (5-5 of 5)" in out
    assert "Δ +" in out and "…" not in out and "Δ years=2" not in out
    assert max(len(line) for line in out.splitlines()) <= 110


def test_the_same_file_twice_says_set_changes_every_side(capsys):
    """`compare A A --set k=v` changes both sides: the figures agree, and a note points to --vary."""
    code, out, err = run(capsys, "compare", REFERENCE, REFERENCE, "--set", "finance.years=5")
    assert code == 0 and "unchanged figures folded" in out
    assert err == ("clusterplan: note: the scenarios plan alike; --set changes every one of them "
                   "(one key across values: --vary SECTION.KEY=V1,V2)\n")


@pytest.mark.parametrize("argv, message", [
    (["--vary", "network.fabric=ib-ndr400"],
     "--vary network.fabric=ib-ndr400: needs two or more values to compare, got one (ib-ndr400)"),
    (["--vary", "finance.years=" + ",".join(str(n) for n in range(1, 18))], ": 17 values, at most 16"),
    (["--vary", "network.fabrik=ib-ndr400,roce-400g"],
     "--vary network.fabrik=ib-ndr400,roce-400g: network.fabrik: unknown key (did you mean 'fabric'?)"),
    (["--vary", "netwrk.fabric=a,b"], "--vary netwrk.fabric=a,b: netwrk: unknown section"),
    (["--vary", "network.fabric=ib-ndr400,ib-xdr"],
     "--vary network.fabric=ib-ndr400,ib-xdr: network.fabric: unknown fabric id 'ib-xdr'"),
    (["--vary", "finance.years=3,40"], "--vary finance.years=3,40: finance.years: must be between 1 and 30"),
    (["--vary", "finance.years=3,4", "--set", "finance.years=5"], "finance.years: is both --set and --vary"),
    (["--vary", "finance.years=1,2,3,4,5", "--vary", "network.fabric=a,b,c,d"],
     "--vary: 5 x 4 = 20 scenarios, at most 16"),
    ([REFERENCE, "--vary", "finance.years=3,4"], "--vary: varies one scenario, got 2 files"),
])
def test_bad_vary_is_one_line_exit_2_and_nothing_planned(capsys, argv, message):
    """A list of one value or over 16, an unknown key or section, a bad value: one line naming it, exit 2."""
    code, out, err = run(capsys, "compare", REFERENCE, *argv)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert err.startswith("clusterplan: error: ") and message in err, err
