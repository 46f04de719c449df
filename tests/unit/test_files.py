"""Files a person names: regular files only, read with a cap, gzip decompressed with the same cap."""

import gzip
import os
import socket
import threading
import time

import pytest

from clusterplan.errors import ConfigError
from clusterplan.files import MiB, SMALL_INPUT_BYTES, TRACE_BYTES, read_input, read_input_text


def test_a_regular_file_and_its_gzip_read_alike(tmp_path):
    plain, packed = tmp_path / "a.txt", tmp_path / "a.txt.gz"
    plain.write_bytes(b"\xef\xbb\xbfjobs\n")
    packed.write_bytes(gzip.compress(b"jobs\n"))
    assert read_input_text(plain, what="trace") == read_input_text(packed, what="trace") == "jobs\n"


@pytest.mark.parametrize("path, kind", [("/dev/zero", "a character device"), ("/dev/urandom", "a character device")])
def test_endless_devices_are_refused_before_reading(path, kind):
    with pytest.raises(ConfigError) as error:
        read_input(path, what="trace")
    assert str(error.value) == f"{path}: cannot read trace: {kind}, not a regular file"


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path):
    """Opening a FIFO for reading blocks until a writer comes; no writer ever comes here."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    start = time.monotonic()
    with pytest.raises(ConfigError, match="pipe: cannot read the model's config: a FIFO, not a regular file"):
        read_input(fifo, what="the model's config")
    assert time.monotonic() - start < 5


def test_folders_and_sockets_are_refused(tmp_path):
    with pytest.raises(ConfigError, match="a folder, not a regular file"):
        read_input(tmp_path, what="scenario")
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(tmp_path / "s"))
        with pytest.raises(ConfigError, match="a socket, not a regular file"):
            read_input(tmp_path / "s", what="scenario")


def test_a_file_over_the_cap_is_refused(tmp_path):
    path = tmp_path / "big.toml"
    path.write_bytes(b"#" * 1001)
    assert len(read_input(path, what="scenario", limit_bytes=1001)) == 1001
    with pytest.raises(ConfigError, match="big.toml: cannot read scenario: larger than"):
        read_input(path, what="scenario", limit_bytes=1000)


def test_a_gzip_bomb_stops_at_the_cap(tmp_path):
    """70 members of 1 MiB of zeros each (73 KB on disk) decompress past 64 MiB: refused at the cap."""
    path = tmp_path / "config.json"
    path.write_bytes(gzip.compress(b"\0" * MiB) * 70)
    with pytest.raises(ConfigError, match="config.json: cannot read x: more than 64 MiB once decompressed"):
        read_input(path, what="x")
    assert SMALL_INPUT_BYTES == 64 * MiB and TRACE_BYTES == 512 * MiB


def test_broken_gzip_and_bad_utf8_are_named(tmp_path):
    path = tmp_path / "t.gz"
    path.write_bytes(gzip.compress(b"abc")[:-6])
    with pytest.raises(ConfigError, match="broken gzip data"):
        read_input(path, what="trace")
    path.write_bytes(b"ok\nok\n\xff\n")
    with pytest.raises(ConfigError) as error:
        read_input_text(path, what="trace")
    assert (error.value.line, error.value.message) == (3, "cannot read trace: not UTF-8 text")
    assert read_input_text(path, what="log", errors="replace") == "ok\nok\n\ufffd\n"


def test_missing_and_named_source(tmp_path):
    with pytest.raises(ConfigError) as error:
        read_input(tmp_path / "none.json", what=str(tmp_path / "none.json"), key="workload.model_config", source="")
    assert str(error.value) == f"workload.model_config: cannot read {tmp_path}/none.json: No such file or directory"


def test_a_fifo_swapped_in_after_the_check_does_not_hang(tmp_path, monkeypatch):
    """The file is opened without blocking and checked again, so a FIFO put in its place is refused too."""
    import clusterplan.files as files
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    real_stat = os.stat
    monkeypatch.setattr(files.os, "stat", lambda path: real_stat(__file__) if path == fifo else real_stat(path))
    done = threading.Event()

    def read():
        with pytest.raises(ConfigError, match="a FIFO, not a regular file"):
            read_input(fifo, what="trace")
        done.set()

    worker = threading.Thread(target=read, daemon=True)
    worker.start()
    worker.join(5)
    assert done.is_set()
