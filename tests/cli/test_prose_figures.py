"""A sentence that states a figure states one the output beside it prints (issue 30: prose that cannot drift).

In the pages that narrate command outputs (README.md, docs/README.md, docs/tour.md), every figure in a sentence
(money such as "$44.55K", counts such as "1,702", shares such as "60 %", decimals such as "0.835") must appear,
as written, in one of the same page's fenced blocks, which ``test_docs.py`` keeps equal to what the commands
print now. So "Owning beats AWS on-demand after 17 months" beside a table that prints "month 18" fails, and so
does a sentence that keeps an old figure after the output changes. Not checked: headings, table rows, images,
inline code, link targets, HTML comments, and a paragraph right after a
``<!-- prose-figures: REASON -->`` line (figures from a paper, a specification or a past version, with the reason).
"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
PAGES = [ROOT / "README.md", ROOT / "docs" / "README.md", ROOT / "docs" / "tour.md"]
FENCE = re.compile(r"^\s*```")
MARK = re.compile(r"^<!-- prose-figures: .+ -->$")
# $-money with an optional K/M/B, or a number (thousands commas, decimals) with an optional percent sign; not part
# of a word ("H100", "NDR200", "13B"), a version or an address ("3.11", "127.0.0.1"), or a path
FIGURE = re.compile(r"(?<![\w.\-/$])(\$\d[\d,]*(?:\.\d+)?[KMB]?|\d[\d,]*(?:\.\d+)?(?:\s?%)?)(?![\w/]|\.\d)")


def prose_and_outputs(path: Path) -> tuple[list[tuple[int, str]], str]:
    """(line number, text) of the prose the check reads, and every fenced block's text joined."""
    prose, outputs, inside, exempt = [], [], False, False
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if FENCE.match(line):
            inside = not inside
            continue
        if inside:
            outputs.append(line)
            continue
        if MARK.match(line.strip()):
            exempt = True
            continue
        if not line.strip():
            exempt = False
            continue
        if exempt or line.lstrip().startswith(("#", "|", "![", "<!--")):
            continue
        prose.append((number, line))
    return prose, "\n".join(outputs)


def figures(line: str) -> list[str]:
    """The figures a line of prose states, outside inline code, link targets and comments."""
    line = re.sub(r"`[^`]*`|\]\([^)]*\)|<!--.*?-->", " ", line)
    found = [match.rstrip(",") for match in FIGURE.findall(line)]
    return [figure for figure in found if len(figure.strip("%").replace(",", "")) > 1 or "$" in figure]


def printed(figure: str, outputs: str) -> bool:
    """``figure`` is in ``outputs`` as a whole figure ("17" is not in "$174.00K", "3.5" not in "13.5")."""
    return re.search(rf"(?<![\d.,]){re.escape(figure)}(?!\d|[.,]\d)", outputs) is not None


def unprinted(path: Path) -> list[str]:
    prose, outputs = prose_and_outputs(path)
    return [f"{path.relative_to(ROOT)}:{number}: {figure}" for number, line in prose for figure in figures(line)
            if not printed(figure, outputs)]


@pytest.mark.parametrize("path", PAGES, ids=[str(page.relative_to(ROOT)) for page in PAGES])
def test_every_figure_a_sentence_states_is_printed_beside_it(path):
    """Each figure in the page's prose appears, as written, in one of its command outputs."""
    assert unprinted(path) == []


def test_the_check_catches_the_readme_contradictions(tmp_path):
    """The four contradictions of issue 30, each beside the output that disproves it, are each found; the
    figures the output does print pass, and a marked paragraph is left alone."""
    page = tmp_path / "page.md"
    page.write_text("Capex per GPU is $44.55K and break-even is month 18.\n\n"
                    "It costs about $43.3K per GPU fully loaded.\n\n"
                    "Owning beats AWS on-demand after 17 months.\n\n"
                    "RoCE costs $150K more up front.\n\n"
                    "size runs in about 3.5 s of CPU.\n\n"
                    "<!-- prose-figures: a paper's figure -->\nMeta measured 38 % MFU.\n\n"
                    "```\n$ clusterplan plan\nCapex per GPU, fully loaded  $44.55K\naws-p5-on-demand  month 18\n"
                    "Capex (hardware)  -$114.85K\nOne-off  $174.00K\nsize: 13.7 s, 13.5 s\n```\n")
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        found = unprinted(page)
    finally:
        ROOT = saved
    assert [line.split(": ", 1)[1] for line in found] == ["$43.3K", "17", "$150K", "3.5"]
