"""Is a published run still up to date? An unchanged rerun of ``make report`` skips it.

A run is up to date when its last attempt was published ``ok`` with no failed call to a real
system (a rerun would ask those again; a simulated failure repeats identically), its alert
check (with an ``alerts:`` block) ran, and none of its inputs changed since:

- the code: every file of the ``evalbench`` package (modules, templates, demo data, the
  source registry), by content (so a dirty checkout counts), and what the study's notebook
  runs (:func:`notebook_digest`: not the outputs JupyterLab saves into it);
- the params file, by content, and the ``-p`` overrides;
- every data file the run read, by content (pinned registry files by name: their sha256 is
  checked on every read and fixed by the registry, which is code);
- what the study declares it also depends on (``Study.dependencies``, e.g. the runs a
  ``compare`` study compares), a file by content, a folder by the runs in it (each
  ``*/manifest.json``, by path and content: a run that appears, changes or goes counts).

Answers already in a run's records are never asked again, so the response cache cannot
change an up-to-date run's numbers. The check reads files and manifests only (no study
package is imported), so an unchanged ``make report`` takes about a second. ``--force``
renders anyway.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from evalbench.records import parse_json, read_regular_text

PACKAGE = Path(__file__).resolve().parent
_SKIP_PARTS = {"__pycache__"}


@functools.cache
def code_digest(notebook: Path) -> str:
    """sha256 over the package's files (paths and contents, sorted) and the notebook's code
    (:func:`notebook_digest`)."""
    digest = hashlib.sha256()
    files = [p for p in PACKAGE.rglob("*") if p.is_file() and not _SKIP_PARTS & set(p.parts)]
    for path in sorted(files):
        digest.update(str(path.relative_to(PACKAGE.parent)).encode())
        digest.update(file_digest(path).encode())
    digest.update(notebook.name.encode())
    digest.update(notebook_digest(notebook).encode())
    return digest.hexdigest()


INJECTED = ("params_file", "overrides")
"""The parameters ``evalbench`` injects into every notebook it renders (papermill)."""


def notebook_digest(path: Path) -> str:
    """sha256 of what a notebook runs when rendered: each cell's type, source and
    attachments, in order.

    Not its outputs, execution counts or metadata, which JupyterLab saves into the file when
    the notebook is run by hand; nor the literal values its ``parameters`` cell gives
    :data:`INJECTED` (papermill injects a cell after it that assigns them anew) or an
    ``injected-parameters`` cell (papermill replaces it): papermill 2.7,
    ``parameterize.parameterize_notebook``. A file that is not a notebook: its bytes.
    """
    try:
        cells = parse_json(path.read_text(encoding="utf-8"))["cells"]
        parts = [_cell_code(cell) for cell in cells]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return file_digest(path)
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()


def _cell_code(cell: dict[str, Any]) -> list[str]:
    source = cell.get("source", "")
    source = "".join(source) if isinstance(source, list) else str(source)
    tags = (cell.get("metadata") or {}).get("tags") or []
    if "injected-parameters" in tags:
        return ["injected-parameters"]
    if "parameters" in tags:
        return ["parameters", _without_injected(source)]
    attachments = json.dumps(cell.get("attachments") or {}, sort_keys=True)  # pasted images
    return [str(cell.get("cell_type")), source, attachments]


def _without_injected(source: str) -> str:
    """A parameters cell's code without its literal assignments to :data:`INJECTED`."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return source
    tree.body = [node for node in tree.body if not _assigns_injected(node)]
    return ast.dump(tree)


def _assigns_injected(node: ast.stmt) -> bool:
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, ast.AnnAssign) and node.value is not None:
        targets = [node.target]
    else:
        return False
    if not all(isinstance(t, ast.Name) and t.id in INJECTED for t in targets):
        return False
    try:
        ast.literal_eval(node.value)  # type: ignore[arg-type]
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        return False  # code that runs (a call, a name): it stays part of the notebook
    return True


def file_digest(path: Path) -> str:
    """sha256 of a file's bytes (``missing`` when it is gone)."""
    if not path.is_file():
        return "missing"
    return hashlib.sha256(path.read_bytes()).hexdigest()


def dependency_digest(path: Path) -> str:
    """:func:`file_digest` of a file; of a folder, sha256 over its runs' manifests (each
    ``*/manifest.json``'s name and content, sorted), so a new run there counts."""
    if not path.is_dir():
        return file_digest(path)
    digest = hashlib.sha256()
    for manifest in sorted(path.glob("*/manifest.json")):
        digest.update(f"{manifest.parent.name}\0{file_digest(manifest)}\0".encode())
    return digest.hexdigest()


def run_inputs(
    notebook: Path,
    params_file: Path,
    overrides: Sequence[str],
    data_files: Iterable[str],
    dependencies: Iterable[Path | str],
    params_digest: str | None = None,
) -> dict[str, Any]:
    """Everything a published run's numbers depend on, as digests (see the module docstring);
    ``params_digest``: the params file's as the run loaded it (default: as it is now)."""
    return {
        "code": code_digest(notebook.resolve()),
        "params_file": params_digest or file_digest(Path(params_file)),
        "overrides": list(overrides),
        "data": {
            label: file_digest(Path(label)) if Path(label).is_absolute() else "registered"
            for label in sorted(data_files)
        },
        "dependencies": {p: dependency_digest(Path(p)) for p in sorted(map(str, dependencies))},
    }


def is_current(manifest: dict[str, Any], notebook: Path, params_file: Path,
               overrides: Sequence[str]) -> bool:  # fmt: skip
    """Whether the published run of ``manifest`` is up to date (its stored ``inputs`` equal
    the inputs now)."""
    stored = manifest.get("inputs")
    published = manifest.get("published") or {}
    if not stored or manifest.get("status") != "ok" or published.get("status") != "ok":
        return False
    alerts = manifest.get("alerts")
    if isinstance(alerts, dict) and alerts.get("due"):
        return False  # it ended before its alert check (:func:`evalbench.alerts.check.due_record`)
    simulated = set(manifest.get("simulated_names") or [])
    usage = manifest.get("usage") or []
    if any(row.get("errors") and row.get("system") not in simulated for row in usage):
        return False  # a rerun would ask the failed calls again (simulated ones fail alike)
    now = run_inputs(notebook, params_file, overrides, stored["data"], stored["dependencies"])
    return bool(json.dumps(now, sort_keys=True) == json.dumps(stored, sort_keys=True))


def find_current(
    outputs: Path, notebooks: Path, params_file: Path, overrides: Sequence[str]
) -> Path | None:
    """The run folder of ``params_file`` (with ``overrides``) whose published run is up to
    date, if any (the study's run folders are those under ``outputs/<params stem>/``; one
    that is a symbolic link is never current: a run renders only inside the outputs folder)."""
    for manifest_path in sorted((outputs / Path(params_file).stem).glob("*/manifest.json")):
        if manifest_path.parent.is_symlink() or manifest_path.parent.parent.is_symlink():
            continue
        try:
            manifest = parse_json(read_regular_text(manifest_path))
        except (OSError, ValueError):  # unreadable: never current (the run says why)
            continue
        if not isinstance(manifest, dict):
            continue
        if list(manifest.get("overrides") or []) != list(overrides):
            continue
        if Path(manifest.get("params_file", "")).resolve() != Path(params_file).resolve():
            continue
        notebook = notebooks / str(manifest.get("notebook") or "")
        if (
            notebook.is_file()
            and (manifest_path.parent / "report.html").exists()
            and is_current(manifest, notebook, params_file, overrides)
        ):
            return manifest_path.parent
    return None
