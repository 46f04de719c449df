"""Golden outputs: every documented command prints what it printed when the golden file was recorded."""

import os
import shlex
from pathlib import Path

import pytest

from clusterplan.cli.main import main

ROOT = Path(__file__).parents[2]
GOLDEN = Path(__file__).parent / "golden"
COMMANDS = [line.split(None, 1) for line in (GOLDEN / "commands.txt").read_text().splitlines()
            if line.strip() and not line.startswith("#")]


@pytest.mark.parametrize(("name", "command"), COMMANDS, ids=[name for name, _ in COMMANDS])
def test_output_is_unchanged(name, command, capsys, monkeypatch):
    """The command exits 0 and prints its golden output, byte for byte."""
    monkeypatch.chdir(ROOT)
    code = main(shlex.split(command))
    out, err = capsys.readouterr()
    assert code == 0, err
    path = GOLDEN / f"{name}.out"
    if os.environ.get("CLUSTERPLAN_GOLDEN") == "write":
        path.write_bytes(out.encode())
    assert out == path.read_bytes().decode()
