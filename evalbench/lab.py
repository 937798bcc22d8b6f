"""``evalbench publish``: the run a notebook made by hand (JupyterLab), or a run folder, as
the params file and overrides that ``evalbench run`` renders.

A notebook run by hand writes its run's records into the run folder (or, when that folder
is published, into its lab folder: :func:`evalbench.runs.folder_for_kernel`) but never a
report: what a kernel shows depends on the order its cells were run and edited in, so a
report is always rendered from a clean papermill execution of the study's own notebook,
top to bottom, in a fresh namespace. Publishing is that execution, by
:func:`evalbench.publish.run_study` exactly as ``evalbench run`` does it (the same run
folder, ``report.html``, ``summary.html``, the index rebuilt). It resumes the records the
notebook wrote, so no answered call is asked again.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any, NamedTuple

from evalbench.freshness import INJECTED
from evalbench.params import params_hash
from evalbench.records import parse_json
from evalbench.runs import lab_folder, read_manifest, run_dir_for
from evalbench.settings import get_settings
from evalbench.studies import load_params, notebook_for


class NotPublishable(ValueError):
    """A notebook or folder that names no run to publish (the message says why, in a line)."""


class Target(NamedTuple):
    """What ``evalbench publish`` renders: as ``evalbench run PARAMS_FILE -p OVERRIDE ...``."""

    params_file: Path
    overrides: list[str]


def publish_target(target: Path) -> Target:
    """The run a notebook (its parameters) or a run folder (its manifest) stands for.

    Raises:
        NotPublishable: not a notebook or run folder, no parameters cell, no such params
            file, a notebook that does not render this study, a params file changed since.
        evalbench.params.ParamsError: the params file or an override is invalid.
    """
    if target.suffix == ".ipynb":
        return _from_notebook(target)
    if target.is_dir():
        return _from_run_folder(target)
    raise NotPublishable(f"{target}: not a notebook (.ipynb) or a run folder")


def notebook_parameters(path: Path) -> dict[str, Any]:
    """The values a notebook gives :data:`~evalbench.freshness.INJECTED` when papermill runs
    it unchanged: those its first ``parameters`` cell assigns, then (winning) those of an
    ``injected-parameters`` cell, which papermill inserts after it (an executed copy).

    Raises:
        NotPublishable: no such file, not a notebook, neither cell, a value not a literal.
    """
    return _parameters(_cells(path), path)


def _parameters(cells: list[Any], path: Path) -> dict[str, Any]:
    """:func:`notebook_parameters` of the notebook at ``path`` whose cells are ``cells``."""
    found = [_tagged(cells, tag) for tag in ("parameters", "injected-parameters")]
    if found == [None, None]:
        raise NotPublishable(f"{path}: no cell tagged `parameters` (papermill's parameters "
                             "cell, which sets params_file and overrides)")  # fmt: skip
    values: dict[str, Any] = {}
    for cell in found:
        if cell is not None:
            values |= _assignments(cell, path)
    return values


def _cells(path: Path) -> list[Any]:
    if not path.is_file():
        raise NotPublishable(f"{path}: no such notebook")
    try:
        cells = parse_json(path.read_text(encoding="utf-8"))["cells"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise NotPublishable(f"{path}: not a notebook ({type(exc).__name__})") from None
    if not isinstance(cells, list):
        raise NotPublishable(f"{path}: not a notebook (cells is not a list)")
    return cells


def _tagged(cells: list[Any], tag: str) -> str | None:
    """The source of the first code cell tagged ``tag`` (papermill's choice), if any."""
    for cell in cells:
        meta = cell.get("metadata") if isinstance(cell, dict) else None
        tags = meta.get("tags") if isinstance(meta, dict) else None
        if isinstance(tags, list) and tag in tags and cell.get("cell_type") == "code":
            source = cell.get("source", "")
            return "".join(map(str, source)) if isinstance(source, list) else str(source)
    return None


def _assignments(source: str, path: Path) -> dict[str, Any]:
    """The literal values a cell assigns to :data:`INJECTED` at its top level."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise NotPublishable(f"{path}: its parameters cell is not Python ({exc})") from None
    values: dict[str, Any] = {}
    plain = {id(n.targets[0] if isinstance(n, ast.Assign) else n.target)  # type: ignore[attr-defined]
             for n in tree.body if _target(n) in INJECTED}  # fmt: skip
    for name in ast.walk(tree):  # `overrides += [...]`, `if x: overrides = ...`: not read
        if (isinstance(name, ast.Name) and isinstance(name.ctx, ast.Store)
                and name.id in INJECTED and id(name) not in plain):  # fmt: skip
            raise NotPublishable(f"{path}: parameters cell line {name.lineno}: {name.id} is "
                                 "set other than by a plain top-level assignment (publish "
                                 "reads literal values)")  # fmt: skip
    for node in tree.body:
        target = _target(node)
        if target not in INJECTED:
            continue
        try:
            values[target] = ast.literal_eval(node.value)  # type: ignore[attr-defined]
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            raise NotPublishable(f"{path}: parameters cell line {node.lineno}: {target} is not "
                                 "a literal (publish reads literal values)") from None  # fmt: skip
    return values


def _target(node: ast.stmt) -> str | None:
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = node.targets[0]
    elif isinstance(node, ast.AnnAssign) and node.value is not None:
        target = node.target
    else:
        return None
    return target.id if isinstance(target, ast.Name) else None


def _from_notebook(path: Path) -> Target:
    cells = _cells(path)  # read once: a notebook saved with its figures can be megabytes
    values = _parameters(cells, path)
    where = f"{path}: its parameters cell"
    if "params_file" not in values:
        raise NotPublishable(f"{where} sets no params_file")
    target = _checked(values["params_file"], values.get("overrides", []), where)
    params = load_params(*target)
    own = get_settings().project_root / "notebooks" / notebook_for(params)
    if path.resolve() != own.resolve():
        raise NotPublishable(
            f"{path}: {values['params_file']} is a {params.study} study, which evalbench "
            f"renders with notebooks/{own.name} (a copy's own cells would not be in the "
            "report): set these parameters in that notebook, or publish the run folder"
        )
    now = run_dir_for(target.params_file, params)
    for ran in session_runs(cells):
        if ran.parent.name != now.parent.name:
            raise NotPublishable(
                f"{path}: its saved outputs are of a session that ran another params file "
                f"(run {ran.parent.name}/{ran.name}): run the notebook again with these "
                f"parameters, `evalbench run {values['params_file']}`, or publish that run's "
                "folder"
            )
        if ran.name != now.name:
            raise NotPublishable(
                f"{path}: {values['params_file']} has changed since this notebook's session "
                f"(its outputs name run {ran.name}; the file's content now is run {now.name}): "
                "publish renders a params file's current content; restore it, or "
                "`evalbench run` it"
            )
    return target


SESSION = re.compile(
    r"^evalbench: (?:this session writes (.+) \(records, no report\); publish"
    r"|.* is published and stays as it is .*; this session works in (.+)$)"
)
"""The line a notebook run by hand prints first (:func:`evalbench.studies.open_run`)."""


def session_runs(cells: list[Any]) -> list[Path]:
    """The run folders (``<study>/<run id>``, as printed) a notebook's saved outputs (of its
    ``cells``) say its session wrote (none for a notebook saved without outputs)."""
    found = []
    outputs = [o for c in cells if isinstance(c, dict) for o in c.get("outputs") or []]
    for output in outputs:
        text = output.get("text") if isinstance(output, dict) else None
        if isinstance(text, list):
            text = "".join(str(part) for part in text)
        for line in text.splitlines() if isinstance(text, str) else []:
            if match := SESSION.match(line):
                found.append(Path(match[1] or match[2]))
    return list(dict.fromkeys(found))


def _checked(params_file: Any, overrides: Any, where: str) -> Target:
    """``params_file`` resolved as :func:`evalbench.studies.open_run` does, both checked."""
    if not isinstance(params_file, str) or not params_file:
        raise NotPublishable(f"{where}: params_file must be a path (a string)")
    if not isinstance(overrides, list) or not all(isinstance(o, str) for o in overrides):
        raise NotPublishable(f"{where}: overrides must be a list of strings (key=value)")
    path = Path(params_file)
    if not path.is_absolute():
        path = get_settings().project_root / path
    if not path.is_file():
        raise NotPublishable(f"{where}: params_file {params_file}: no such file ({path})")
    return Target(path, list(overrides))


def _from_run_folder(folder: Path) -> Target:
    try:
        manifest = read_manifest(folder)
    except (OSError, ValueError) as exc:
        raise NotPublishable(f"{folder}: unreadable manifest ({exc})") from None
    if not (folder / "manifest.json").exists():
        raise NotPublishable(f"{folder}: not a run folder (no manifest.json)")
    where = f"{folder}/manifest.json"
    target = _checked(manifest.get("params_file"), manifest.get("overrides") or [], where)
    params = load_params(*target)
    rendered = run_dir_for(target.params_file, params)
    if folder.resolve() in (rendered.resolve(), lab_folder(rendered).resolve()):
        return target
    if folder.name != params_hash(params):
        raise NotPublishable(
            f"{folder}: {target.params_file} has changed since this run (run {folder.name}; "
            f"its content now is run {rendered.name}): publish renders a params file's current "
            "content; restore it, or `evalbench run` it"
        )
    raise NotPublishable(f"{folder}: not where evalbench renders this run ({rendered}; "
                         "EVALBENCH_OUTPUTS sets the outputs folder)")  # fmt: skip
