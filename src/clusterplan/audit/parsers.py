"""Readers of the node tools' text: ``nvidia-smi topo -m``, ``nvidia-smi -q``, ``ibstat``, ``ibv_devinfo``
and /sys files printed as ``tail -v -n +1 FILES`` prints them (docs/accept.md, "The audit").

Each reader takes the text and the name of where it came from, and returns frozen records;
text that is not the tool's format is a ``ConfigError`` naming the source and the line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from clusterplan.errors import ConfigError
from clusterplan.schema import FROZEN

LINK = re.compile(r"X|SYS|NODE|PHB|PXB|PIX|NV\d+")
ESCAPES = re.compile(r"\x1b\[[0-9;]*m")     # nvidia-smi underlines the header row on a terminal
AFFINITY_COLUMNS = ("CPU Affinity", "NUMA Affinity", "GPU NUMA ID")


@dataclass(**FROZEN)
class TopoRow:
    name: str                       # "GPU0"
    links: tuple[tuple[str, str], ...]   # (other device, "NV18" | "PIX" | ...), self left out
    cpu_affinity: str               # "0-31,64-95", "" where not printed
    numa_affinity: str


@dataclass(**FROZEN)
class Topo:
    gpus: tuple[TopoRow, ...]
    nics: tuple[tuple[str, str], ...]    # (column name, device: "NIC0" -> "mlx5_0")

    def nic_name(self, column: str) -> str:
        return dict(self.nics).get(column, column)


@dataclass(**FROZEN)
class GpuInfo:
    """One GPU of ``nvidia-smi -q``; None where the field is absent or N/A."""

    bus_id: str
    product: str
    pcie_gen_max: int | None
    pcie_gen_current: int | None
    pcie_width_max: int | None
    pcie_width_current: int | None
    power_limit_w: float | None
    default_power_limit_w: float | None
    ecc_mode: str | None
    uncorrectable_errors: int | None     # volatile, DRAM + SRAM
    mig_mode: str | None
    sm_clock_max_mhz: float | None


@dataclass(**FROZEN)
class Port:
    device: str                     # "mlx5_0"
    port: int
    state: str                      # "Active", "Down", "Init", ...
    physical_state: str | None      # "LinkUp", "Disabled", ...
    rate_gbps: float | None         # None where the tool does not print it (ibv_devinfo)
    link_layer: str                 # "InfiniBand" or "Ethernet"


@dataclass(**FROZEN)
class PcieLink:
    address: str                    # "0000:19:00.0"
    speed_gts: float | None
    width: int | None
    max_speed_gts: float | None
    max_width: int | None


def _error(source: str, message: str, line: int | None = None) -> ConfigError:
    return ConfigError(message, source=source, line=line)


def parse_topo(text: str, *, source: str) -> Topo:
    """The GPU rows of the matrix and the NIC legend of ``nvidia-smi topo -m``."""
    lines = ESCAPES.sub("", text).splitlines()
    header = next((i for i, line in enumerate(lines) if re.match(r"\s*GPU0(\s|$)", line)), None)
    if header is None:
        raise _error(source, "not `nvidia-smi topo -m` output: no header row starting with GPU0")
    columns = [c.strip() for c in re.split(r"\t|\s{2,}", lines[header].strip()) if c.strip()]
    devices = [c for c in columns if c not in AFFINITY_COLUMNS]
    rows, nics = [], []
    for number, line in enumerate(lines[header + 1:], start=header + 2):
        cells = [c.strip() for c in line.strip().split("\t")] if "\t" in line else line.split()
        if not cells or not re.fullmatch(r"GPU\d+", cells[0]):
            continue
        links = cells[1:1 + len(devices)]
        bad = [cell for cell in links if not LINK.fullmatch(cell)]
        if len(links) < len(devices) or bad:
            raise _error(source, f"{cells[0]}: expected {len(devices)} links (X, NV#, PIX, PXB, PHB, NODE or SYS), "
                                 f"got {' '.join(bad) or len(links)}", number)
        rest = cells[1 + len(devices):]
        cpu, numa = (rest + ["", ""])[:2] if len(rest) >= 3 or "\t" in line else ("", rest[0] if rest else "")
        rows.append(TopoRow(name=cells[0], links=tuple((d, link) for d, link in zip(devices, links) if link != "X"),
                            cpu_affinity=cpu, numa_affinity=numa))
    for line in lines:
        legend = re.match(r"\s*(NIC\d+):\s*(\S+)\s*$", line)
        if legend:
            nics.append((legend.group(1), legend.group(2)))
    nic_columns = [d for d in devices if not d.startswith("GPU")]
    if not rows:
        raise _error(source, "not `nvidia-smi topo -m` output: no GPU rows under the header", header + 1)
    return Topo(gpus=tuple(rows), nics=tuple(nics) or tuple((d, d) for d in nic_columns))


def _number(value: str | None) -> float | None:
    match = re.match(r"\s*(-?\d+(?:\.\d+)?)", value or "")
    return float(match.group(1)) if match else None


def parse_smi_query(text: str, *, source: str) -> tuple[GpuInfo, ...]:
    """Every GPU of ``nvidia-smi -q``: its PCIe link, power limit, ECC, MIG and clocks."""
    if "NVSMI LOG" not in text:
        raise _error(source, "not `nvidia-smi -q` output: no '==============NVSMI LOG==============' line")
    blocks = re.split(r"^GPU ([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d)\s*$", text, flags=re.M)
    if len(blocks) < 3:
        raise _error(source, "`nvidia-smi -q` output lists no GPU (no 'GPU 00000000:19:00.0' line)")
    return tuple(_gpu(bus_id, body) for bus_id, body in zip(blocks[1::2], blocks[2::2]))


def _fields(body: str) -> dict[str, str]:
    """'Section/Sub/Key' -> value, from the indentation of ``nvidia-smi -q``."""
    fields, stack = {}, []
    for line in body.splitlines():
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        key, colon, value = line.strip().partition(":")
        while stack and stack[-1][0] >= indent:
            stack.pop()
        path = "/".join([name for _, name in stack] + [key.strip()])
        if colon and value.strip():
            fields[path] = value.strip()
        else:
            stack.append((indent, key.strip()))
    return fields


def _gpu(bus_id: str, body: str) -> GpuInfo:
    f = _fields(body)
    link = "PCI/GPU Link Info"

    def number(key: str) -> float | None:
        return _number(f.get(key))

    def whole(key: str) -> int | None:
        value = number(key)
        return int(value) if value is not None else None

    errors = [whole(f"ECC Errors/Volatile/{kind} Uncorrectable") for kind in ("DRAM", "SRAM")]
    return GpuInfo(bus_id=bus_id, product=f.get("Product Name", ""),
                   pcie_gen_max=whole(f"{link}/PCIe Generation/Max"),
                   pcie_gen_current=whole(f"{link}/PCIe Generation/Current"),
                   pcie_width_max=whole(f"{link}/Link Width/Max"),
                   pcie_width_current=whole(f"{link}/Link Width/Current"),
                   power_limit_w=number("GPU Power Readings/Current Power Limit") or number("Power Readings/Power Limit"),
                   default_power_limit_w=number("GPU Power Readings/Default Power Limit")
                   or number("Power Readings/Default Power Limit"),
                   ecc_mode=f.get("ECC Mode/Current"),
                   uncorrectable_errors=sum(e for e in errors if e is not None) if any(
                       e is not None for e in errors) else None,
                   mig_mode=f.get("MIG Mode/Current"), sm_clock_max_mhz=number("Max Clocks/SM"))


def parse_ibstat(text: str, *, source: str) -> tuple[Port, ...]:
    """Every port of every CA in ``ibstat`` output."""
    ports, device, port, fields = [], None, None, {}

    def close() -> None:
        if device is not None and port is not None:
            ports.append(_port(source, device, port, fields.get("State"), fields.get("Physical state"),
                               _number(fields.get("Rate")), fields.get("Link layer")))

    for line in text.splitlines():
        ca = re.match(r"\s*CA '([^']+)'", line)
        number = re.match(r"\s*Port (\d+):\s*$", line)
        if ca or number:
            close()
            fields = {}
            device, port = (ca.group(1), None) if ca else (device, int(number.group(1)))
            continue
        key, colon, value = line.strip().partition(":")
        if colon:
            fields[key.strip()] = value.strip()
    close()
    if not ports:
        raise _error(source, "not `ibstat` output: no \"CA 'mlx5_0'\" with a \"Port 1:\" block")
    return tuple(ports)


def parse_ibv_devinfo(text: str, *, source: str) -> tuple[Port, ...]:
    """Every port of every HCA in ``ibv_devinfo`` output (it prints no rate without -v)."""
    ports, device, port, fields = [], None, None, {}

    def close() -> None:
        if device is not None and port is not None:
            state = re.sub(r"^PORT_|\s*\(\d+\)$", "", fields.get("state", "")).title()
            ports.append(_port(source, device, port, state, None, None, fields.get("link_layer")))

    for line in text.splitlines():
        key, colon, value = line.strip().partition(":")
        key, value = key.strip(), value.strip()
        if key in ("hca_id", "port") and colon:
            close()
            fields = {}
            if key == "hca_id":
                device, port = value, None
            else:
                port = int(_number(value) or 0)
        elif colon:
            fields[key] = value
    close()
    if not ports:
        raise _error(source, "not `ibv_devinfo` output: no 'hca_id:' with a 'port:' block")
    return tuple(ports)


def _port(source: str, device: str, port: int, state: str | None, physical: str | None, rate: float | None,
          layer: str | None) -> Port:
    if not state or not layer:
        raise _error(source, f"{device} port {port}: no {'state' if not state else 'link layer'}")
    return Port(device=device, port=port, state=state, physical_state=physical, rate_gbps=rate, link_layer=layer)


def parse_sys_files(text: str, *, source: str) -> dict[str, str]:
    """``tail -v -n +1 FILES`` output: path -> first line of the file."""
    files, path = {}, None
    for line in text.splitlines():
        head = re.match(r"==> (.+) <==\s*$", line)
        if head:
            path = head.group(1)
        elif path is not None and line.strip() and path not in files:
            files[path] = line.strip()
    if not files:
        raise _error(source, "not /sys files as `tail -v -n +1 FILES` prints them: no '==> path <==' line")
    return files


def pcie_links(files: dict[str, str]) -> tuple[PcieLink, ...]:
    """The PCIe links among /sys/bus/pci/devices/ADDRESS/{current,max}_link_{speed,width}."""
    by_device: dict[str, dict[str, str]] = {}
    for path, value in files.items():
        match = re.search(r"/devices/([0-9a-fA-F:.]+)/(current|max)_link_(speed|width)$", path)
        if match:
            by_device.setdefault(match.group(1), {})[f"{match.group(2)}_{match.group(3)}"] = value

    def whole(value: str | None) -> int | None:
        number = _number(value)
        return int(number) if number is not None else None

    return tuple(PcieLink(address=address, speed_gts=_number(v.get("current_speed")), width=whole(v.get("current_width")),
                          max_speed_gts=_number(v.get("max_speed")), max_width=whole(v.get("max_width")))
                 for address, v in sorted(by_device.items()))


def sys_ports(files: dict[str, str]) -> tuple[Port, ...]:
    """The ports among /sys/class/infiniband/DEVICE/ports/N/{state,phys_state,rate,link_layer}."""
    by_port: dict[tuple[str, int], dict[str, str]] = {}
    for path, value in files.items():
        match = re.search(r"/infiniband/([^/]+)/ports/(\d+)/(state|phys_state|rate|link_layer)$", path)
        if match:
            by_port.setdefault((match.group(1), int(match.group(2))), {})[match.group(3)] = value
    return tuple(Port(device=device, port=port, state=re.sub(r"^\d+:\s*", "", v.get("state", "")).title(),
                      physical_state=re.sub(r"^\d+:\s*", "", v["phys_state"]) if "phys_state" in v else None,
                      rate_gbps=_number(v.get("rate")), link_layer=v.get("link_layer", ""))
                 for (device, port), v in sorted(by_port.items()) if "state" in v)
