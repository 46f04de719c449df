"""cli/output.py: -o writes the whole output or nothing, leaves no temporary behind, keeps modes and devices."""

import os
import stat
import threading

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
