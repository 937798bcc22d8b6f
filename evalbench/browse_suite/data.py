"""The offline browse suite's tasks: a YAML file validated task by task.

:func:`load_suite` reads ``evalbench/demo/browse_suite/tasks.yaml`` (or your own file with the
same shape); each task is a :class:`SuiteTask`, and a bad task is one error naming
``file:line``, the task and the field. A ``dynamic`` criterion's ``allowed_from`` is resolved
from the site's changing pages (``data/changing.json``).
"""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError, model_validator

from evalbench.params import ParamsError, parse_yaml
from evalbench.records import read_utf8

from .scoring import WEIGHT_TOLERANCE, Criterion, DynamicCriterion

DEMO_DIR = Path(__file__).resolve().parents[1] / "demo" / "browse_suite"
"""The demo suite: ``tasks.yaml``, ``site/`` (the pages) and ``data/`` (dynamic routes)."""
LEVELS = (1, 2, 3, 4, 5)
LEVEL_NAMES = {
    1: "static page reading",
    2: "navigation, search, pagination",
    3: "complex pages: tables, forms, scripts",
    4: "multi-site comparison",
    5: "monitoring: pages that change between visits",
}


class SuiteTask(BaseModel):
    """One task of the offline browse suite (a mapping in the tasks file)."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
    level: int = Field(ge=1, le=5)
    """1 static page, 2 navigation/search/pagination, 3 tables/forms/scripts, 4 several
    sites, 5 pages that change between visits."""
    kind: str = Field(min_length=1)
    """The task type (``static``, ``search``, ``pagination``, ``script``, ``form``...)."""
    start: str = Field(min_length=1)
    """Where the agent starts: a page path on the suite's web (``library/index.html``)."""
    question: str = Field(min_length=1)
    expected: dict[str, JsonValue] = Field(min_length=1)
    """The expected result: one value per answer key (the keys the agent is asked for)."""
    max_steps: int = Field(ge=1, le=200)
    max_time_seconds: float = Field(gt=0, le=3600)
    criteria: list[Criterion] = Field(min_length=1)

    @model_validator(mode="after")
    def _check(self) -> SuiteTask:
        total = sum(c.weight for c in self.criteria)
        if not math.isclose(total, 1.0, abs_tol=WEIGHT_TOLERANCE):
            raise ValueError(f"criteria weights sum to {total:g}, not 1")
        unknown = sorted(
            {c.field for c in self.criteria if c.field is not None} - set(self.expected)
        )
        if unknown:
            raise ValueError(f"criteria read field(s) {unknown} that expected does not define")
        return self

    def prompt(self, start_url: str) -> str:
        """The task as the agent reads it: the question, where to start, the answer format."""
        keys = ", ".join(f'"{k}": ...' for k in self.expected)
        return (
            f"{self.question}\n\nStart at: {start_url}\n\n"
            f"When you are done, answer with only a JSON object with these keys: {{{keys}}}"
        )


def demo_tasks_path() -> Path:
    """The demo suite's tasks file."""
    return DEMO_DIR / "tasks.yaml"


def load_suite(path: Path | str = "demo", data_dir: Path | None = None) -> list[SuiteTask]:
    """The suite's tasks, validated, with ``allowed_from`` resolved from the site's changing
    pages (``data_dir/changing.json``; default: the demo site's).

    Raises:
        ParamsError: YAML syntax, or a task that does not validate (``file:line: task <id>:
            field: message``).
    """
    path = demo_tasks_path() if str(path) == "demo" else Path(path)
    text = read_utf8(path, error=ParamsError)
    data = parse_yaml(text, str(path))
    rows = data.get("tasks") if isinstance(data, dict) else None
    if not isinstance(rows, list) or not rows:
        raise ParamsError(f"{path}: expected a mapping with a non-empty list under 'tasks'")
    lines = _task_lines(text)
    tasks, seen = [], set()
    for index, row in enumerate(rows):
        where = f"{path}:{lines[index] if index < len(lines) else '?'}"
        try:
            task = SuiteTask.model_validate(row)
        except ValidationError as exc:
            err = exc.errors()[0]
            name = row.get("id", f"#{index + 1}") if isinstance(row, dict) else f"#{index + 1}"
            field = ".".join(str(p) for p in err["loc"]) or "task"
            raise ParamsError(f"{where}: task {name}: {field}: {err['msg']}") from None
        if task.id in seen:
            raise ParamsError(f"{where}: task {task.id}: id: duplicate")
        seen.add(task.id)
        tasks.append(_resolve_allowed(task, data_dir or DEMO_DIR / "data", where))
    return tasks


def _task_lines(text: str) -> list[int]:
    """1-based line of each entry of the top-level ``tasks`` list."""
    root = yaml.compose(io.StringIO(text), Loader=yaml.SafeLoader)
    for key, value in getattr(root, "value", []):
        if getattr(key, "value", None) == "tasks" and isinstance(value, yaml.SequenceNode):
            return [node.start_mark.line + 1 for node in value.value]
    return []


def _resolve_allowed(task: SuiteTask, data_dir: Path, where: str) -> SuiteTask:
    if not any(isinstance(c, DynamicCriterion) and c.allowed_from for c in task.criteria):
        return task
    changing = json.loads((data_dir / "changing.json").read_text(encoding="utf-8"))
    criteria = []
    for c in task.criteria:
        if isinstance(c, DynamicCriterion) and c.allowed_from:
            page, _, key = c.allowed_from.rpartition(":")
            states = changing.get(page)
            if not states or any(key not in s for s in states):
                raise ParamsError(
                    f"{where}: task {task.id}: allowed_from: no changing page "
                    f"{page!r} with key {key!r}"
                )
            c = c.model_copy(update={"allowed": [str(s[key]) for s in states]})
        criteria.append(c)
    return task.model_copy(update={"criteria": criteria})
