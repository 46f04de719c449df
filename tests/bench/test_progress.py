"""The one progress rule: stderr only, a terminal only, never with --format json, rank 0 only."""

import argparse
import io
import json
import sys

import pytest

from clusterplan.cli.main import main
from clusterplan.cli.output import progress, show_progress


class Terminal(io.StringIO):
    def isatty(self):
        return True


def args(**values) -> argparse.Namespace:
    return argparse.Namespace(**values)


@pytest.mark.parametrize("stderr_terminal, values, rank, shown", [
    (True, dict(format="table"), 0, True),
    (True, dict(format="html", output="r.html"), 0, True),
    (True, dict(), 0, True),                     # commands without --format
    (True, dict(format="json"), 0, False),       # machine-read
    (False, dict(format="table"), 0, False),     # nobody watches stderr
    (True, dict(format="table"), 1, False),      # only rank 0 of a distributed benchmark
])
def test_the_rule(monkeypatch, stderr_terminal, values, rank, shown):
    """Shown exactly when stderr is a terminal, the format is not json and the rank is 0; stdout does not matter."""
    monkeypatch.setattr(sys, "stderr", Terminal() if stderr_terminal else io.StringIO())
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    assert show_progress(args(**values), rank=rank) is shown


def test_off_display_takes_every_call_and_writes_nothing(monkeypatch, capsys):
    """Where the rule says no, the display yielded accepts update, say and advance and prints nothing."""
    with progress(args(format="json"), "work", total=3) as shown:
        shown.update(1, 3, "one")
        shown.say("two")
        shown.advance(1)
    assert capsys.readouterr() == ("", "")


def test_bar_and_spinner_on_a_terminal(monkeypatch):
    """On a terminal: the description and the step on stderr, nothing on stdout, erased at the end."""
    stderr, stdout = Terminal(), io.StringIO()
    monkeypatch.setattr(sys, "stderr", stderr)
    monkeypatch.setattr(sys, "stdout", stdout)
    with progress(args(format="table"), "work") as shown:
        shown.say("warming up")          # a spinner: no total yet
        shown.update(1, 4, "step two")   # a bar
        shown.advance(1)
    text = stderr.getvalue()
    assert "work: step two" in text and stdout.getvalue() == ""


def test_bench_gemm_progress_goes_to_stderr_only(monkeypatch, capsys):
    """bench gemm with stderr a terminal: quiet with --format json; else the bar on stderr, none on stdout."""
    pytest.importorskip("torch")
    argv = ["bench", "gemm", "--device", "cpu", "--sizes", "32", "--dtype", "fp32", "-n", "1", "--format", "json"]
    monkeypatch.setattr(sys, "stderr", Terminal())
    assert main(argv) == 0
    assert sys.stderr.getvalue() == ""          # --format json: quiet even on a terminal
    assert json.loads(capsys.readouterr().out)["rows"][0]["shape"] == "square-32"
    monkeypatch.setattr(sys, "stderr", Terminal())
    assert main(argv[:-2]) == 0
    out = capsys.readouterr().out
    assert "gemm: done" in sys.stderr.getvalue()
    assert out.startswith("# clusterplan bench gemm: CPU") and "\x1b" not in out
