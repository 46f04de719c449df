"""The audit reads real captures of the node tools and flags the degraded link, the down port and the wrong NUMA."""

from dataclasses import replace
from pathlib import Path

import pytest

from clusterplan.audit.checks import Expected, audit_node, cpu_set
from clusterplan.audit.parsers import (parse_ibstat, parse_ibv_devinfo, parse_smi_query, parse_sys_files, parse_topo,
                                       pcie_links)
from clusterplan.audit.probe import read_captures, strip_provenance, sys_text
from clusterplan.errors import ConfigError

FIXTURES = Path(__file__).parents[2] / "fixtures" / "audit"
H100 = Expected(gpus_per_node=8, nvlinks_per_pair=18, nics_per_node=1, rail=True, link_rate_gbps=400,
                link_layer="InfiniBand")


def capture(name: str) -> str:
    return strip_provenance((FIXTURES / name).read_text())


def bad(findings, check=None):
    return [f for f in findings if f.verdict in ("fail", "warn") and (check is None or f.check == check)]


def test_every_fixture_names_its_source():
    """Each capture's header says where it came from, and the edited ones say what was edited."""
    for path in FIXTURES.glob("*.txt"):
        header = path.read_text().split("\n# Verbatim")[0] if "Verbatim" in path.read_text() else path.read_text()
        assert header.startswith("# source:"), path.name
        edited = "degraded-link" in path.name or "wrong-numa" in path.name or path.name == "h200-smi-q.txt"
        assert ("EDITED" in header) == edited, path.name


def test_topo_of_an_h100_node():
    """8 GPUs, NV18 between every pair, six NICs named by the legend, GPU4-7 on NUMA node 1."""
    topo = parse_topo(capture("h100-topo.txt"), source="topo")
    assert [row.name for row in topo.gpus] == [f"GPU{i}" for i in range(8)]
    assert all(link == "NV18" for row in topo.gpus for other, link in row.links if other.startswith("GPU"))
    assert topo.nic_name("NIC5") == "mlx5_5" and len(topo.nics) == 6
    assert [row.numa_affinity for row in topo.gpus] == ["0"] * 4 + ["1"] * 4
    assert dict(topo.gpus[6].links)["NIC5"] == "PIX"


def test_smi_query_of_an_h100():
    """PCIe Gen5 x16, 700 W limit, ECC on without errors, MIG off, SM clock up to 1980 MHz."""
    (gpu,) = parse_smi_query(capture("h100-smi-q.txt"), source="smi")
    assert gpu.bus_id == "00000000:19:00.0" and gpu.product == "NVIDIA H100 80GB HBM3"
    assert (gpu.pcie_gen_max, gpu.pcie_gen_current, gpu.pcie_width_max, gpu.pcie_width_current) == (5, 5, 16, 16)
    assert gpu.power_limit_w == 700 and gpu.default_power_limit_w == 700
    assert gpu.ecc_mode == "Enabled" and gpu.uncorrectable_errors == 0 and gpu.mig_mode == "Disabled"
    assert gpu.sm_clock_max_mhz == 1980


def test_ports_from_ibstat_ibv_devinfo_and_sys():
    """ibstat gives state and rate, ibv_devinfo the state alone, /sys both."""
    (port,) = parse_ibstat(capture("h100-ibstat.txt"), source="ibstat")
    assert (port.device, port.port, port.state, port.rate_gbps, port.link_layer) == ("mlx5_5", 1, "Active", 400,
                                                                                       "InfiniBand")
    up, down = parse_ibstat(capture("a100-ibstat-down-port.txt"), source="ibstat")
    assert (up.state, up.rate_gbps, down.state, down.physical_state) == ("Active", 200, "Down", "Disabled")
    (devinfo,) = parse_ibv_devinfo(capture("h100-ibv-devinfo-down-port.txt"), source="ibv")
    assert (devinfo.device, devinfo.state, devinfo.rate_gbps, devinfo.link_layer) == ("mlx5_0", "Down", None,
                                                                                      "InfiniBand")
    links = pcie_links(parse_sys_files(capture("sys-pcie-degraded.txt"), source="sys"))
    assert [(link.address, link.speed_gts, link.width, link.max_speed_gts, link.max_width) for link in links] == [
        ("0000:01:00.0", 16.0, 8, 32.0, 16), ("0000:03:00.0", 32.0, 16, 32.0, 16)]


def test_a_healthy_h100_node_passes_its_gpu_checks():
    """The real H100 captures: NVLink, PCIe, power, ECC, MIG and the 400 Gb/s port all pass."""
    findings = audit_node({"topo": capture("h100-topo.txt"), "smi": capture("h100-smi-q.txt"),
                           "ibstat": capture("h100-ibstat.txt")}, H100)
    assert not bad(findings, "nvlink") and not bad(findings, "pcie") and not bad(findings, "port")
    assert {f.check for f in findings} >= {"gpus", "nvlink", "nic affinity", "pcie", "power", "ecc", "mig", "port"}


def test_the_real_node_has_gpus_without_a_nic_on_their_switch():
    """That della node has six NICs for eight GPUs: GPU1, 2, 5 and 7 reach theirs through the host bridge."""
    findings = bad(audit_node({"topo": capture("h100-topo.txt")}, H100), "nic affinity")
    assert [f.subject for f in findings] == ["GPU1", "GPU2", "GPU5", "GPU7"]
    assert all(f.verdict == "fail" and "PCIe switch" in f.cause for f in findings)
    relaxed = audit_node({"topo": capture("h100-topo.txt")}, replace(H100, rail=False))
    assert {f.verdict for f in bad(relaxed, "nic affinity")} == {"warn"}


def test_degraded_link_is_flagged_with_its_cause():
    """x8 of x16 fails, from nvidia-smi -q and from /sys alike."""
    (smi,) = bad(audit_node({"smi": capture("h100-smi-q-degraded-link.txt")}, H100), "pcie")
    assert smi.verdict == "fail" and (smi.measured, smi.expected) == ("Gen4 x8", "Gen5 x16") and "x8 of x16" in smi.cause
    (sys_link,) = bad(audit_node({"sys": capture("sys-pcie-degraded.txt")}, H100), "pcie")
    assert sys_link.subject == "PCIe 0000:01:00.0" and sys_link.verdict == "fail"


def test_wrong_numa_binding_is_flagged():
    """GPU6 reaching every NIC across the socket link fails as a NUMA mismatch; the clean capture has none."""
    (numa,) = bad(audit_node({"topo": capture("h100-topo-wrong-numa.txt")}, H100), "numa")
    assert numa.subject == "GPU6" and numa.verdict == "fail" and "NUMA" in numa.cause
    assert not bad(audit_node({"topo": capture("h100-topo.txt")}, H100), "numa")


def test_a_rank_bound_to_the_far_socket_fails():
    """A rank on CPUs that its GPU's NUMA node does not hold (topo -m's CPU Affinity) fails; none bound passes."""
    topo = capture("h100-topo.txt").replace("\t\t0\t\tN/A", "\t0-47\t0\t\tN/A").replace("\t1\t1\t\tN/A",
                                                                                         "\t48-95\t1\t\tN/A")
    (wrong,) = bad(audit_node({"topo": topo, "binding": "GPU0: 48-55\n"}, H100), "numa")
    assert wrong.subject == "GPU0 rank binding" and "another NUMA node" in wrong.cause
    assert not bad(audit_node({"topo": topo, "binding": "GPU0: 0-7\n"}, H100), "numa")
    assert cpu_set("0-2,8") == {0, 1, 2, 8}


def test_down_ports_and_slow_ports_fail():
    """Down is a fail naming the port; 200 Gb/s on a 400 Gb/s design is a fail; a missing NIC counts."""
    findings = audit_node({"ibstat": capture("a100-ibstat-down-port.txt")},
                          replace(H100, nics_per_node=2))
    failed = {f.subject: f for f in bad(findings)}
    assert "Down (Disabled)" == failed["mlx5_1 port 1"].measured and "port down" in failed["mlx5_1 port 1"].cause
    assert failed["mlx5_0 port 1"].measured == "200 Gb/s" and "below the designed rate" in failed["mlx5_0 port 1"].cause
    assert failed["node"].check == "nics" and failed["node"].measured == "1 active InfiniBand ports"
    (devinfo,) = bad(audit_node({"ibv_devinfo": capture("h100-ibv-devinfo-down-port.txt")}, H100), "port")
    assert devinfo.subject == "mlx5_0 port 1" and devinfo.verdict == "fail"


def test_a_missing_tool_is_a_skip_that_says_which_checks():
    findings = audit_node({}, H100)
    assert {f.verdict for f in findings} == {"skip"}
    assert any("nvidia-smi topo -m not available" in f.cause for f in findings)
    assert any("no ibstat, ibv_devinfo" in f.cause for f in findings)


@pytest.mark.parametrize("reader, text, message", [
    (parse_topo, "hello\n", "no header row starting with GPU0"),
    (parse_topo, "\tGPU0\tGPU1\nGPU0\t X \tPIXNODE\n", "GPU0: expected 2 links"),
    (parse_smi_query, "GPU 0000:19:00.0\n", "not `nvidia-smi -q` output"),
    (parse_ibstat, "State: Active\n", "not `ibstat` output"),
    (parse_ibv_devinfo, "hca_id: mlx5_0\n", "not `ibv_devinfo` output"),
    (parse_sys_files, "16.0 GT/s\n", "==> path <=="),
])
def test_text_not_in_the_tools_format_names_the_source(reader, text, message):
    with pytest.raises(ConfigError, match=message) as error:
        reader(text, source="capture.txt")
    assert str(error.value).startswith("capture.txt")


def test_topo_error_names_the_line():
    with pytest.raises(ConfigError) as error:
        parse_topo("\tGPU0\tGPU1\nGPU0\t X \tNV18\nGPU1\tNV18\tbad\n", source="t.txt")
    assert error.value.line == 3 and str(error.value).startswith("t.txt:3: GPU1")


def test_captures_folder_and_sys_text(tmp_path):
    """read_captures drops the provenance header and refuses a capture in the wrong format; sys_text prints /sys."""
    (tmp_path / "topo.txt").write_text((FIXTURES / "h100-topo.txt").read_text())
    assert read_captures(str(tmp_path))["topo"].startswith("\tGPU0")
    (tmp_path / "ibstat.txt").write_text("nothing here\n")
    with pytest.raises(ConfigError, match="ibstat.txt: not `ibstat` output"):
        read_captures(str(tmp_path))
    device = tmp_path / "root" / "sys/bus/pci/devices/0000:19:00.0"
    device.mkdir(parents=True)
    (device / "vendor").write_text("0x10de\n")
    (device / "current_link_width").write_text("8\n")
    (device / "max_link_width").write_text("16\n")
    port = tmp_path / "root" / "sys/class/infiniband/mlx5_0/ports/1"
    port.mkdir(parents=True)
    (port / "state").write_text("4: ACTIVE\n")
    (port / "rate").write_text("400 Gb/sec (4X NDR)\n")
    (port / "link_layer").write_text("InfiniBand\n")
    files = parse_sys_files(sys_text(tmp_path / "root"), source="sys")
    assert files["/sys/bus/pci/devices/0000:19:00.0/current_link_width"] == "8"
    findings = audit_node({"sys": sys_text(tmp_path / "root")}, H100)
    assert [f.verdict for f in findings if f.check == "port"] == ["pass"]
    assert [f.verdict for f in findings if f.check == "pcie"] == ["fail"]


def test_captures_from_the_lent_h200_machine():
    """topo -m as written to a file keeps its terminal escapes; one GPU, no NIC; nvidia-smi -q: Gen5 x16, 700 W."""
    assert "\x1b[4m" in capture("h200-topo.txt")
    topo = parse_topo(capture("h200-topo.txt"), source="topo")
    assert [(row.name, row.links, row.cpu_affinity, row.numa_affinity) for row in topo.gpus] == [
        ("GPU0", (), "0-15", "0")]
    (gpu,) = parse_smi_query(capture("h200-smi-q.txt"), source="smi")
    assert gpu.product == "NVIDIA H200" and (gpu.pcie_gen_current, gpu.pcie_width_current) == (5, 16)
    assert gpu.power_limit_w == 700 and gpu.mig_mode == "Disabled" and gpu.ecc_mode == "Enabled"
    findings = audit_node({"topo": capture("h200-topo.txt"), "smi": capture("h200-smi-q.txt")}, H100)
    assert [f.measured for f in findings if f.check == "gpus"] == ["1 GPUs"]    # an 8-GPU design: one is there
    assert {f.verdict for f in findings if f.check in ("pcie", "power", "ecc", "mig")} == {"pass"}
    (nvlink,) = [f for f in findings if f.check == "nvlink"]
    assert (nvlink.verdict, nvlink.cause) == ("skip", "no GPU pair to check")    # not "every GPU pair NV18"
