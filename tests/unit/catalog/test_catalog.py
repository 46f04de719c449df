import pytest

from clusterplan.catalog import Priced
from clusterplan.catalog.entries import PRICING_MODES
from clusterplan.errors import CatalogError


def all_entries(catalog):
    return [(family, entry) for family, entries in catalog.families.items() for entry in entries.values()]


def test_every_entry_has_source_and_date(catalog):
    """No figure without a source; a sourced figure keeps the date it was observed, an ASSUMPTION has none."""
    for family, entry in all_entries(catalog):
        assert entry.source.strip(), f"{family}/{entry.id} has no source"
        assumed = getattr(entry, "assumption", False)
        assert bool(entry.date.strip()) != assumed, f"{family}/{entry.id}: date {entry.date!r}, assumption {assumed}"
        if isinstance(entry, Priced) and entry.assumption:
            assert entry.source.startswith("ASSUMPTION"), f"{entry.id}: assumptions say so in their source"


def test_ids_are_unique_across_families(catalog):
    """An id names one entry, whatever its family."""
    ids = list(catalog.ids())
    assert len(ids) == len(set(ids))


def test_references_between_entries_resolve(catalog):
    """Default servers, server GPUs, fabric parts and cloud GPUs all exist."""
    for gpu in catalog.families["gpus"].values():
        assert catalog.get("servers", gpu.default_server).gpu == gpu.id
    for server in catalog.families["servers"].values():
        catalog.get("gpus", server.gpu)
    for fabric in catalog.families["fabrics"].values():
        catalog.get("nics", fabric.nic)
        switch = catalog.get("switches", fabric.switch)
        assert switch.port_rate_Bps == fabric.link_rate_Bps, fabric.id
        for module in (fabric.nic_transceiver, fabric.switch_transceiver):
            catalog.get("transceivers", module)
        catalog.get("cables", fabric.cable)
    for offer in catalog.families["cloud"].values():
        catalog.get("gpus", offer.gpu)


def test_issue_coverage(catalog):
    """The GPUs, fabrics and pricing modes the plan foundation promises are present."""
    gpus = catalog.families["gpus"]
    for gpu in ("a100-80gb-sxm", "h100-sxm", "h200-sxm", "b200", "mi300x", "l40s"):
        assert gpu in gpus
        assert gpus[gpu].hbm_bytes > 0 and gpus[gpu].bf16_flops > 0 and gpus[gpu].tdp_w > 0
    fabrics = catalog.families["fabrics"]
    rates = {(f.technology, f.link_rate_Bps * 8 / 1e9) for f in fabrics.values()}
    for wanted in (("infiniband", 200), ("infiniband", 400), ("ethernet", 100), ("ethernet", 200),
                   ("ethernet", 400)):
        assert wanted in rates
    assert {offer.pricing for offer in catalog.families["cloud"].values()} == set(PRICING_MODES)
    providers = {offer.provider for offer in catalog.families["cloud"].values()}
    assert {"AWS", "Azure", "GCP", "OCI", "Lambda", "Nebius"} <= providers


def test_lookups_are_exact_and_suggest(catalog):
    """'h100' is not 'h100-sxm'; the error suggests the near ids."""
    with pytest.raises(CatalogError, match="did you mean 'h100-sxm'"):
        catalog.get("gpus", "h100", key="cluster.gpu")


def test_price_overrides(catalog):
    """A [prices] override replaces the price and records where it came from."""
    cheaper = catalog.with_prices({"h100-sxm": 25_000.0})
    entry = cheaper.get("gpus", "h100-sxm")
    assert entry.price_usd == 25_000 and "override" in entry.source
    assert catalog.get("gpus", "h100-sxm").price_usd != 25_000
    with pytest.raises(CatalogError, match="has no price"):
        catalog.with_prices({"ib-ndr200": 1.0})


@pytest.mark.parametrize("text, message", [
    ('[x]\nname = "a"\n', "catalog/nics.toml:1: x.source: missing required key"),
    ('[x]\nname = "a"\nsource = "s"\ndate = "d"\nprice_usd = 1\nrate_Bps = "fast"\npower_w = 1\n',
     "catalog/nics.toml:6: x.rate_Bps: cannot read 'fast'"),
    ('[x]\nname = "a"\nsource = "s"\ndate = "d"\nprice_usd = 5\nprice_high_usd = 2\nrate_Bps = 1\npower_w = 1\n',
     "catalog/nics.toml:5: x.price_usd: must lie within"),
    ('[x]\nid = "y"\n', "catalog/nics.toml:2: x.id: the table name is the id"),
    ('[x\n', "catalog/nics.toml: malformed TOML"),
])
def test_malformed_catalog_files_name_file_line_and_key(text, message):
    """A bad catalog file is a CatalogError with its file, line and key."""
    from clusterplan.catalog import Nic, parse_family

    with pytest.raises(CatalogError) as error:
        parse_family(text, Nic, source="catalog/nics.toml")
    assert str(error.value).startswith(message)


def test_a_fabric_without_adaptive_routing_takes_its_technology_default():
    """An entry that does not say: InfiniBand's switches route adaptively, Ethernet (plain RoCE) hashes flows;
    an entry that says keeps what it says."""
    from clusterplan.catalog import Fabric, parse_family

    body = ('name = "x"\nlink_rate_Bps = "400Gbps"\nnic = "n"\nswitch = "s"\nnic_transceiver = "t"\n'
            'switch_transceiver = "u"\ncable = "c"\nhop_latency_s = "600ns"\nsource = "s"\ndate = "2026"\n')
    text = "".join(f'[{name}]\ntechnology = "{technology}"\n{extra}{body}\n'
                   for name, technology, extra in (("ib", "infiniband", ""), ("roce", "ethernet", ""),
                                                   ("spectrum-x", "ethernet", "adaptive_routing = true\n")))
    fabrics = parse_family(text, Fabric, source="catalog/fabrics.toml")
    assert [fabrics[name].adaptive_routing for name in ("ib", "roce", "spectrum-x")] == [True, False, True]


def test_rack_scale_entries_load_with_their_domain(catalog):
    """GB200: 2.5 PFLOP/s BF16 and 5 FP8 dense, 186 GiB at 8 TB/s, NVLink 5 at 900 GB/s a direction; its tray server
    joins 18 trays into a 72-GPU domain through 9 switch trays; an HGX server's domain is its own 8 GPUs."""
    gpu = catalog.get("gpus", "gb200")
    assert (gpu.bf16_flops, gpu.fp8_flops, gpu.hbm_bw_Bps, gpu.nvlink_bw_Bps) == (2.5e15, 5e15, 8e12, 900e9)
    assert gpu.hbm_bytes == 186 * 2**30 and gpu.tdp_w == 1200
    tray = catalog.get("servers", gpu.default_server)
    assert (tray.num_gpus, tray.max_nics, tray.nvlink_domain_gpus, tray.servers_per_domain) == (4, 4, 72, 18)
    assert catalog.get("switches", tray.domain_switch).id == "nvlink5-switch-tray" and tray.domain_switches == 9
    assert 120e3 == pytest.approx(18 * tray.max_power_w + 9 * 400, rel=1e-3)   # the rack: ~120 kW at most
    assert tray.typical_power_w == pytest.approx(0.75 * tray.max_power_w, rel=1e-3)   # Epoch's training share
    assert catalog.get("servers", "hgx-b200").nvlink_domain_gpus == 8
    assert catalog.get("servers", "gb300-nvl72").nvlink_domain_gpus == 72


@pytest.mark.parametrize(("extra", "message"), [
    ("nvlink_domain_gpus = 70\n", "x.nvlink_domain_gpus: must be whole servers of 4 GPUs, got 70"),
    ("nvlink_domain_gpus = 72\n", "x.domain_switch: a domain larger than one server needs its NVLink switch trays"),
    ('domain_switch = "nvlink5-switch-tray"\ndomain_switches = 9\n', "x.domain_switch: a domain larger"),
    ('nvlink_domain_gpus = 72\ndomain_switch = "nvlink5-switch-tray"\ndomain_switches = 9\ndomain_racks = 2\n',
     "x.domain_racks: must split the domain's 18 servers and 9 switch trays evenly, got 2"),
])
def test_a_bad_nvlink_domain_names_its_key(extra, message):
    """A domain that is not whole servers, a rack-scale domain without switch trays (or trays without one), racks
    that do not split the domain evenly."""
    from clusterplan.catalog import Server, parse_family

    text = ('[x]\nname = "a"\nsource = "s"\ndate = "d"\nprice_usd = 1\ngpu = "gb200"\nnum_gpus = 4\nmax_nics = 4\n'
            'max_power_w = 2\ntypical_power_w = 1\nrack_units = 1\n' + extra)
    with pytest.raises(CatalogError) as error:
        parse_family(text, Server, source="catalog/servers.toml")
    assert message in str(error.value)


@pytest.mark.parametrize("line, key", [("max_gpus = 0", "max_gpus"), ("max_gpus = -8", "max_gpus"),
                                       ('max_gpus = "many"', "max_gpus"), ("term_years = 0", "term_years"),
                                       ("term_years = -1.5", "term_years"), ("capacity_days = -3", "capacity_days")])
def test_an_offer_capacity_or_term_that_is_not_positive_is_an_error(line, key):
    """Every offer carries a positive capacity, a reservation a positive term; the error names the key."""
    from clusterplan.catalog import CloudOffer, parse_family
    fields = {"max_gpus": "max_gpus = 64", "term_years": "", "capacity_days": ""}
    fields[key] = line
    text = "\n".join(["[x-reserved]", 'name = "x"', 'provider = "X"', 'instance = "x8"', 'gpu = "h100-sxm"',
                      "gpus_per_instance = 8", 'pricing = "reserved-1y"', 'capacity_source = "quote"',
                      "price_usd = 2.0", 'source = "quote"', 'date = "2026"', *fields.values()])
    with pytest.raises(CatalogError) as error:
        parse_family(text, CloudOffer, source="catalog/cloud.toml")
    assert key in str(error.value)


def test_past_prices_are_marked_by_data_not_by_their_ids(catalog):
    """History is marked by ``ended`` (a month), not by an id pattern: every past AWS price before the June 2025
    cut says so, and a current offer says nothing."""
    cloud = catalog.families["cloud"]
    past = {key for key, offer in cloud.items() if offer.ended}
    assert past == {key for key in cloud if key.endswith("-pre-2025-06")}
    assert all(cloud[key].ended == "2025-06" for key in past)
