"""Collect one node's audit input: the tools' text and the /sys files, without root or a GPU.

``probe()`` runs ``nvidia-smi topo -m``, ``nvidia-smi -q``, ``ibstat`` and ``ibv_devinfo`` (each
None where the tool is missing or fails) and prints the PCIe link attributes of NVIDIA and
Mellanox devices and the InfiniBand ports' attributes from /sys in ``tail -v -n +1`` form, plus
this process's CPU binding. It returns plain strings, so that it can travel between ranks; the
parsing and judging happen on rank 0 (``audit.checks``). ``read_captures`` reads the same inputs
from a folder of saved captures (the tests' fixtures, or a node audited earlier).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from clusterplan.audit.parsers import parse_ibstat, parse_ibv_devinfo, parse_smi_query, parse_sys_files, parse_topo
from clusterplan.errors import ConfigError

COMMANDS = {"topo": ("nvidia-smi", "topo", "-m"), "smi": ("nvidia-smi", "-q"), "ibstat": ("ibstat",),
            "ibv_devinfo": ("ibv_devinfo",)}
FILES = {"topo": "topo.txt", "smi": "smi-q.txt", "ibstat": "ibstat.txt", "ibv_devinfo": "ibv_devinfo.txt",
         "sys": "sys.txt", "binding": "binding.txt"}
PARSERS = {"topo": parse_topo, "smi": parse_smi_query, "ibstat": parse_ibstat, "ibv_devinfo": parse_ibv_devinfo,
           "sys": parse_sys_files}
VENDORS = ("0x10de", "0x15b3")     # NVIDIA, Mellanox/NVIDIA networking
TIMEOUT_S = 30.0


def probe(root: str = "/", local_gpu: int | None = None) -> dict[str, str | None]:
    """This node's captures (a tool that is missing or fails gives None)."""
    captures: dict[str, str | None] = {name: _run(command) for name, command in COMMANDS.items()}
    captures["sys"] = sys_text(Path(root)) or None
    cpus = _binding()
    captures["binding"] = f"GPU{local_gpu}: {cpus}\n" if cpus and local_gpu is not None else None
    return captures


def _run(command: tuple[str, ...]) -> str | None:
    if shutil.which(command[0]) is None:
        return None
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 and done.stdout.strip() else None


def sys_text(root: Path) -> str:
    """The PCIe link and InfiniBand port attributes under ``root``/sys, as ``tail -v -n +1`` prints them."""
    paths = []
    for device in sorted((root / "sys/bus/pci/devices").glob("*")):
        if _read(device / "vendor") in VENDORS:
            paths += [device / f"{kind}_link_{what}" for kind in ("current", "max") for what in ("speed", "width")]
    for port in sorted((root / "sys/class/infiniband").glob("*/ports/*")):
        paths += [port / name for name in ("state", "phys_state", "rate", "link_layer")]
    blocks = [f"==> {path.relative_to(root).as_posix().join(('/', ''))} <==\n{value}\n"
              for path in paths if (value := _read(path))]
    return "\n".join(blocks)


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def _binding() -> str:
    try:
        cpus = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return ""
    return ",".join(map(str, cpus))


def read_captures(folder: str) -> dict[str, str | None]:
    """Saved captures from ``folder`` (topo.txt, smi-q.txt, ibstat.txt, ibv_devinfo.txt, sys.txt,
    binding.txt; any may be missing); leading "#" lines (a capture's provenance) are dropped."""
    where = Path(folder)
    if not where.is_dir():
        raise ConfigError("not a folder of captures", key="--audit", source=folder)
    captures: dict[str, str | None] = {}
    for name, file in FILES.items():
        path = where / file
        try:
            text = path.read_text(encoding="utf-8") if path.is_file() else None
        except (OSError, UnicodeDecodeError) as error:
            raise ConfigError(f"cannot read: {error}", source=str(path)) from None
        captures[name] = strip_provenance(text) if text is not None else None
        if captures[name] is not None and name in PARSERS:
            PARSERS[name](captures[name], source=str(path))     # a capture not in its tool's format: bad input
    if not any(captures.values()):
        raise ConfigError(f"no capture in it (expected any of {', '.join(FILES.values())})", key="--audit",
                          source=folder)
    return captures


def strip_provenance(text: str) -> str:
    lines = text.splitlines(keepends=True)
    while lines and lines[0].startswith("#"):
        lines.pop(0)
    return "".join(lines)
