"""The one way clusterplan reads a file a person names (docs/inputs.md).

A scenario, a model's config.json, a trace, a measured run or a calibration must be a regular file: a FIFO
(which would wait forever for a writer), a device such as /dev/zero or /dev/urandom (which never ends), a
socket or a folder is refused before anything is read. The file is opened without blocking, read up to a
cap, and gzip data (detected by its magic bytes) is decompressed up to the same cap, so a gzip bomb stops
at the cap instead of filling memory. Every refusal is a ``ConfigError`` naming the file. The files read
are remembered (device and inode) so that ``-o`` does not write over a command's own input.
"""

from __future__ import annotations

import gzip
import io
import os
import stat
import zlib

from clusterplan.errors import ConfigError

MiB = 2**20
SMALL_INPUT_BYTES = 64 * MiB     # scenarios, config.json, measured runs, calibrations (each a few KiB to MiB)
TRACE_BYTES = 512 * MiB          # a workload trace, after decompression
_GZIP_MAGIC = b"\x1f\x8b"
_READ: set[tuple[int, int]] = set()   # (device, inode) of every file read since ``forget_inputs``
_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def read_input(path: str | os.PathLike, *, what: str, limit_bytes: int = SMALL_INPUT_BYTES, key: str = "",
               source: str | None = None) -> bytes:
    """The bytes of the regular file ``path`` (gzip decompressed), at most ``limit_bytes`` of them; errors
    name ``source`` (the path unless given) and ``key``."""
    source = os.fsdecode(path) if source is None else source
    data = _read_regular(path, what=what, limit_bytes=limit_bytes, source=source, key=key)
    if data[:2] != _GZIP_MAGIC:
        return data
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
            data = stream.read(limit_bytes + 1)
    except (OSError, EOFError, zlib.error) as error:
        raise ConfigError(f"cannot read {what}: broken gzip data ({error})", source=source, key=key) from None
    if len(data) > limit_bytes:
        raise ConfigError(f"cannot read {what}: more than {_size(limit_bytes)} once decompressed", source=source,
                          key=key)
    return data


def read_input_text(path: str | os.PathLike, *, what: str, limit_bytes: int = SMALL_INPUT_BYTES, key: str = "",
                    source: str | None = None, errors: str = "strict") -> str:
    """``read_input`` decoded as UTF-8 (a byte-order mark skipped); not UTF-8 is a ``ConfigError``."""
    source = os.fsdecode(path) if source is None else source
    data = read_input(path, what=what, limit_bytes=limit_bytes, key=key, source=source)
    try:
        return data.decode("utf-8-sig", errors)
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise ConfigError(f"cannot read {what}: not UTF-8 text", source=source, key=key, line=line) from None


def _read_regular(path, *, what: str, limit_bytes: int, source: str, key: str) -> bytes:
    """Open without blocking (a FIFO swapped in after the check cannot hang us), check, read the cap + 1."""
    try:
        mode = os.stat(path).st_mode
    except OSError as error:
        raise ConfigError(f"cannot read {what}: {error.strerror}", source=source, key=key) from None
    except ValueError:            # a NUL byte in the name
        raise ConfigError(f"cannot read {what}: the name holds a NUL byte", source=source, key=key) from None
    _refuse_special(mode, what=what, source=source, key=key)
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as error:
        raise ConfigError(f"cannot read {what}: {error.strerror}", source=source, key=key) from None
    with os.fdopen(handle, "rb") as stream:
        try:
            opened = os.fstat(handle)
            _refuse_special(opened.st_mode, what=what, source=source, key=key)
            _READ.add((opened.st_dev, opened.st_ino))
            data = stream.read(limit_bytes + 1)
        except OSError as error:
            raise ConfigError(f"cannot read {what}: {error.strerror}", source=source, key=key) from None
    if len(data) > limit_bytes:
        raise ConfigError(f"cannot read {what}: larger than {_size(limit_bytes)}", source=source, key=key)
    return data


def is_input(info: os.stat_result) -> bool:
    """Whether the file ``info`` describes was read as an input (``-o`` refuses to write over it)."""
    return (info.st_dev, info.st_ino) in _READ


def forget_inputs() -> None:
    """Start a command afresh: no file counts as its input yet."""
    _READ.clear()


def _refuse_special(mode: int, *, what: str, source: str, key: str) -> None:
    for test, name in _KINDS:
        if test(mode):
            raise ConfigError(f"cannot read {what}: {name}, not a regular file", source=source, key=key)
    if not stat.S_ISREG(mode):
        raise ConfigError(f"cannot read {what}: not a regular file", source=source, key=key)


def _size(num_bytes: int) -> str:
    return f"{num_bytes // MiB:,} MiB"
