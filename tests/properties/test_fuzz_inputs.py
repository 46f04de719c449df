"""A bounded fuzz suite over every input surface (issue 19): scenario --set values, config.json fields, nccl-tests
rows and trace lines through the real CLI in process, and issue 31's nesting, long numbers, special files and
hostile -o targets; each example exits 0, 2 or 3, without a traceback, an
exit 2 in one line naming its key or file, and leaves nothing behind.

benchmarks/fuzz_campaign.py holds the surfaces and checks and runs a larger budget; here each surface runs a
small fixed budget from a fixed seed (about 10 s in all on a quiet 2-core machine), and prints its counts.
"""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[2] / "benchmarks"))
fuzz_campaign = pytest.importorskip("fuzz_campaign")

BUDGET = {"set": 60, "config": 40, "nccl": 60, "trace": 40, "nesting": 20, "digits": 20, "files": 20, "output": 20}


@pytest.mark.parametrize("surface", sorted(BUDGET))
def test_every_example_keeps_the_contract(surface, capsys):
    """The surface's examples all keep the contract; the counts are printed (pytest -s shows them)."""
    fuzz_campaign.campaign(surface, BUDGET[surface], seed_value=19)
    counts = {code: n for (name, code), n in fuzz_campaign.TALLY.counts.items() if name == surface}
    assert sum(counts.values()) >= BUDGET[surface] // 2 and set(counts) <= {0, 2, 3}
    with capsys.disabled():
        print(f"\n  fuzz: {fuzz_campaign.TALLY.surface(surface)}")
