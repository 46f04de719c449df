"""What a buyer sees from 8 to 32,768 GPUs: the plan runs, numbers read with separators (issue 18 items 2, 10, 13)."""

import html
import json
import re

import pytest

from clusterplan.catalog import load_catalog
from clusterplan.cli.main import main

SIZES_NODES = (1, 16, 128, 2048, 4096)   # 8, 128, 1,024, 16,384 and 32,768 GPUs
BARE_LARGE = re.compile(r"(?<![\w.,$/#-])\d{5,}(?![\d\w])")   # 10000 and more written without separators
SCIENTIFIC = re.compile(r"\d\.\d+e[+-]\d")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("nodes", SIZES_NODES)
def test_plan_runs_at_every_size_and_reads_with_separators(capsys, nodes):
    """The reference at 8..32,768 GPUs plans (tiers chosen, exit 0) and never prints 1.638e+04 or 16384."""
    code, out, err = run(capsys, "plan", "--set", f"cluster.num_nodes={nodes}")
    assert code == 0, err
    assert not SCIENTIFIC.search(out), SCIENTIFIC.search(out)
    assert not BARE_LARGE.search(out), out[max(0, BARE_LARGE.search(out).start() - 80):][:160]
    assert f"{nodes * 8:,} x h100-sxm" in out


def test_tiers_grow_with_the_cluster_unless_set(capsys):
    """Automatic tiers: 1 at 64 NICs (one leaf's down-ports), 2 at 128 and 1,024, 3 at 16,384; an explicit tiers = 2
    stays binding (exit 2)."""
    tiers = {}
    for nodes in (8, 16, 128, 2048):
        code, out, _ = run(capsys, "plan", "--set", f"cluster.num_nodes={nodes}", "--format", "json")
        assert code == 0
        tiers[nodes] = json.loads(out)["design"]["fabric"]["tiers"]
    assert tiers == {8: 1, 16: 2, 128: 2, 2048: 3}
    code, _, err = run(capsys, "plan", "--set", "cluster.num_nodes=2048", "--set", "network.tiers=2")
    assert code == 2 and err.count("\n") == 1 and "network.tiers" in err and "16384" not in err


def test_html_report_at_16384_gpus_reads_with_separators(tmp_path):
    """The HTML report's text at 16,384 GPUs has no scientific notation and no bare five-digit quantity."""
    out = tmp_path / "r.html"
    assert main(["report", "--set", "cluster.num_nodes=2048", "--samples", "200", "-o", str(out)]) == 0
    text = html.unescape(re.sub(r"<[^>]+>", " ", out.read_text()))
    assert not SCIENTIFIC.search(text), SCIENTIFIC.search(text)
    bare = BARE_LARGE.search(text)
    assert bare is None, text[max(0, bare.start() - 80):bare.end() + 40]
    assert "16,384" in text


def test_catalog_cloud_lists_every_id_whole(capsys):
    """`catalog --family cloud` prints every offer id in full, however long (no "…")."""
    code, out, _ = run(capsys, "catalog", "--family", "cloud")
    assert code == 0 and "…" not in out
    lines = out.splitlines()
    for entry_id in load_catalog().families["cloud"]:
        assert any(line.startswith(entry_id + " ") for line in lines), entry_id


def test_unknown_family_lists_the_valid_ones(capsys):
    """An unknown --family is one line naming the flag and every family (exit 2)."""
    code, out, err = run(capsys, "catalog", "--family", "gpu-servers")
    assert code == 2 and out == "" and err.count("\n") == 1 and "--family" in err
    for family in load_catalog().families:
        assert family in err
