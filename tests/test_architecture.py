"""The layers of DESIGN.md hold: imports point one way, without cycles, at the top of modules; files stay small."""

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).parents[1] / "src" / "clusterplan"
# Each layer may import itself and the layers before it, never one after it.
LAYERS = (
    {"__init__", "units", "errors", "files", "parsing", "schema", "names", "limits", "verdicts", "jobs"},
    {"catalog"},
    {"spec"},
    {"design"},
    {"cost", "perf", "reliability", "sched", "audit"},
    {"bench", "checks", "plan", "sensitivity"},
    {"report", "compare"},
    {"serve"},
    {"cli", "__main__"},
)
# The leaves of the middle layer are independent models: none imports another, nor spec.
LEAVES = {"cost", "perf", "reliability", "sched", "audit"}
LEAF_MAY_IMPORT = {"__init__", "units", "errors", "files", "parsing", "schema", "names", "catalog", "design"}
# bench runs on the measured cluster: it needs only the units, the shared collective model and the catalog types
BENCH_MAY_IMPORT = {"__init__", "units", "errors", "files", "parsing", "schema", "names", "perf", "bench"}
MAX_MODULE_LINES = 400
# The only project imports a function may defer: large parts that `clusterplan plan` without a [workload], a trace
# or --format xlsx never runs (the training search, the trace replay, the workbook writer), deferred so that its
# start-up stays under 0.5 s (issue 30; benchmarks/plan_startup.py). (module, imported module or package prefix)
DEFERRED = {("clusterplan.plan.core", "clusterplan.plan.training"), ("clusterplan.plan.scenario", "clusterplan.sched."),
            ("clusterplan.cli.plan", "clusterplan.report.xlsx")}


def modules() -> dict[str, Path]:
    return {".".join(path.relative_to(SRC.parent).with_suffix("").parts).removesuffix(".__init__"): path
            for path in SRC.rglob("*.py")}


def part(module: str) -> str:
    """The top-level part of ``clusterplan.x.y``: "x"."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def layer(module: str) -> int:
    return next(i for i, names in enumerate(LAYERS) if part(module) in names)


def imports(path: Path, module: str) -> tuple[list[str], list[tuple[str, int]]]:
    """(project modules imported at the top of the module, (any module imported inside a function, line))."""
    tree = ast.parse(path.read_text())
    top, inner = [], []
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]

    def names(node) -> list[str]:
        if isinstance(node, ast.Import):
            return [alias.name for alias in node.names]
        base = node.module or ""
        if node.level:
            base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
        # `from clusterplan.plan import core` imports the module clusterplan.plan.core
        return [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in node.names]

    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            top += names(node)
        elif isinstance(node, ast.If):   # `if TYPE_CHECKING:` blocks count as the top
            top += [name for child in ast.walk(node) if isinstance(child, (ast.Import, ast.ImportFrom))
                    for name in names(child)]
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inner += [(name, child.lineno) for child in ast.walk(node)
                      if isinstance(child, (ast.Import, ast.ImportFrom)) for name in names(child)]
    return [name for name in top if name.startswith("clusterplan")], inner


MODULES = modules()
GRAPH = {module: imports(path, module) for module, path in MODULES.items()}


def test_imports_point_one_way():
    """No module imports a layer above its own; leaves import no other leaf and no spec; bench stays apart."""
    wrong = []
    for module, (top, inner) in GRAPH.items():
        targets = top + [name for name, _ in inner if name.startswith("clusterplan")]
        for target in targets:
            if target == "clusterplan":
                continue
            if layer(target) > layer(module):
                wrong.append(f"{module} -> {target}")
            elif part(module) in LEAVES and part(target) != part(module) and part(target) not in LEAF_MAY_IMPORT:
                wrong.append(f"{module} -> {target} (a leaf model)")
            elif part(module) == "bench" and part(target) not in BENCH_MAY_IMPORT:
                wrong.append(f"{module} -> {target} (bench)")
    assert not wrong, "\n".join(wrong)


def test_no_import_cycles():
    """The module graph (top-level project imports, a package's __init__ counted as its own module) is acyclic."""
    edges = {module: {target for target in top if target in GRAPH and target != module}
             for module, (top, _) in GRAPH.items()}
    state: dict[str, int] = {}
    cycles = []

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for target in sorted(edges[node]):
            if state.get(target) == 1:
                cycles.append(" -> ".join(trail[trail.index(target):] + [node, target]) if target in trail
                              else f"{node} -> {target}")
            elif target not in state:
                visit(target, trail + [node])
        state[node] = 2

    for module in sorted(edges):
        if module not in state:
            visit(module, [])
    assert not cycles, "\n".join(cycles)


def test_project_imports_sit_at_the_top():
    """No project import hides inside a function: the graph is read at the top of each file (third-party
    packages may stay lazy where start-up time asks for it: torch, playwright, openpyxl; and the few project
    imports ``DEFERRED`` names, for `clusterplan plan`'s start-up)."""
    hidden = [f"{module}:{line} {name}" for module, (_, inner) in GRAPH.items() for name, line in inner
              if name.startswith("clusterplan") and not any(module == deferring and name.startswith(deferred)
                                                            for deferring, deferred in DEFERRED)]
    assert not hidden, "\n".join(hidden)


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_modules_stay_small(module):
    """No module over 400 lines (STYLE.md: small files)."""
    path = MODULES[module]
    assert len(path.read_text().splitlines()) <= MAX_MODULE_LINES


def test_owning_imports_no_training_workload():
    """Owning (plan.ownership: the spare nodes of the reliability model) imports neither the training workload
    (plan.workload) nor the model presets and Hugging Face reader it reads, which `clusterplan plan` without a
    [workload] never runs (issue 30's start-up budget; benchmarks/plan_startup.py)."""
    seen, todo = set(), ["clusterplan.plan.ownership"]
    while todo:
        module = todo.pop()
        if module not in seen and module in GRAPH:
            seen.add(module)
            todo.extend(GRAPH[module][0])
    assert not seen & {"clusterplan.plan.workload", "clusterplan.perf.presets", "clusterplan.perf.hf"}
