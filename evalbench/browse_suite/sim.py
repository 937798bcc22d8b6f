"""Simulated browse-suite systems and judge (the offline ``sim`` provider); only
:mod:`.study` uses them.

- a simulated browsing agent is :mod:`evalbench.agents.sim` (steps, tool mix, timeouts and
  success by level from the system's ``sim_agent`` and ``sim.accuracy`` knobs) with
  :func:`suite_wrong_answer` as its wrong answer: the expected JSON with some fields wrong
  in a plausible way (a number a little off, a near-miss name, a list missing an item or with
  an extra one, a ticket number in the right format that the page never showed, a vaguer
  summary, or a field left out), so criteria scores are partial, not all-or-nothing;
- a simulated chat model (no browsing) answers :func:`suite_chat_answer`;
- the simulated criterion judge (:func:`suite_judge`) scores a text by its word overlap with
  the reference, plus the judge's ``noise`` and ``leniency``; ``malformed_rate`` of its
  replies carry no score (unscored).
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np

from evalbench.models import ChatRequest, SimReply, SimSpec
from evalbench.models.simtext import near_text

_WORD = re.compile(r"\w+", re.UNICODE)


def suite_wrong_answer(truth: Any, rng: np.random.Generator, share: float = 0.5) -> str:
    """A partly wrong answer to a suite task whose expected JSON is ``truth``: each field is
    wrong with probability ``share`` (at least one is)."""
    expected = json.loads(str(truth))
    keys = list(expected)
    wrong = [k for k in keys if rng.random() < share] or [keys[int(rng.integers(len(keys)))]]
    answer: dict[str, Any] = {}
    for key in keys:
        if key not in wrong:
            answer[key] = expected[key]
        elif rng.random() < 0.12:
            continue  # left out: the criterion reads "missing"
        else:
            answer[key] = perturb(expected[key], rng)
    return json.dumps(answer, ensure_ascii=False)


def perturb(value: Any, rng: np.random.Generator) -> Any:
    """A plausible wrong value of the same shape as ``value``."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return _near_number(value, rng)
    if isinstance(value, list):
        return _near_list(value, rng)
    text = str(value)
    if re.fullmatch(r"[A-Z]{2}-\d{5}", text):  # a ticket: right format, never shown
        return f"{text[:3]}{int(text[3:]) + int(rng.integers(1, 9)):05d}"
    if len(text.split()) > 8:
        return _vaguer(text, rng)
    if re.fullmatch(r"[\d:\- .]+", text):
        return _other_digit(text, rng)
    return near_text(text, rng)


def _near_number(value: float, rng: np.random.Generator) -> float | int:
    if isinstance(value, int) or float(value).is_integer():
        step = max(1, round(abs(value) * 0.15))
        return int(value) + int(rng.choice([-1, 1])) * int(rng.integers(1, step + 1))
    factor = 1 + float(rng.choice([-1, 1])) * float(rng.uniform(0.08, 0.3))
    return round(value * factor, 2)


def _near_list(items: list[Any], rng: np.random.Generator) -> list[Any]:
    out = list(items)
    if len(out) > 1 and rng.random() < 0.6:
        del out[int(rng.integers(len(out)))]
    else:
        out.append(str(rng.choice(["Friday", "Kestrel", "Spirit Level", "Hillcrest", "Sunday"])))
    return out


def _vaguer(text: str, rng: np.random.Generator) -> str:
    words = text.split()
    keep = max(4, int(len(words) * float(rng.uniform(0.2, 0.5))))
    return " ".join(words[:keep]) + " (the rest was unclear)."


def _other_digit(text: str, rng: np.random.Generator) -> str:
    spots = [i for i, c in enumerate(text) if c.isdigit()]
    i = spots[int(rng.integers(len(spots)))] if spots else 0
    digit = str((int(text[i]) + int(rng.integers(1, 9))) % 10) if spots else "1"
    return text[:i] + digit + text[i + 1 :]


def suite_chat_answer(
    request: ChatRequest, knobs: SimSpec, rng: np.random.Generator, *, truth: str, level: int
) -> SimReply:
    """A simulated chat model (it cannot browse) answering a suite task."""
    if rng.random() < knobs.malformed_rate:
        return SimReply("I cannot open web pages, so I cannot check this.")
    right = rng.random() < knobs.accuracy_for(level)
    return SimReply(truth if right else suite_wrong_answer(truth, rng, share=0.9))


def suite_judge(
    request: ChatRequest, knobs: SimSpec, rng: np.random.Generator, *, reference: str, text: str
) -> SimReply:
    """A simulated criterion judge: word overlap with the reference, noise, leniency."""
    if rng.random() < knobs.malformed_rate:
        return SimReply("The answer looks broadly reasonable to me.")
    ref, got = set(_WORD.findall(reference.lower())), set(_WORD.findall(text.lower()))
    overlap = len(ref & got) / len(ref) if ref else 0.0
    score = 10 * min(1.0, 1.4 * overlap) + knobs.leniency + float(rng.normal(0, knobs.noise))
    score = int(np.clip(round(score), 0, 10))
    return SimReply(json.dumps({"score": score, "reason": f"overlap {overlap:.0%} (simulated)"}))
