import re
import typing
from pathlib import Path

import pytest

from clusterplan.errors import ConfigError
from clusterplan.limits import LIMITS, _number
from clusterplan.spec import load_scenario, load_spec


def write(tmp_path, text, name="scenario.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_reference_scenario_is_the_issue_cluster(reference):
    """The shipped reference: 16 x 8 H100 SXM, 8 NDR200 NICs, fat-tree of automatic tiers (two), 200 TB, 50 kW, $0.12, 3 y."""
    assert (reference.cluster.gpu, reference.cluster.num_nodes, reference.cluster.gpus_per_node) == ("h100-sxm", 16, 8)
    assert (reference.network.fabric, reference.network.nics_per_node) == ("ib-ndr200", 8)
    assert (reference.network.topology, reference.network.tiers, reference.network.oversubscription) == \
        ("fat-tree", 0, 1.0)
    assert reference.storage.usable_tb is None and reference.storage.tier == "nvme-pfs"   # "auto"
    assert reference.storage.tb_per_gpu * reference.cluster.num_gpus == 200
    assert reference.staff.ops_engineers is None and reference.staff.setup_engineers is None   # "auto"
    assert reference.facility.rack_power_kw == 50 and reference.facility.cooling == "liquid"
    assert reference.facility.electricity_usd_per_kwh == 0.12 and reference.finance.years == 3


def test_file_overrides_reference_and_set_overrides_file(tmp_path):
    """CLI > file > reference, key by key."""
    path = write(tmp_path, "[cluster]\nnum_nodes = 4\n[finance]\nyears = 5\n")
    spec = load_spec(path, ["finance.years=2", "network.fabric=ib-ndr200"])
    assert spec.cluster.num_nodes == 4
    assert spec.finance.years == 2
    assert spec.cluster.gpu == "h100-sxm"


def test_set_values_are_read_as_toml_else_as_strings():
    """--set takes TOML values (numbers, lists) and bare strings."""
    spec = load_spec(None, ['cloud.offers=["aws-p5-on-demand"]', "network.topology=rail-optimized",
                            "facility.rack_power_kw=40kW"])
    assert spec.cloud.offers == ("aws-p5-on-demand",)
    assert spec.network.topology == "rail-optimized"
    assert spec.facility.rack_power_kw == 40


def test_unit_strings_convert_into_the_key_unit(tmp_path):
    """usable_tb = "2PB" is 2000 TB; rack_power_kw = "40000W" is 40 kW."""
    path = write(tmp_path, '[storage]\nusable_tb = "2PB"\n[facility]\nrack_power_kw = "40000W"\n')
    spec = load_spec(path)
    assert spec.storage.usable_tb == 2000 and spec.facility.rack_power_kw == 40


@pytest.mark.parametrize("text, where", [
    ("[cluster]\nnum_nodes = 0\n", "scenario.toml:2: cluster.num_nodes: must be > 0, got 0"),
    ("[cluster]\ngpus = 8\n", "scenario.toml:2: cluster.gpus: unknown key"),
    ("[cluster]\nnum_gpus = 12\n", "scenario.toml:2: cluster.num_gpus: 12 GPUs are not whole nodes of 8"),
    ("[cluster]\nnum_nodes = 4\nnum_gpus = 64\n",
     "scenario.toml:3: cluster.num_gpus: 64 GPUs conflict with cluster.num_nodes = 4"),
    ("[clusters]\nnum_nodes = 8\n", "scenario.toml:1: clusters: unknown section (did you mean 'cluster'"),
    ("[cluster]\n\nnum_nodes = \"many\"\n", "scenario.toml:3: cluster.num_nodes: expected an integer"),
    ("[network]\noversubscription = 0.5\n", "scenario.toml:2: network.oversubscription: must be >= 1"),
    ("[facility]\nrack_power_kw = \"50 kg\"\n", "scenario.toml:2: facility.rack_power_kw: unknown unit 'kg'"),
    ("[finance]\nutilization = 0\n", "scenario.toml:2: finance.utilization: must be in (0, 1]"),
    ("[cluster\nnum_nodes = 3\n", "scenario.toml:1: malformed TOML"),
    ("[cluster]\nnum_nodes = 3\nnum_nodes = 4\n", "scenario.toml:3: malformed TOML"),
    ("[workload]\nmodle = \"llama\"\n", "scenario.toml:2: workload.modle: unknown key (did you mean 'model'?)"),
    ("[reliability]\ndays = 0\n", "scenario.toml:2: reliability.days: must be > 0, got 0"),
    ("[reliability]\ncheckpoint_interval_min = -1\n",
     "scenario.toml:2: reliability.checkpoint_interval_min: must be >= 0, got -1"),
    ("[reliability]\nfailure_rates = { gpu = -0.1 }\n",
     "scenario.toml:2: reliability.failure_rates.gpu: must be > 0 per 1000 component-days, got -0.1"),
    ("[reliability]\nfailures = [\"gpu\", \"gpu\"]\n", "scenario.toml:2: reliability.failures: names a cause twice"),
    ("[reliability]\nasync_checkpoints = true\n",
     "scenario.toml:2: reliability.async_checkpoints: unknown key (did you mean 'async_checkpoint'"),
    ("[storage]\nburst_buffer_tb = -1\n", "scenario.toml:2: storage.burst_buffer_tb: must be >= 0, got -1"),
])
def test_bad_files_name_file_line_and_key(tmp_path, text, where):
    """Every bad value is a ConfigError whose text starts with file:line: key."""
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as error:
        load_spec(path)
    assert str(error.value).replace(f"{tmp_path}/", "").startswith(where)


def test_bad_set_names_the_override():
    """A faulty --set names itself and the key."""
    with pytest.raises(ConfigError, match=r"^--set cluster.num_nodes=-2: cluster.num_nodes: must be > 0"):
        load_spec(None, ["cluster.num_nodes=-2"])
    with pytest.raises(ConfigError, match=r"expected section.key=value"):
        load_spec(None, ["cluster.num_nodes"])


def test_missing_file_is_a_config_error(tmp_path):
    """A scenario path that does not exist is bad input, not a crash."""
    with pytest.raises(ConfigError, match="cannot read scenario"):
        load_spec(tmp_path / "absent.toml")


def test_scenario_locates_errors_found_later(tmp_path):
    """A catalog id error raised after loading is traced back to its file line."""
    path = write(tmp_path, '[cluster]\n\ngpu = "h100"\n')
    scenario = load_scenario(path)
    located = scenario.locate(ConfigError("unknown gpu id 'h100'", key="cluster.gpu"))
    assert (located.source, located.line, located.key) == (str(path), 3, "cluster.gpu")
    assert scenario.locate(ConfigError("x", key="network.fabric")).source == "reference scenario"


def test_reference_example_is_the_shipped_reference(reference):
    """examples/reference-128x-h100.toml and the built-in default cannot drift apart."""
    from pathlib import Path

    example = Path(__file__).parents[2] / "examples" / "reference-128x-h100.toml"
    assert load_spec(example) == reference
    assert example.read_text() == (Path(__file__).parents[2] / "src" / "clusterplan" / "scenarios"
                                   / "reference.toml").read_text()


def test_a_byte_order_mark_is_accepted(tmp_path):
    """A scenario saved with a UTF-8 BOM reads like one without (regression, issue 19 item 4)."""
    path = tmp_path / "bom.toml"
    path.write_bytes(b"\xef\xbb\xbf[cluster]\nnum_nodes = 4\n")
    assert load_spec(path).cluster.num_nodes == 4


def test_a_nul_character_is_refused_where_it_is_given():
    """A NUL in any string value (a path here) is an error naming the key, not an OSError later (issue 19 item 4)."""
    with pytest.raises(ConfigError, match=r"workload\.model_config: must not contain a NUL character"):
        load_spec(None, ['workload.model_config="a\\u0000b"'])


def is_integer(key: str) -> bool:
    section, _, name = key.partition(".")
    return typing.get_type_hints(type(getattr(load_spec(), section)))[name] is int


@pytest.mark.parametrize("key", [*LIMITS, "prices.h100-sxm", "reliability.failure_rates.gpu"])
def test_every_number_is_finite_and_within_its_stated_range(key):
    """Past-the-limit values, and inf, nan and 1e999 for the real-valued keys, are one error naming the key; the
    limit's own message where the key has no narrower rule (issue 19 item 1)."""
    rate = key.endswith(".gpu")
    setting = "reliability.failure_rates" if rate else key
    high = LIMITS.get(key, (0, 1e9))[1]

    def refused(value: str, message: str) -> None:
        with pytest.raises(ConfigError, match=re.escape(f"{key}: {message}")):
            load_spec(None, [f"{setting}={{gpu = {value}}}" if rate else f"{setting}={value}"])

    refused(repr(int(high) * 10 if key in LIMITS and is_integer(key) else high * 10),
            "must be in (0, 1]" if key == "finance.utilization" else "must be between ")
    if key in LIMITS and is_integer(key):
        return
    for bad in ("inf", "nan", "1e999"):
        refused(bad, "must be a finite number")


def test_the_limits_are_documented():
    """docs/scenario.md's Limits table lists every key with its range."""
    text = (Path(__file__).parents[2] / "docs" / "scenario.md").read_text()
    for key, (low, high) in LIMITS.items():
        assert f"| `{key}` | {_number(low)} | {_number(high)} |" in text


@pytest.mark.parametrize("override, message", [
    ("network.oversubscription=inf", "network.oversubscription: must be a finite number, got inf"),
    ("storage.usable_tb=nan", "storage.usable_tb: must be a finite number, got nan"),
    ('storage.usable_tb="1e309TB"', "storage.usable_tb: must be a finite number, got '1e309TB'"),
    ("cluster.num_nodes=200000", "cluster.num_nodes: must be between 1 and 100,000, got 200,000"),
    ("storage.usable_tb=1e20", "storage.usable_tb: must be between 0 and 1,000,000, got 1e+20"),
    ("storage.burst_buffer_tb=2e6", "storage.burst_buffer_tb: must be between 0 and 1,000,000"),
    ("workload.seq_len=99999999999999999999", "workload.seq_len: must be at most 9,007,199,254,740,992 in size"),
    ("reliability.repair_hours=1e20", "reliability.repair_hours: must be between 0 and 8,760, got 1e+20")])
def test_impossible_sizes_are_errors_not_crashes(override, message):
    """Regression: inf, nan and absurd sizes (found by the live page's fuzzing) named the key instead of an
    OverflowError, a ValueError or (1e20 TB of storage) all the machine's memory."""
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_spec(None, [override])


def test_bare_word_value_gets_the_quote_hint(tmp_path):
    """Issue 30: `model = llama3-70b` under [workload] says how to write it."""
    path = write(tmp_path, "[cluster]\nnum_nodes = 2\n\n[workload]\nmodel = llama3-70b  # the preset\n")
    with pytest.raises(ConfigError) as error:
        load_spec(path)
    assert str(error.value) == f'{path}:5: workload.model = llama3-70b: strings need quotes in TOML: "llama3-70b"'


def test_other_invalid_values_keep_the_parser_message(tmp_path):
    with pytest.raises(ConfigError, match=r":2: malformed TOML: Invalid value"):
        load_spec(write(tmp_path, "[cluster]\nnum_nodes = @\n"))


@pytest.mark.parametrize("value, message", [
    ("[" * 500, "--set: cluster.num_nodes: arrays and tables nested more than 64 deep"),
    ("1" * 5000, "--set: cluster.num_nodes: a number of 5000 digits; at most 100"),
])
def test_set_bounds_nesting_and_digits(value, message):
    """Issue 31: 500 `[` or 5,000 digits in --set (RecursionError, int-string limit) are bad input."""
    with pytest.raises(ConfigError) as error:
        load_spec(None, [f"cluster.num_nodes={value}"])
    assert str(error.value) == message


@pytest.mark.parametrize("value, line", [("[" * 500, 2), ("9" * 5000, 2)])
def test_scenario_bounds_nesting_and_digits(tmp_path, value, line):
    path = write(tmp_path, f"[cluster]\nnum_nodes = {value}\n")
    with pytest.raises(ConfigError) as error:
        load_spec(path)
    assert (error.value.source, error.value.line) == (str(path), line)


def test_set_value_not_utf8_is_named():
    """`--set $'about.name=\\xff'` reaches Python as a surrogate escape; it is bad input, not a crash later."""
    with pytest.raises(ConfigError) as error:
        load_spec(None, ["about.name=\udcff"])
    assert str(error.value) == r"--set: about.name: not UTF-8 text: \xff"


def test_num_gpus_on_the_command_line_wins_over_a_files_num_nodes(tmp_path):
    """`--gpus N` (cluster.num_gpus by --set) over a file's num_nodes sizes the cluster; a --set num_nodes over a
    file's num_gpus wins too (CLI > file); both at one level must agree (issue 29: one meaning of --gpus)."""
    nodes = write(tmp_path, "[cluster]\nnum_nodes = 16\n")
    assert load_spec(nodes, ["cluster.num_gpus=256"]).cluster.num_nodes == 32
    gpus = write(tmp_path, "[cluster]\nnum_gpus = 256\n", name="gpus.toml")
    assert load_spec(gpus).cluster.num_nodes == 32
    assert load_spec(gpus, ["cluster.num_nodes=4"]).cluster.num_nodes == 4
    with pytest.raises(ConfigError, match="1,024 GPUs conflict with cluster.num_nodes = 16"):
        load_spec(None, ["cluster.num_gpus=1024", "cluster.num_nodes=16"])


def test_synthetic_trace_is_one_predicate():
    """finance.utilization_from_trace asks for a generated trace when it is "synthetic" or "synthetic:..." (the
    predicate the planner, the live server's budget and the file guard share); anything else names a file."""
    from clusterplan.schema import file_values
    from clusterplan.spec import load_spec, synthetic_trace
    assert synthetic_trace("synthetic") and synthetic_trace("synthetic:jobs=100,load=0.5")
    assert not synthetic_trace("synthetic.csv") and not synthetic_trace("") and not synthetic_trace("traces/synthetic")
    spec = load_spec(overrides=['finance.utilization_from_trace="synthetic:jobs=10"'])
    assert "finance.utilization_from_trace" not in file_values(spec)
