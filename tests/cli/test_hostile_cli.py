"""Issue 31 item 4: each hostile input to the CLI is one line naming the key, flag, file or line, exit 2, at once."""

import gzip
import os
import subprocess
import sys
from pathlib import Path

import pytest

from clusterplan.cli.main import main

SRC = Path(__file__).parents[2] / "src"


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def refused(capsys, *argv) -> str:
    """The one error line of a command that must refuse its input (exit 2, nothing on stdout)."""
    code, out, err = run(capsys, *argv)
    assert (code, out, err.count("\n")) == (2, "", 1), (code, out, err)
    assert err.startswith("clusterplan: error: ")
    return err.removeprefix("clusterplan: error: ").rstrip("\n")


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("deep.toml").write_text("[cluster]\nnum_nodes = " + "[" * 500 + "]" * 500 + "\n")
    Path("digits.toml").write_text("[cluster]\n\nnum_nodes = " + "7" * 5000 + "\n")
    Path("config.json").write_text('{"model_type": "llama",\n "hidden_size": ' + "1" * 5000 + "}")
    Path("deep.json").write_text('{"rows": ' + "[" * 100_000 + "]" * 100_000 + "}")
    Path("bomb.json").write_bytes(gzip.compress(b"\0" * 2**20) * 70)
    Path("bomb.swf.gz").write_bytes(gzip.compress(b"\0" * 2**20) * 513)
    Path("bare.toml").write_text("[workload]\nmodel = llama3-70b\n")
    return tmp_path


@pytest.mark.parametrize("argv, line", [
    (["plan", "--set", "cluster.num_nodes=" + "[" * 500], "--set: cluster.num_nodes: arrays and tables nested more than 64 deep"),
    (["plan", "deep.toml"], "deep.toml:2: arrays and tables nested more than 64 deep"),
    (["plan", "digits.toml"], "digits.toml:3: a number of 5000 digits; at most 100"),
    (["plan", "--set", "cluster.num_nodes=" + "1" * 5000], "--set: cluster.num_nodes: a number of 5000 digits; at most 100"),
    (["train", "--set", 'workload.model_config="config.json"'],
     "config.json:2: a number of 5000 digits; at most 100"),
    (["calibrate", "deep.json"], "deep.json:1: arrays and tables nested more than 64 deep"),
    (["report", "--measured", "deep.json", "-o", "out.html"], "deep.json:1: arrays and tables nested more than 64 deep"),
    (["report", "--set", "about.name=\udcff", "-o", "out.html"], r"--set: about.name: not UTF-8 text: \xff"),
    (["schedule", "/dev/zero"], "/dev/zero: cannot read trace: a character device, not a regular file"),
    (["schedule", "/dev/urandom"], "/dev/urandom: cannot read trace: a character device, not a regular file"),
    (["schedule", "bomb.swf.gz"], "bomb.swf.gz: cannot read trace: more than 512 MiB once decompressed"),
    (["train", "--model-config", "/dev/zero"], "--model-config: cannot read /dev/zero: a character device, not a regular file"),
    (["train", "--model-config", "bomb.json"], "--model-config: cannot read bomb.json: more than 64 MiB once decompressed"),
    (["plan", "/dev/urandom"], "/dev/urandom: cannot read scenario: a character device, not a regular file"),
    (["plan", "bare.toml"], 'bare.toml:2: workload.model = llama3-70b: strings need quotes in TOML: "llama3-70b"'),
])
def test_hostile_input_is_one_line_exit_2(capsys, files, argv, line):
    assert refused(capsys, *argv) == line
    assert not Path("out.html").exists()


def test_output_path_errors_are_named(capsys, files):
    """-o a symlink loop, a 300-character name: one line naming -o and the file (exit 1 before)."""
    os.symlink("loop-b", "loop-a")
    os.symlink("loop-a", "loop-b")
    assert refused(capsys, "plan", "-o", "loop-a") == "loop-a: -o: cannot write output: Too many levels of symbolic links"
    long = "n" * 300
    assert refused(capsys, "plan", "-o", long) == f"{long}: -o: cannot write output: File name too long"


def test_an_unwritable_folder_is_named(capsys):
    """-o into a folder the user may not write (PermissionError, exit 1 before); as root, run as nobody."""
    import tempfile
    with tempfile.TemporaryDirectory() as folder:
        os.chmod(folder, 0o555)
        as_root = os.geteuid() == 0
        if as_root:
            os.setegid(65534)
            os.seteuid(65534)
        try:
            line = refused(capsys, "catalog", "-o", f"{folder}/out.txt")
        finally:
            if as_root:
                os.seteuid(0)
                os.setegid(0)
        assert line == f"{folder}/out.txt: -o: cannot write output: Permission denied"
        assert os.listdir(folder) == []


def test_plan_does_not_write_over_its_own_input(capsys, files):
    """`plan in.toml -o in.toml` overwrote the scenario (issue 31 item 5)."""
    Path("in.toml").write_text("[cluster]\nnum_nodes = 2\n")
    assert refused(capsys, "plan", "in.toml", "-o", "in.toml") == \
        "in.toml: -o: is one of this command's inputs; write the output to another file"
    assert Path("in.toml").read_text() == "[cluster]\nnum_nodes = 2\n"
    code, out, err = run(capsys, "plan", "in.toml", "-o", "out.txt")
    assert code == 0 and Path("out.txt").stat().st_size > 0


def cli(*argv, cwd) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    return subprocess.run([sys.executable, "-m", "clusterplan", *argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=60)


def test_a_fifo_is_refused_not_waited_on(files):
    """A trace or model config that is a FIFO hung forever waiting for a writer; now one line at once."""
    os.mkfifo(files / "pipe")
    done = cli("schedule", "pipe", cwd=files)
    assert (done.returncode, done.stdout, done.stderr) == \
        (2, "", "clusterplan: error: pipe: cannot read trace: a FIFO, not a regular file\n")
    done = cli("plan", "--set", 'workload.model_config="pipe"', cwd=files)
    assert done.returncode == 2 and done.stderr.endswith("cannot read pipe: a FIFO, not a regular file\n")


SLOW_RENAME = ("import os, sys, time\n"
               "rename = os.replace\n"
               "os.replace = lambda *names: (time.sleep(60), rename(*names))   # a disk slow to rename\n"
               "from clusterplan.cli.main import entry\n"
               "entry()\n")


@pytest.mark.parametrize("name, code", [("SIGTERM", 143), ("SIGHUP", 129), ("SIGINT", 130)])
def test_a_signal_during_the_write_leaves_no_temporary(tmp_path, name, code):
    """`plan -o out.json` signalled while its temporary exists (a slow rename holds it there): the temporary is
    removed and the old file kept (issue 31: SIGTERM and SIGHUP left `.out.json.XXXX`)."""
    import signal
    import time
    (tmp_path / "out.json").write_text("old")
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    process = subprocess.Popen([sys.executable, "-c", SLOW_RENAME, "plan", "--format", "json", "-o", "out.json"],
                               cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not any(entry.startswith(".out.json.") for entry in os.listdir(tmp_path)):
        assert process.poll() is None and time.monotonic() < deadline, process.stderr.read()
        time.sleep(0.01)
    process.send_signal(getattr(signal, name))
    assert process.wait(timeout=60) == code
    assert os.listdir(tmp_path) == ["out.json"] and (tmp_path / "out.json").read_text() == "old"
