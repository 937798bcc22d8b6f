"""The package's layers, read from the source (``ast``), so a forbidden import fails here.

- Every benchmark package (a package the registry points at) has the same shape:
  ``__init__, data, scoring, metrics, records, study, report``, and may have ``figures`` and
  ``sim``. Any other module of a package is a *helper* of its pure layers.
- Within a package, a module may import only the roles below it:

  ======================  =================================================
  role                    never imports (this package's)
  ======================  =================================================
  data, scoring, metrics  study, report, figures, sim
  helpers                 study, report, figures, sim
  records                 study, report, figures, sim
  report                  study, figures, sim
  figures                 study, report, sim
  sim                     study, report, figures
  ======================  =================================================

  (any role may use the types in ``records``; the loop test keeps ``records`` from importing
  them back), and from core: ``data/scoring/metrics`` and helpers never import ``runs``, ``display``,
  ``models``; ``records`` never ``runs``, ``display``, ``plots``; ``report`` never ``runs`` or
  ``plots`` (nor matplotlib): text only. Only ``study`` imports ``sim``.
- No benchmark imports another benchmark; no core module imports a benchmark.
- No import loop between two modules, counting every import: function-local and
  ``TYPE_CHECKING`` ones included.
- No parameter named ``run`` or ``params`` is typed ``Any``; no module is over 800 lines.
"""

from __future__ import annotations

import ast
import functools
import sys
from collections.abc import Iterator, Set
from pathlib import Path

import pytest

from evalbench.studies import STUDY_KINDS

# one test process parses every module (~2 s), not each of `make test`'s three
pytestmark = pytest.mark.xdist_group("layers")

PACKAGE = Path(__file__).resolve().parents[1] / "evalbench"
SHAPE = ("__init__", "data", "scoring", "metrics", "records", "study", "report")
OPTIONAL = ("figures", "sim")
PURE = ("data", "scoring", "metrics")
OWN_FORBIDDEN = {
    **{role: {"study", "report", "figures", "sim"} for role in PURE},
    "helper": {"study", "report", "figures", "sim"},
    "records": {"study", "report", "figures", "sim"},
    "report": {"study", "figures", "sim"},
    "figures": {"study", "report", "sim"},
    "sim": {"study", "report", "figures"},
}
CORE_FORBIDDEN = {
    **{role: {"runs", "display", "models"} for role in PURE},
    "helper": {"runs", "display", "models"},
    "records": {"runs", "display", "plots"},
    "report": {"runs", "plots"},
}
MAX_LINES = 800
BENCHMARKS = sorted({module.split(".")[1] for module in STUDY_KINDS.values()})


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def module_name(path: Path) -> str:
    """``evalbench/gaia/report.py`` -> ``evalbench.gaia.report``; a package's ``__init__`` is
    the package."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _tree(path: Path) -> ast.Module:
    """``path`` parsed, once per content: three tests walk every module (~300 files)."""
    return _parse(path, path.read_text(encoding="utf-8"))


@functools.cache
def _parse(path: Path, text: str) -> ast.Module:
    return ast.parse(text, filename=str(path))


@functools.cache
def _known() -> frozenset[str]:
    return frozenset(module_name(p) for p in _modules())


def _import_nodes(path: Path) -> Iterator[ast.Import | ast.ImportFrom]:
    for node in ast.walk(_tree(path)):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node


def imports_of(path: Path, known: Set[str] | None = None) -> set[str]:
    """Every ``evalbench`` module ``path`` imports, anywhere in the file (relative resolved).

    ``from pkg import name`` counts as importing ``pkg.name`` when that is a module (in
    ``known``), else ``pkg``: ``from . import report`` imports the report module, not the
    package whose ``__init__`` imports the study.
    """
    known = known if known is not None else _known()
    own = module_name(path)
    package = own if path.name == "__init__.py" else own.rpartition(".")[0]
    found = set()
    for node in _import_nodes(path):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
            continue
        base = _absolute(node, package)
        for alias in node.names:
            found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
    return {n for n in found if n == "evalbench" or n.startswith("evalbench.")}


def _absolute(node: ast.ImportFrom, package: str) -> str:
    if not node.level:
        return node.module or ""
    parts = package.split(".")
    base = parts[: len(parts) - node.level + 1]
    return ".".join([*base, *([node.module] if node.module else [])])


def _benchmark_of(name: str) -> str | None:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in BENCHMARKS else None


def role_of(path: Path) -> str:
    """A benchmark module's role: its file name when standard, else ``helper``."""
    stem = path.stem
    return stem if stem in (*SHAPE, *OPTIONAL) else "helper"


def layer_violations(path: Path) -> list[str]:
    """Every layer rule ``path`` breaks (empty when it keeps them all)."""
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    own = _benchmark_of(".".join(rel.parts))
    role = role_of(path) if own else "core"
    problems = []
    for name in sorted(imports_of(path)):
        other = _benchmark_of(name)
        target = name.split(".")[2] if other and name.count(".") >= 2 else ""
        if own is None and other is not None and rel.parts[-1] != "studies":
            problems.append(f"core module {rel} imports benchmark {name}")
        elif own is not None and other is not None and other != own:
            problems.append(f"{rel} imports another benchmark: {name}")
        elif other == own and target in OWN_FORBIDDEN.get(role, set()):
            problems.append(f"{rel} ({role}) imports {name}")
        elif other == own and target == "sim" and role not in ("study", "sim"):
            problems.append(f"{rel} imports the simulator {name} (only study.py may)")
        elif (
            own
            and other is None
            and name.split(".")[1:2]
            and (name.split(".")[1] in CORE_FORBIDDEN.get(role, set()))
        ):
            problems.append(f"{rel} ({role}) imports {name}")
    if role == "report" and _imports_matplotlib(path):
        problems.append(f"{rel} (report) imports matplotlib: figures live in figures.py")
    return problems


def _imports_matplotlib(path: Path) -> bool:
    names = set()
    for node in _import_nodes(path):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif node.module and not node.level:
            names.add(node.module)
    return any(n == "matplotlib" or n.startswith(("matplotlib.", "seaborn")) for n in names)


def import_graph() -> dict[str, set[str]]:
    """Module -> the evalbench modules it imports (every import in the file)."""
    known = {module_name(p) for p in _modules()}
    return {
        module_name(p): {n for n in imports_of(p, known) if n in known} - {module_name(p)}
        for p in _modules()
    }


def import_loops(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    loops = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    loops.append(sorted(component))
    return loops


def any_typed(path: Path) -> list[str]:
    """``run`` / ``params`` parameters annotated ``Any`` in ``path`` (``name:line``)."""
    found = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
            for arg in args:
                note = ast.unparse(arg.annotation) if arg.annotation else ""
                if arg.arg in ("run", "params") and note in ("Any", "typing.Any"):
                    found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} {arg.arg}")
    return found


@pytest.mark.parametrize("bench", BENCHMARKS)
def test_every_benchmark_has_the_package_shape(bench: str) -> None:
    folder = PACKAGE / bench
    missing = [name for name in SHAPE if not (folder / f"{name}.py").is_file()]
    assert not missing, f"evalbench/{bench}/ lacks {missing}"


@pytest.mark.slow  # over ~1 s
def test_no_module_breaks_a_layer_rule() -> None:
    problems = [p for path in _modules() for p in layer_violations(path)]
    assert not problems, "\n".join(problems)


@pytest.mark.slow
def test_no_import_loop_between_two_modules() -> None:
    loops = import_loops(import_graph())
    assert not loops, "\n".join(" <-> ".join(loop) for loop in loops)


@pytest.mark.slow
def test_no_run_or_params_is_typed_any() -> None:
    found = [f for path in _modules() for f in any_typed(path)]
    assert not found, "\n".join(found)


def test_no_module_is_over_800_lines() -> None:
    sizes = {path: len(path.read_text(encoding="utf-8").splitlines()) for path in _modules()}
    big = {str(p.relative_to(PACKAGE.parent)): n for p, n in sizes.items() if n > MAX_LINES}
    assert not big, big


def test_the_rules_catch_a_forbidden_import(tmp_path: Path, monkeypatch) -> None:
    """The checker itself: each rule fires on a module written to break it."""
    fake = tmp_path / "evalbench"
    bench = BENCHMARKS[0]
    (fake / bench).mkdir(parents=True)
    cases = {
        "scoring.py": "from evalbench.models import ChatRequest\n",
        "metrics.py": "from . import sim\n",
        "sim.py": f"from evalbench.{bench}.study import run\n",
        "data.py": f"import evalbench.{BENCHMARKS[-1]}.scoring\n",
        "report.py": "def f():\n    from .study import run\n",
        "figures.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import report\n",
        "records.py": "from evalbench.runs import Run\n",
        "checker.py": "from .study import STUDY\n",
    }
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", fake)
    for name in ("study", *OWN_FORBIDDEN):  # every role's module exists, so names resolve
        (fake / bench / f"{name}.py").touch()
    for name, source in cases.items():
        path = fake / bench / name
        path.write_text(source)
        assert layer_violations(path), f"{name}: {source!r} was not caught"
    plotting = fake / bench / "report.py"
    plotting.write_text("import matplotlib.pyplot as plt\n")
    assert layer_violations(plotting)
    clean = fake / bench / "study.py"
    clean.write_text("from . import sim, scoring, report\nfrom evalbench.models import Job\n")
    assert layer_violations(clean) == []


def test_the_loop_finder_finds_function_local_and_type_checking_loops() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"} - {"e"}, "f": {"g"},
             "g": {"f"}}  # fmt: skip
    assert sorted(import_loops(graph)) == [["a", "b", "c"], ["f", "g"]]
    assert import_loops({"a": {"b"}, "b": set()}) == []


def test_any_typed_run_is_found(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", tmp_path / "evalbench")
    path = tmp_path / "m.py"
    path.write_text("from typing import Any\ndef run(run: Any, *, params: Any = None): ...\n")
    assert any_typed(path) == ["m.py:2 run", "m.py:2 params"]
