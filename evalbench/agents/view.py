"""Trajectories in reports: one collapsible ``<details>`` per task and per step, every piece
of model, tool and task text escaped (a ``<script>`` in a tool result shows as text); a
long list is sampled across end states and systems, so a crash, a timeout and a wrong
answer are all shown."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evalbench.display import count, escape, quote

STEP_CHARS = 1500  # characters of a step's arguments / result shown
SAMPLE_ORDER = ("error", "timeout", "step_limit", "answered")  # of a sample of failures


def _present(value: Any) -> bool:
    """Whether a field has something to show (not None, NaN or empty)."""
    return value is not None and value == value and value != ""


def step_html(step: Mapping[str, Any]) -> str:
    """One step: a summary line (index, kind, tool, tokens, latency, error) and its body."""
    kind = step.get("kind", "?")
    what = f"{kind} → {step['tool']}" if step.get("tool") else str(kind)
    facts = [f"#{step.get('step', '?')} {what}"]
    tokens = (step.get("prompt_tokens") or 0) + (step.get("completion_tokens") or 0)
    if tokens:
        facts.append(f"{tokens} tokens")
    if step.get("latency_s") is not None:
        facts.append(f"{step['latency_s']:.2f} s")
    if _present(step.get("error")):
        facts.append(f"error: {step['error']}")
    body = ""
    if _present(step.get("arguments")):
        body += "<div><b>arguments</b></div>" + quote(step["arguments"], limit=STEP_CHARS)
    if _present(step.get("result")):
        body += "<div><b>result</b></div>" + quote(step["result"], limit=STEP_CHARS)
    return f"<details><summary>{escape(' · '.join(facts))}</summary>{body}</details>"


def trajectory_html(
    task: Mapping[str, Any], steps: Sequence[Mapping[str, Any]], *, title: str = ""
) -> str:
    """A task's trajectory: its end state, answer and expected answer, then every step.

    Args:
        task: the task's record (``state``, ``answer``, ``steps``...), with ``expected``
            and ``question`` merged in when the study has them.
        steps: the task's step records, in order.
        title: what to call the task in the summary line.
    """
    head = (
        f"{title or task.get('task_id', '?')} — {task.get('state', '?')}, "
        f"{count(len(steps), 'step')}, {count(task.get('tool_calls', 0), 'tool call')}"
    )
    facts = []
    for name in ("question", "answer", "expected", "error", "detail"):
        if _present(task.get(name)):
            facts.append(f"<dt>{escape(name)}</dt><dd>{quote(task[name], limit=800)}</dd>")
    inner = f"<dl>{''.join(facts)}</dl>" + "".join(step_html(s) for s in steps)
    return f"<details><summary>{escape(head)}</summary>{inner}</details>"


def trajectories_html(
    tasks: Sequence[Mapping[str, Any]], steps: Sequence[Mapping[str, Any]], *, limit: int = 10
) -> str:
    """Several tasks' trajectories, each with its own steps: all of them, or a sample of
    ``limit`` across end states and systems (:func:`sample_across_states`)."""
    by_task: dict[tuple[Any, ...], list[Mapping[str, Any]]] = {}
    for step in steps:
        key = (step.get("system"), step.get("task_id"), step.get("attempt", 0))
        by_task.setdefault(key, []).append(step)
    shown = sample_across_states(tasks, limit)
    blocks = []
    for task in shown:
        key = (task.get("system"), task.get("task_id"), task.get("attempt", 0))
        ordered = sorted(by_task.get(key, []), key=lambda s: s.get("step", 0))
        blocks.append(
            trajectory_html(task, ordered, title=f"{task.get('system')} · {task.get('task_id')}")
        )
    return "".join(blocks) + _not_shown(tasks, shown) if tasks else "<p><i>none</i></p>"


def sample_across_states(tasks: Sequence[Mapping[str, Any]], limit: int) -> list[Mapping[str, Any]]:
    """Up to ``limit`` tasks, every (end state, system) group represented as far as the
    limit allows: one from each group in turn (states in :data:`SAMPLE_ORDER`, systems in
    order of appearance), then the next of each, in the input order; returned by group."""
    groups: dict[tuple[Any, Any], list[Mapping[str, Any]]] = {}
    for task in tasks:
        groups.setdefault((task.get("state"), task.get("system")), []).append(task)
    systems = list(dict.fromkeys(task.get("system") for task in tasks))
    order = sorted(groups, key=lambda g: (_state_rank(g[0]), str(g[0]), systems.index(g[1])))
    taken, budget = dict.fromkeys(order, 0), min(limit, len(tasks))
    while sum(taken.values()) < budget:  # every pass takes at least one task
        for group in order:
            if taken[group] < len(groups[group]) and sum(taken.values()) < budget:
                taken[group] += 1
    return [task for group in order for task in groups[group][: taken[group]]]


def _state_rank(state: Any) -> int:
    return SAMPLE_ORDER.index(state) if state in SAMPLE_ORDER else len(SAMPLE_ORDER)


def _not_shown(tasks: Sequence[Mapping[str, Any]], shown: Sequence[Mapping[str, Any]]) -> str:
    """``<n> more not shown (<state> <count>, ...)``, or nothing."""
    ids = {id(task) for task in shown}
    left: dict[str, int] = {}
    for task in tasks:
        if id(task) not in ids:
            left[str(task.get("state"))] = left.get(str(task.get("state")), 0) + 1
    if not left:
        return ""
    counts = ", ".join(f"{state} {n}" for state, n in left.items())
    return f"<p><small>{escape(f'{sum(left.values())} more not shown ({counts})')}</small></p>"
