"""`clusterplan collectives`: nccl-tests-style predictions, JSON and bad input."""

import json

import pytest

from clusterplan.cli.main import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_table_is_nccl_tests_shaped(capsys):
    """Comment header, one row per size with the nccl-tests columns, algorithm and protocol, avg footer."""
    code, out, err = run(capsys, "collectives", "-b", "1K", "-e", "1M", "-f", "4", "--gpus", "16")
    assert code == 0 and err == ""
    lines = out.splitlines()
    rows = [line.split() for line in lines if line and not line.startswith("#")]
    assert [int(r[0]) for r in rows] == [1024, 4096, 16384, 65536, 262144, 1048576]
    assert all(len(r) == 10 and r[2] == "float" and r[3] == "sum" for r in rows)
    assert any(line.startswith("# Avg bus bandwidth") for line in lines)
    assert "16 x h100-sxm (2 nodes x 8)" in lines[0]


def test_json_rows_and_group(capsys):
    """JSON: schema, group, rows with busbw = algbw x 2(n-1)/n."""
    code, out, _ = run(capsys, "collectives", "--format", "json", "-b", "8", "-e", "1G", "-f", "8", "--gpus", "8",
                       "--dtype", "bfloat16")
    doc = json.loads(out)
    assert code == 0 and doc["schema"] == "clusterplan.collectives/1"
    assert doc["group"]["num_gpus"] == 8 and doc["group"]["num_nodes"] == 1
    for row in doc["rows"]:
        assert set(row) >= {"size_bytes", "count", "dtype", "time_s", "algbw_GBps", "busbw_GBps",
                            "algorithm", "protocol"}
        assert row["dtype"] == "bfloat16" and row["count"] == row["size_bytes"] // 2
        assert row["busbw_GBps"] == pytest.approx(row["algbw_GBps"] * 1.75)


def test_all_gather_counts_per_rank_and_sub_groups(capsys):
    """all_gather prints per-rank counts; --gpus 128 spans the cluster's 16 nodes."""
    code, out, _ = run(capsys, "collectives", "--op", "all_gather", "--format", "json", "-b", "1M", "-e", "1M",
                       "--gpus", "128")
    doc = json.loads(out)
    assert doc["rows"][0]["count"] == 2**20 // 4 // 128 and doc["group"]["num_nodes"] == 16


def test_scenario_changes_the_prediction(capsys):
    """A 2:1 fabric lowers the 128-GPU large all_gather busbw."""
    def busbw(*extra):
        code, out, _ = run(capsys, "collectives", "--op", "all_gather", "--format", "json", "-b", "1G", "-e", "1G",
                           "--set", "network.tiers=0", *extra)
        return json.loads(out)["rows"][0]["busbw_GBps"]
    assert busbw("--set", "network.oversubscription=2", "--set", "cluster.num_nodes=64") < \
        busbw("--set", "cluster.num_nodes=64")


@pytest.mark.parametrize("argv, message", [
    (["--op", "allreduce"], "invalid choice: 'allreduce'"),
    (["-b", "0"], "0 < min"),
    (["-b", "1M", "-e", "1K"], "0 < min"),
    (["-b", "lots"], "cannot read 'lots' as a size"),
    (["-e", "200G"], "does not fit the 80 GiB"),
    (["--gpus", "256"], "--gpus: must be between 1 and the cluster's 128 GPUs"),
    (["--gpus", "12"], "12 GPUs do not fill whole nodes of 8"),
    (["-f", "1"], "step factor must be > 1"),
    (["--set", "network.fabric=ib-hdr"], "unknown fabric id 'ib-hdr'"),
])
def test_bad_input_is_one_line_exit_2(capsys, argv, message):
    """Unknown op, sizes out of range, too many GPUs: one line, exit 2."""
    code, out, err = run(capsys, "collectives", *argv)
    assert code == 2 and out == "" and message in err and len(err.strip().splitlines()) == 1


P4DE_LOG = "tests/unit/bench/data/p4de_all_reduce.log"
P4DE_LIKE = ["--set", "cluster.gpu=a100-80gb-sxm", "--set", "network.fabric=roce-100g",
             "--set", "network.nics_per_node=4", "--gpus", "16", "-b", "8", "-e", "2G"]


def test_measured_log_sits_beside_the_prediction(capsys):
    """--measured with an nccl-tests log: every size matched, with the error per row and overall."""
    from pathlib import Path

    log = str(Path(__file__).parents[2] / P4DE_LOG)
    code, out, _ = run(capsys, "collectives", "--format", "json", "--measured", log, *P4DE_LIKE)
    doc = json.loads(out)
    assert code == 0 and doc["measured"]["rows"] > 20
    big = next(r for r in doc["rows"] if r["size_bytes"] == 2**31)
    assert big["measured"]["busbw_GBps"] == pytest.approx(78.33)
    assert big["error"] == pytest.approx((big["busbw_GBps"] - 78.33) / 78.33)
    code, out, _ = run(capsys, "collectives", "--measured", log, *P4DE_LIKE)
    assert "measured" in out and "# Measured rows:" in out


def test_measured_bench_json_is_read(capsys, tmp_path):
    """--measured also takes the benchmark's clusterplan.bench/1 rows."""
    bench = {"schema": "clusterplan.bench/1", "rows": [
        {"size_bytes": 1024, "out_of_place": {"time_s": 1e-5, "algbw_GBps": 0.1, "busbw_GBps": 0.2}}]}
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(bench))
    code, out, _ = run(capsys, "collectives", "--format", "json", "-b", "1K", "-e", "1K", "--measured", str(path))
    assert code == 0 and json.loads(out)["rows"][0]["measured"]["busbw_GBps"] == 0.2


def test_malformed_measured_log_names_its_line(capsys, tmp_path):
    """A broken nccl-tests log is bad input: one line with file:line, exit 2."""
    path = tmp_path / "run.log"
    path.write_text("# nccl-tests\n#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n"
                    "    8    2  float   sum   -1\n")
    code, out, err = run(capsys, "collectives", "--measured", str(path))
    assert code == 2 and out == "" and f"{path}:3:" in err and len(err.strip().splitlines()) == 1


def test_calibration_makes_the_prediction_match_the_run(capsys, tmp_path):
    """calibrate a log, then collectives --calibration on the same group: error falls from >20 % to <10 %."""
    from pathlib import Path

    log = str(Path(__file__).parents[2] / P4DE_LOG)
    target = tmp_path / "calibration.toml"
    code, out, _ = run(capsys, "calibrate", log, "-o", str(target))
    assert code == 0 and "all_reduce on 16 ranks" in out and target.exists()

    def mean_error(*extra):
        code, out, _ = run(capsys, "collectives", "--format", "json", "--measured", log, *P4DE_LIKE, *extra)
        assert code == 0
        return json.loads(out)["measured"]["mean_abs_error"]
    before, after = mean_error(), mean_error("--calibration", str(target))
    assert before > 0.2 and after < 0.1 and after < before


def test_calibration_for_another_group_falls_back_to_the_model(capsys, tmp_path):
    """A calibration without this (op, ranks) says so on stderr and predicts with the model."""
    from pathlib import Path

    target = tmp_path / "c.toml"
    run(capsys, "calibrate", str(Path(__file__).parents[2] / P4DE_LOG), "-o", str(target))
    code, out, err = run(capsys, "collectives", "--calibration", str(target), "--gpus", "8", "-b", "1M", "-e", "1M")
    assert code == 0 and "no fit for all_reduce on 8 ranks" in err and "calibrated" not in out


@pytest.mark.parametrize("short, long", [("bf16", "bfloat16"), ("fp16", "half"), ("fp32", "float")])
def test_dtypes_take_their_short_names(capsys, short, long):
    """`collectives --dtype bf16` was rejected; the short names are the nccl-tests types (issue 14)."""
    argv = ["collectives", "-b", "1M", "-e", "4M", "--format", "json", "--dtype"]
    assert main([*argv, short]) == 0
    by_short = json.loads(capsys.readouterr().out)
    assert main([*argv, long]) == 0
    assert by_short["dtype"] == long and by_short["rows"] == json.loads(capsys.readouterr().out)["rows"]


def test_fp8_collectives_move_one_byte_per_element(capsys):
    """--dtype fp8 prices one-byte elements: the count doubles over bf16's at the same size."""
    argv = ["collectives", "-b", "1M", "-e", "1M", "--format", "json", "--dtype"]
    assert main([*argv, "fp8"]) == 0
    fp8 = json.loads(capsys.readouterr().out)["rows"][0]
    assert main([*argv, "bf16"]) == 0
    assert fp8["count"] == 2 * json.loads(capsys.readouterr().out)["rows"][0]["count"]


def test_a_log_cut_inside_its_last_row_is_read_alike_by_every_command(capsys, tmp_path):
    """bench parse, calibrate, collectives and report --measured read one reader: the cut row left out, counted
    in the document and named on stderr with its line (issue 19 item 6)."""
    from pathlib import Path

    text = (Path(__file__).parents[2] / P4DE_LOG).read_text()
    lines = text.splitlines()
    last = max(i for i, line in enumerate(lines) if line.split()[1:2] == ["2147483648"])
    path = tmp_path / "cut.log"
    path.write_text("\n".join(lines[:last] + [lines[last][:len(lines[last]) // 2]]))
    note = f"clusterplan: warning: {path}:{last + 1}: the log ends inside this row (1 truncated row left out; 28 rows read)"
    code, out, err = run(capsys, "bench", "parse", str(path))
    assert code == 0 and err.strip() == note
    assert json.loads(out)["num_truncated_rows"] == 1 and len(json.loads(out)["rows"]) == 28
    code, out, err = run(capsys, "calibrate", str(path))
    assert code == 0 and err.splitlines()[0] == note
    code, out, err = run(capsys, "collectives", "--format", "json", "--measured", str(path), *P4DE_LIKE)
    assert code == 0 and err.strip() == note and json.loads(out)["measured"]["rows"] > 20
    scenario = str(Path(__file__).parents[2] / "examples" / "reference-128x-h100.toml")
    code, out, err = run(capsys, "report", scenario, "--measured", str(path), "--samples", "200", "--format", "json")
    assert code == 0 and err.strip() == note
