"""cli/output.py: -o writes the whole output or nothing, leaves no temporary behind, keeps modes and devices."""

import os
import stat
import threading
from pathlib import Path

import pytest

from clusterplan.cli.output import emit
from clusterplan.errors import ConfigError


def write(text: str, path) -> None:
    emit(lambda stream: stream.write(text), str(path))


def leftovers(folder) -> list[str]:
    return sorted(name for name in os.listdir(folder) if name.startswith("."))


def test_a_directory_is_refused_and_nothing_is_left_behind(tmp_path):
    """-o DIR: one error naming -o; no .NAME.xxxx temporary in the parent (regression, issue 19 item 10)."""
    (tmp_path / "out").mkdir()
    with pytest.raises(ConfigError, match="-o"):
        write("data", tmp_path / "out")
    assert leftovers(tmp_path) == []


def test_a_failed_write_removes_its_temporary(tmp_path, monkeypatch):
    """A failure after the temporary exists (here the rename) removes it and leaves the old file whole."""
    target = tmp_path / "plan.json"
    target.write_text("old")

    def fail(*_):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(ConfigError, match="No space left on device"):
        write("new", target)
    assert target.read_text() == "old" and leftovers(tmp_path) == []


def test_modes_follow_the_umask_and_an_existing_file_keeps_its_own(tmp_path):
    """A new file gets 0666 & ~umask; an existing 0640 file stays 0640 after it is replaced."""
    old = os.umask(0o027)
    try:
        write("a", tmp_path / "new.txt")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o640
    kept = tmp_path / "kept.txt"
    kept.write_text("x")
    kept.chmod(0o604)
    write("b", kept)
    assert stat.S_IMODE(kept.stat().st_mode) == 0o604 and kept.read_text() == "b"


def test_devices_are_written_through_and_symlinks_followed(tmp_path):
    """-o FIFO (like -o /dev/null, a special file) is written through and stays one; -o LINK writes the link's
    target and keeps the link."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()))
    reader.start()
    write("through the pipe", fifo)
    reader.join(timeout=10)
    assert received == ["through the pipe"] and stat.S_ISFIFO(os.stat(fifo).st_mode)
    target = tmp_path / "real.txt"
    target.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    write("new", link)
    assert link.is_symlink() and target.read_text() == "new"


def test_symlink_loop_long_name_and_missing_folder_are_named(tmp_path):
    """Issue 31: -o LOOP was a RuntimeError and -o <300 characters> an OSError, both exit 1."""
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    for path, reason in ((tmp_path / "a", "Too many levels of symbolic links"), (tmp_path / ("n" * 300), "File name too long"),
                         (tmp_path / "none" / "x.json", "No such file or directory")):
        with pytest.raises(ConfigError) as error:
            write("x", path)
        assert str(error.value) == f"{path}: -o: cannot write output: {reason}"
    assert leftovers(tmp_path) == []


def test_a_250_character_name_is_written():
    """The temporary's name is cut so that it stays within 255 bytes when the target's name does."""
    import tempfile
    with tempfile.TemporaryDirectory() as folder:
        write("x", os.path.join(folder, "n" * 250))
        assert os.listdir(folder) == ["n" * 250]


def test_an_input_is_not_written_over(tmp_path):
    """`plan in.toml -o in.toml` (or a hard link or symlink to it) is refused and the input kept."""
    from clusterplan.files import forget_inputs, read_input
    source = tmp_path / "in.toml"
    source.write_text("[cluster]\n")
    os.link(source, tmp_path / "hard.toml")
    (tmp_path / "link.toml").symlink_to(source)
    forget_inputs()
    read_input(source, what="scenario")
    for name in ("in.toml", "hard.toml", "link.toml"):
        with pytest.raises(ConfigError, match="-o: is one of this command's inputs"):
            write("x", tmp_path / name)
    assert source.read_text() == "[cluster]\n"
    forget_inputs()
    write("y", source)
    assert source.read_text() == "y"


def test_a_file_the_user_may_not_write_is_kept():
    """A 0444 file in a world-writable folder: renaming over it would succeed, so the mode is checked first.
    As root the test runs the write as `nobody` (effective ids), which is what the check reads."""
    import tempfile
    with tempfile.TemporaryDirectory() as folder:    # in the system's temporary folder, which nobody may enter
        _may_not_write(Path(folder))


def _may_not_write(tmp_path):
    tmp_path.chmod(0o777)
    target = tmp_path / "f.json"
    target.write_text("keep")
    target.chmod(0o444)
    as_root = os.geteuid() == 0
    if as_root:
        os.setegid(65534)
        os.seteuid(65534)
    try:
        with pytest.raises(ConfigError, match=r"f.json: -o: you may not write this file \(mode 0444\)"):
            write("new", target)
    finally:
        if as_root:
            os.seteuid(0)
            os.setegid(0)
    assert target.read_text() == "keep" and leftovers(tmp_path) == []


@pytest.mark.parametrize("name", ["SIGTERM", "SIGHUP"])
def test_sigterm_and_sighup_during_a_write_remove_the_temporary(tmp_path, monkeypatch, name):
    """The signal arrives while the temporary exists (just before the rename): it is removed, the old file kept,
    and the process ends with 128 + the signal's number (issue 31: `.out.json.XXXX` was left behind)."""
    import signal
    number = getattr(signal, name)
    target = tmp_path / "out.json"
    target.write_text("old")
    real_replace = os.replace

    def signalled(*args):
        os.kill(os.getpid(), number)
        real_replace(*args)

    monkeypatch.setattr(os, "replace", signalled)
    with pytest.raises(SystemExit) as done:
        write("new", target)
    assert done.value.code == 128 + number
    assert target.read_text() == "old" and leftovers(tmp_path) == []
    assert signal.getsignal(number) is signal.SIG_DFL
