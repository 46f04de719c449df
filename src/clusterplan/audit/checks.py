"""The topology audit of one node: what its tools report against what the design expects (docs/accept.md).

``audit_node`` takes the captured text of each tool (None where the tool was missing) and an
``Expected`` built from the design, and returns one ``Finding`` per check, each with the verdict
and, for a mismatch, its likely cause. A tool that is missing makes its checks "skip", said so.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from clusterplan.audit.parsers import (GpuInfo, Port, Topo, parse_ibstat, parse_ibv_devinfo, parse_smi_query,
                                       parse_sys_files, parse_topo, pcie_links, sys_ports)
from clusterplan.schema import FROZEN

TOOLS = {"topo": "nvidia-smi topo -m", "smi": "nvidia-smi -q", "ibstat": "ibstat", "ibv_devinfo": "ibv_devinfo",
         "sys": "/sys (PCIe links and /sys/class/infiniband)", "binding": "the ranks' CPU binding"}
NEAR = ("PIX", "PXB")                   # a NIC on the GPU's own PCIe switch (tree)
RANK = {"PIX": 0, "PXB": 1, "PHB": 2, "NODE": 3, "SYS": 4}


@dataclass(**FROZEN)
class Expected:
    """What the design says one node holds."""

    gpus_per_node: int
    nvlinks_per_pair: int          # NV# between two GPUs (0: PCIe only)
    nics_per_node: int
    rail: bool                     # rail-optimised: every GPU its own NIC on its PCIe switch
    link_rate_gbps: float
    link_layer: str                # "InfiniBand" or "Ethernet"


@dataclass(**FROZEN)
class Finding:
    check: str                     # "nvlink", "nic affinity", "numa", "port", "pcie", "power", "ecc", "mig", ...
    subject: str                   # "GPU2-GPU5", "mlx5_1 port 1", "GPU 00000000:19:00.0"
    verdict: str                   # "pass", "warn", "fail" or "skip"
    measured: str
    expected: str
    cause: str = ""


def audit_node(captures: Mapping[str, str | None], expected: Expected, *, source: str = "") -> tuple[Finding, ...]:
    """Every check whose tool answered; a "skip" finding for each tool that did not."""
    def where(tool: str) -> str:
        return f"{source}: {TOOLS[tool]}" if source else TOOLS[tool]

    findings: list[Finding] = []
    topo = parse_topo(captures["topo"], source=where("topo")) if captures.get("topo") else None
    if topo is not None:
        findings += _nvlink(topo, expected) + _affinity(topo, expected)
        if captures.get("binding"):
            findings += _binding(topo, captures["binding"])
    if captures.get("smi"):
        findings += _gpus(parse_smi_query(captures["smi"], source=where("smi")))
    files = parse_sys_files(captures["sys"], source=where("sys")) if captures.get("sys") else {}
    if files:
        findings += _sys_pcie(files)
    ports = (parse_ibstat(captures["ibstat"], source=where("ibstat")) if captures.get("ibstat")
             else parse_ibv_devinfo(captures["ibv_devinfo"], source=where("ibv_devinfo"))
             if captures.get("ibv_devinfo") else sys_ports(files))
    findings += _ports(ports, expected) if ports else []
    for tool, checks in (("topo", "NVLink count, GPU-NIC affinity and NUMA checks"),
                         ("smi", "PCIe link, power limit, ECC and MIG checks")):
        if not captures.get(tool):
            findings.append(Finding(check=tool, subject="node", verdict="skip", measured="", expected="",
                                    cause=f"{TOOLS[tool]} not available here: {checks} skipped"))
    if not ports:
        findings.append(Finding(check="port", subject="node", verdict="skip", measured="", expected="",
                                cause="no ibstat, ibv_devinfo or /sys/class/infiniband: port state and rate "
                                      "checks skipped"))
    return tuple(findings)


def _nvlink(topo: Topo, expected: Expected) -> list[Finding]:
    findings = [Finding(check="gpus", subject="node", verdict="pass" if len(topo.gpus) == expected.gpus_per_node
                        else "fail", measured=f"{len(topo.gpus)} GPUs", expected=f"{expected.gpus_per_node} GPUs",
                        cause="" if len(topo.gpus) == expected.gpus_per_node else
                        "a GPU fell off the bus or is hidden (CUDA_VISIBLE_DEVICES, Xid errors in dmesg)?")]
    if not expected.nvlinks_per_pair:
        return findings
    if len(topo.gpus) < 2:
        findings.append(Finding(check="nvlink", subject="node", verdict="skip", measured=f"{len(topo.gpus)} GPU",
                                expected=f"NV{expected.nvlinks_per_pair}", cause="no GPU pair to check"))
        return findings
    short = []
    for row in topo.gpus:
        for other, link in row.links:
            if other.startswith("GPU") and row.name < other:
                count = int(link[2:]) if link.startswith("NV") else 0
                if count < expected.nvlinks_per_pair:
                    short.append((f"{row.name}-{other}", link))
    findings.append(Finding(
        check="nvlink", subject=", ".join(pair for pair, _ in short[:4]) + ("..." * (len(short) > 4)) or "every GPU pair",
        verdict="fail" if short else "pass", measured=", ".join(sorted({link for _, link in short})) or
        f"NV{expected.nvlinks_per_pair}", expected=f"NV{expected.nvlinks_per_pair}",
        cause=f"{len(short)} GPU pairs below NV{expected.nvlinks_per_pair}: NVLinks down or the NVSwitch fabric "
              f"not up (`nvidia-smi nvlink -s`, fabric manager)" if short else ""))
    return findings


def _affinity(topo: Topo, expected: Expected) -> list[Finding]:
    """Each GPU's nearest NIC: on its PCIe switch in a rail design, never across the CPU interconnect."""
    findings = []
    for row in topo.gpus:
        nics = sorted(((RANK.get(link, 5), other) for other, link in row.links if not other.startswith("GPU")))
        if not nics:
            continue
        distance, column = nics[0]
        link, nic = next(k for k, v in RANK.items() if v == distance), topo.nic_name(column)
        if link == "SYS":
            findings.append(Finding(check="numa", subject=row.name, verdict="fail", measured=f"{nic} {link}",
                                    expected="a NIC on the same NUMA node", cause=(
                                        f"{row.name}'s nearest NIC ({nic}) is across the CPU interconnect (SYS): "
                                        "GPU and NICs on different NUMA nodes; GPUDirect RDMA crosses the socket "
                                        "link (slot placement or BIOS NUMA settings)")))
        elif link not in NEAR:
            findings.append(Finding(check="nic affinity", subject=row.name, verdict="fail" if expected.rail else "warn",
                                    measured=f"{nic} {link}", expected="a NIC on its PCIe switch (PIX or PXB)",
                                    cause=f"{row.name} has no NIC on its PCIe switch (nearest {nic} is {link}): "
                                          "its network traffic crosses the host bridge"
                                          + ("; a rail design needs one NIC per GPU" if expected.rail else "")))
        else:
            findings.append(Finding(check="nic affinity", subject=row.name, verdict="pass", measured=f"{nic} {link}",
                                    expected="PIX or PXB"))
    return findings


def cpu_set(text: str) -> set[int]:
    """"0-31,64-95" -> the CPUs it names."""
    cpus: set[int] = set()
    for part in re.findall(r"\d+(?:-\d+)?", text):
        low, _, high = part.partition("-")
        cpus.update(range(int(low), int(high or low) + 1))
    return cpus


def _binding(topo: Topo, binding: str) -> list[Finding]:
    """Each rank's CPUs ("GPU3: 0-15" lines) against its GPU's CPU affinity from topo -m."""
    affinity = {row.name: cpu_set(row.cpu_affinity) for row in topo.gpus if cpu_set(row.cpu_affinity)}
    findings = []
    for line in binding.splitlines():
        match = re.match(r"\s*(GPU\d+):\s*(.+)$", line)
        if not match or match.group(1) not in affinity:
            continue
        gpu, allowed = match.group(1), cpu_set(match.group(2))
        wrong = bool(allowed) and not allowed & affinity[gpu]
        findings.append(Finding(check="numa", subject=f"{gpu} rank binding", verdict="fail" if wrong else "pass",
                                measured=f"CPUs {match.group(2).strip()}",
                                expected=f"CPUs of {gpu}'s NUMA node", cause=(
                                    f"the rank of {gpu} is bound to CPUs on another NUMA node: every host-device "
                                    "copy crosses the socket link (bind it with srun --cpu-bind or numactl)")
                                if wrong else ""))
    return findings


def _gpus(gpus: Sequence[GpuInfo]) -> list[Finding]:
    findings = []
    for gpu in gpus:
        subject = f"GPU {gpu.bus_id}"
        findings.append(_pcie(subject, gpu.pcie_gen_current, gpu.pcie_gen_max, gpu.pcie_width_current,
                              gpu.pcie_width_max))
        if gpu.power_limit_w and gpu.default_power_limit_w:
            capped = gpu.power_limit_w < gpu.default_power_limit_w
            findings.append(Finding(check="power", subject=subject, verdict="warn" if capped else "pass",
                                    measured=f"{gpu.power_limit_w:.0f} W", expected=f"{gpu.default_power_limit_w:.0f} W",
                                    cause="power limit below the default: `nvidia-smi -pl` or a BMC cap" if capped
                                    else ""))
        if gpu.ecc_mode:
            bad = gpu.ecc_mode != "Enabled" or bool(gpu.uncorrectable_errors)
            findings.append(Finding(check="ecc", subject=subject, verdict="fail" if bad else "pass",
                                    measured=f"{gpu.ecc_mode}, {gpu.uncorrectable_errors or 0} uncorrectable",
                                    expected="Enabled, 0 uncorrectable",
                                    cause="ECC off, or uncorrectable memory errors: reset the GPU, then RMA if "
                                          "they return" if bad else ""))
        if gpu.mig_mode:
            on = gpu.mig_mode == "Enabled"
            findings.append(Finding(check="mig", subject=subject, verdict="fail" if on else "pass",
                                    measured=f"MIG {gpu.mig_mode}", expected="MIG Disabled",
                                    cause="MIG partitions the GPU: training sees a slice" if on else ""))
    return findings


def _pcie(subject: str, gen: int | float | None, gen_max: int | float | None, width: int | None,
          width_max: int | None) -> Finding:
    measured = f"Gen{gen if gen is not None else '?'} x{width if width is not None else '?'}"
    expected = f"Gen{gen_max if gen_max is not None else '?'} x{width_max if width_max is not None else '?'}"
    if width is not None and width_max is not None and width < width_max:
        return Finding(check="pcie", subject=subject, verdict="fail", measured=measured, expected=expected,
                       cause=f"PCIe link trained at x{width} of x{width_max}: reseat the card or riser, check the "
                             "slot (`lspci -vv` LnkSta); host-device copies run at a fraction of their rate")
    if gen is not None and gen_max is not None and gen < gen_max:
        return Finding(check="pcie", subject=subject, verdict="warn", measured=measured, expected=expected,
                       cause=f"PCIe link at Gen{gen} of Gen{gen_max}: power saving at idle, or trained slow; "
                             "a fail if the host-device copies are slow too")
    return Finding(check="pcie", subject=subject, verdict="pass", measured=measured, expected=expected)


def _sys_pcie(files: dict[str, str]) -> list[Finding]:
    generation = {2.5: 1, 5.0: 2, 8.0: 3, 16.0: 4, 32.0: 5, 64.0: 6}
    return [_pcie(f"PCIe {link.address}", generation.get(link.speed_gts or 0, link.speed_gts),
                  generation.get(link.max_speed_gts or 0, link.max_speed_gts), link.width, link.max_width)
            for link in pcie_links(files)]


def _ports(ports: Sequence[Port], expected: Expected) -> list[Finding]:
    fabric = [port for port in ports if port.link_layer.lower() == expected.link_layer.lower()]
    findings = []
    for port in fabric:
        subject = f"{port.device} port {port.port}"
        if port.state.lower() != "active":
            findings.append(Finding(check="port", subject=subject, verdict="fail",
                                    measured=f"{port.state}" + (f" ({port.physical_state})" if port.physical_state
                                                                else ""),
                                    expected=f"Active at {expected.link_rate_gbps:g} Gb/s",
                                    cause="port down: cable unplugged or faulty, port disabled, or the switch side "
                                          "down (`ibstat`, switch logs)"))
        elif port.rate_gbps is not None and port.rate_gbps < expected.link_rate_gbps:
            findings.append(Finding(check="port", subject=subject, verdict="fail", measured=f"{port.rate_gbps:g} Gb/s",
                                    expected=f"{expected.link_rate_gbps:g} Gb/s",
                                    cause="link trained below the designed rate: cable or optic, or a switch port "
                                          "set to a lower speed or width"))
        else:
            rate = f"{port.rate_gbps:g} Gb/s" if port.rate_gbps is not None else "rate not printed"
            findings.append(Finding(check="port", subject=subject, verdict="pass", measured=f"Active, {rate}",
                                    expected=f"Active at {expected.link_rate_gbps:g} Gb/s"))
    active = sum(1 for port in fabric if port.state.lower() == "active")
    findings.append(Finding(check="nics", subject="node", verdict="pass" if active >= expected.nics_per_node else "fail",
                            measured=f"{active} active {expected.link_layer} ports",
                            expected=f"{expected.nics_per_node}",
                            cause="" if active >= expected.nics_per_node else
                            f"{expected.nics_per_node - active} of the design's {expected.nics_per_node} fabric NICs "
                            "missing or down"))
    return findings
