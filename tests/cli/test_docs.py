"""Every command shown with its output in README.md and docs/*.md prints that output now.

A command block is a fenced block whose lines starting with ``$ `` are commands, each followed by
what it prints:

    ```
    $ clusterplan plan --format md | head -12
    ## 128 x h100-sxm ...
    ```

``clusterplan ...`` runs in process (cli.main.main, in the repository's root), ``python
benchmarks/NAME.py ...`` as a subprocess; a pipe into ``head -N`` (``-n -N``: all but the last N), ``tail -N`` or ``sed -n
'/START/,/END/p'`` is applied to the output. Both sides are compared after normalising what
changes from run to run without the figures changing (the version, torch's and Python's
versions, timestamps, trailing spaces).

An HTML comment on the line before the fence says how to treat a block:
``<!-- docs-test: skip (REASON) -->`` (timings, multi-process runs, excerpts), or
``<!-- docs-test: needs PATH -->`` (skipped where PATH, relative to the repository, is missing:
the shared validation data and traces). A block that looks like a command's output (its first
line starts with "clusterplan" or "# clusterplan") but names no command fails, so no example
escapes the test.

``CLUSTERPLAN_DOCS=write`` writes each block's output as printed now (like the golden test's
``CLUSTERPLAN_GOLDEN=write``); diff the files and read the changes before committing them.
"""

import io
import os
import re
import shlex
import subprocess
import sys
from contextlib import redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import pytest

from clusterplan.cli.main import main

ROOT = Path(__file__).parents[2]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\S*)\s*$")
MARK = re.compile(r"^<!-- docs-test: (skip|needs) (.+?) -->$")
NORMAL = [(re.compile(r"\bclusterplan \d+\.\d+\.\d+\S*"), "clusterplan VERSION"),
          (re.compile(r'"version": "[^"]*"'), '"version": "VERSION"'),
          (re.compile(r"\btorch \d+\.\d+\.\d+\S*"), "torch VERSION"),
          (re.compile(r"\bpython \d+\.\d+\.\d+"), "python VERSION"),
          (re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?"), "TIMESTAMP")]


@dataclass(frozen=True, kw_only=True)
class Block:
    """One fenced block: where it is, its language, the marker above it and its lines."""

    path: Path
    start: int            # index of the line after the opening fence
    end: int              # index of the closing fence
    language: str
    mark: tuple[str, str] | None
    lines: list[str]

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.start}"

    @property
    def commands(self) -> list[tuple[str, list[str]]]:
        """(command, expected output lines) for each ``$ `` line; a line ending in a backslash continues it."""
        out: list[tuple[str, list[str]]] = []
        for line in self.lines:
            if out and not out[-1][1] and out[-1][0].endswith("\\"):
                out[-1] = (f"{out[-1][0]}\n{line}", [])
            elif line.startswith("$ "):
                out.append((line[2:], []))
            elif out:
                out[-1][1].append(line)
        return out


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of a Markdown file (indented fences included)."""
    lines = path.read_text().splitlines()
    found, i = [], 0
    while i < len(lines):
        opening = FENCE.match(lines[i].strip())
        if opening:
            j = i + 1
            while j < len(lines) and not lines[j].strip().startswith("```"):
                j += 1
            above = MARK.match(lines[i - 1].strip()) if i else None
            found.append(Block(path=path, start=i + 1, end=j, language=opening.group(1),
                               mark=above.groups() if above else None, lines=lines[i + 1:j]))
            i = j
        i += 1
    return found


def normal(text: str) -> str:
    for pattern, replacement in NORMAL:
        text = pattern.sub(replacement, text)
    return "\n".join(line.rstrip() for line in text.rstrip("\n").splitlines())


def filtered(text: str, stage: str) -> str:
    """``text`` through one pipe stage: head -N / -n [-]N, tail -N / -n N, sed -n '/START/,/END/p'."""
    argv = shlex.split(stage)
    lines = text.splitlines(keepends=True)
    if argv[0] == "head" and argv[1:2] == ["-n"] and argv[-1].startswith("-"):   # all but the last N
        return "".join(lines[:-int(argv[-1][1:])])
    if argv[0] in ("head", "tail"):
        count = int(argv[-1].lstrip("-"))
        return "".join(lines[:count] if argv[0] == "head" else lines[-count:])
    match = re.fullmatch(r"/(.*)/,/(.*)/p", argv[-1]) if argv[:2] == ["sed", "-n"] else None
    assert match, f"cannot run '{stage}' in the docs test (head, tail or sed -n '/A/,/B/p')"
    start, end = (re.compile(part) for part in match.groups())
    out, inside = [], False
    for line in lines:
        if not inside and start.search(line):
            inside = True
            out.append(line)
        elif inside:
            out.append(line)
            if end.search(line.rstrip("\n")):
                inside = False
    return "".join(out)


def run(command: str) -> str:
    """What ``command`` prints on stdout, run from the repository's root."""
    first, *stages = [part.strip() for part in command.replace("\\\n", " ").split(" | ")]
    argv = shlex.split(first)
    if argv[0] == "clusterplan":
        buffer = io.StringIO()
        with redirect_stdout(buffer):
            code = main(argv[1:])
        assert code == 0, f"{command}: exit {code}"
        text = buffer.getvalue()
    elif argv[0] == "python" and len(argv) > 1 and argv[1].startswith("benchmarks/"):
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        done = subprocess.run([sys.executable, *argv[1:]], cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, f"{command}: exit {done.returncode}\n{done.stderr}"
        text = done.stdout
    else:
        raise AssertionError(f"cannot run '{command}' in the docs test: mark its block docs-test: skip (why)")
    for stage in stages:
        text = filtered(text, stage)
    return text


def output_blocks(path: Path) -> list[Block]:
    return [block for block in blocks(path) if block.commands and block.language in ("", "console", "text")]


@pytest.mark.parametrize("path", DOCUMENTS, ids=[str(p.relative_to(ROOT)) for p in DOCUMENTS])
def test_command_blocks_print_what_they_show(path, monkeypatch):
    """Each command block's output is what its commands print now (CLUSTERPLAN_DOCS=write records it)."""
    monkeypatch.chdir(ROOT)
    write = os.environ.get("CLUSTERPLAN_DOCS") == "write"
    lines = path.read_text().splitlines()
    stale, replaced = [], []
    for block in output_blocks(path):
        if block.mark and block.mark[0] == "skip":
            continue
        if block.mark and block.mark[0] == "needs" and not (ROOT / block.mark[1]).exists():
            continue
        printed = [(command, run(command)) for command, _ in block.commands]
        for (command, shown), (_, now) in zip(block.commands, printed):
            if normal("\n".join(shown)) != normal(now):
                stale.append(f"{block.where}: $ {command}")
        replaced.append((block, [line for command, now in printed
                                 for line in [f"$ {command}", *normal_ends(now).splitlines()]]))
    if write and stale:
        for block, new in reversed(replaced):
            lines[block.start:block.end] = new
        path.write_text("\n".join(lines) + "\n")
    assert write or not stale, ("out of date (CLUSTERPLAN_DOCS=write rewrites them; read the diff):\n"
                                + "\n".join(stale))


def normal_ends(text: str) -> str:
    """The output as written into a document: trailing spaces and blank lines at the end dropped."""
    return "\n".join(line.rstrip() for line in text.rstrip("\n").splitlines())


def looks_printed(block: Block) -> bool:
    """Output of clusterplan (its first line names it), or of a benchmark the lines above the block name."""
    above = " ".join(block.path.read_text().splitlines()[max(0, block.start - 5):block.start - 1])
    return (block.lines[0].lstrip().startswith(("clusterplan", "# clusterplan"))
            or re.search(r"python benchmarks/\w+\.py", above) is not None)


def test_every_shown_output_names_its_command():
    """A block that looks like a command's output carries its ``$`` command line (or a docs-test mark)."""
    orphans = [block.where for path in DOCUMENTS for block in blocks(path)
               if block.language in ("", "console", "text") and block.lines and not block.commands
               and block.mark is None and looks_printed(block)]
    assert orphans == []


def test_every_mark_is_read():
    """A docs-test mark sits right above a block with commands, and a skip gives its reason."""
    for path in DOCUMENTS:
        lines = path.read_text().splitlines()
        marked = {block.start - 2 for block in blocks(path) if block.mark}
        for i, line in enumerate(lines):
            if line.strip().startswith("<!-- docs-test"):
                assert MARK.match(line.strip()) and i in marked, f"{path.name}:{i + 1}: {line}"


def test_the_readme_lists_every_benchmark():
    """README's layout names every script in benchmarks/."""
    readme = (ROOT / "README.md").read_text()
    layout = readme[readme.index("## Layout"):]
    missing = [script.name for script in sorted((ROOT / "benchmarks").glob("*.py")) if script.name not in layout]
    assert missing == []
