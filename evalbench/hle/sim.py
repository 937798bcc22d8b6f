"""Simulated HLE systems and judges (the offline ``sim`` provider), with known truth.

- A simulated **system** has a latent chance ``p`` of answering each question right, drawn
  from ``Beta(a·k, (1 − a)·k)`` around its accuracy ``a`` for the question's category
  (``sim.accuracy``, per category with ``default``) with concentration ``k``; it answers
  right with probability ``p`` and states a confidence: ``p`` itself when
  ``calibrated`` (so P(right | stated c) = c), or ``p + shift·(1 − p)`` when
  ``overconfident``. With ``sim.malformed_rate`` it drops its ``Confidence:`` line (a
  perfect judge then writes 100, as the judge prompt says) or its ``Answer:`` line.
- A simulated **judge** (official prompt) reads the ``Answer:`` and ``Confidence:`` lines,
  gives the true verdict with probability ``sim.accuracy`` (else the opposite), replies
  with JSON when the request carries a ``response_format`` (structured) and with the
  ``field: value`` text form otherwise (sometimes ``**correct:** Yes.``), and with
  ``sim.malformed_rate`` writes one of five flawed outputs, chosen uniformly: prose, no
  ``correct`` field, ``correct: maybe`` (those three are unscored), confidence 850
  (out of range) or 0.85 (a fraction).

Only :mod:`evalbench.hle.study` uses this module.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import NamedTuple

import numpy as np

from evalbench.models import ChatRequest, SimReply, SimSpec

from .records import ConfidenceKnob

_ANSWER_LINE = re.compile(r"^\s*\**(?:exact\s+)?answer\**\s*:\s*(.+?)\s*$", re.I | re.M)
_CONFIDENCE_LINE = re.compile(r"^\s*\**confidence\**\s*:\s*([0-9.]+)\s*%?", re.I | re.M)
_CHOICE = re.compile(r"^\s*([A-Z])[.)]\s", re.M)
_JUDGE_FLAWS = ("prose", "no_verdict", "maybe", "out_of_range", "fraction")


class SimOutcome(NamedTuple):
    """One simulated system's hidden outcome on one question."""

    p_correct: float
    correct: bool
    stated: int
    """The confidence it states, in percent."""


def draw_outcome(
    knobs: SimSpec, confidence: ConfidenceKnob, category: str, rng: np.random.Generator
) -> SimOutcome:
    """Draw ``p``, whether the answer is right, and the stated confidence (see the module
    docstring). Draws, in order: one beta, one uniform."""
    a = float(np.clip(knobs.accuracy_for(category), 1e-3, 1 - 1e-3))
    k = confidence.concentration
    p = float(rng.beta(a * k, (1 - a) * k))
    correct = bool(rng.random() < p)
    stated = p if confidence.style == "calibrated" else p + confidence.shift * (1 - p)
    return SimOutcome(p, correct, round(100 * stated))


def wrong_answer(answer: str, answer_type: str, question: str, rng: np.random.Generator) -> str:
    """A plausible wrong answer that :func:`is_right` rejects (another choice letter, a
    nearby number, or a near-miss string)."""
    if answer_type == "multipleChoice":
        letters = [c for c in _CHOICE.findall(question) if c != answer.strip().upper()]
        return str(rng.choice(letters)) if letters else ("B" if answer.strip() == "A" else "A")
    for _ in range(20):
        candidate = _perturb(answer, rng)
        if not is_right(candidate, answer):
            return candidate
    return f"not {answer}"


def _perturb(answer: str, rng: np.random.Generator) -> str:
    text = answer.strip()
    try:
        value = float(text.replace(",", ""))
    except ValueError:
        value = None
    if value is not None:
        if value.is_integer() and "." not in text:
            step = max(1, int(abs(value) * 0.1))
            return str(int(value) + int(rng.choice([-1, 1])) * int(rng.integers(1, step + 1)))
        decimals = len(text.split(".")[1]) if "." in text else 2
        return f"{value * (1 + rng.choice([-1, 1]) * rng.uniform(0.05, 0.3)):.{decimals}f}"
    if len(text) > 2:
        i = int(rng.integers(0, len(text) - 1))
        return text[:i] + text[i + 1] + text[i] + text[i + 2 :]
    return text + "x"


def normalize(answer: str) -> str:
    """Lower case, spaces collapsed, a trailing period dropped (the sim judge's matching)."""
    return " ".join(answer.strip().rstrip(".").lower().split())


def is_right(stated: str, correct_answer: str) -> bool:
    """Whether a stated answer matches the correct one after :func:`normalize`."""
    return normalize(stated) == normalize(correct_answer)


def stated_answer(response: str) -> str | None:
    """The last ``Answer:`` (or ``Exact Answer:``) line of a response, if any."""
    found = _ANSWER_LINE.findall(response)
    return found[-1] if found else None


def stated_confidence(response: str) -> float | None:
    """The last ``Confidence: N%`` of a response (percent), if any."""
    found = _CONFIDENCE_LINE.findall(response)
    try:
        return float(found[-1]) if found else None
    except ValueError:
        return None


def response_truth(
    response: str | None, correct_answer: str, p_correct: float
) -> dict[str, float | bool | None]:
    """The truth of one simulated response: is its stated answer right, its latent ``p``, and
    the confidence a perfect judge extracts (stated, or 100 when none is stated)."""
    answer = stated_answer(response or "")
    conf = stated_confidence(response or "")
    return {
        "correct": answer is not None and is_right(answer, correct_answer),
        "p_correct": p_correct,
        "stated": 100.0 if conf is None else conf,
    }


def answer_reply(
    request: ChatRequest, knobs: SimSpec, rng: np.random.Generator, *, answer: str, stated: int
) -> SimReply:
    """A simulated system's response in the official format (``answer`` is already the right
    or the wrong one). Draws: one uniform, one integer, one integer."""
    flawed = rng.random() < knobs.malformed_rate
    flaw = int(rng.integers(2))
    steps = max(1, round(knobs.verbosity * (1 + int(rng.integers(0, 3)))))
    explanation = " ".join(f"Step {i + 1}: simulated reasoning." for i in range(steps))
    lines = [f"Explanation: {explanation}", f"Answer: {answer}", f"Confidence: {stated}%"]
    if flawed:
        lines = lines[:2] if flaw == 0 else [lines[0], "I cannot settle on one answer."]
    return SimReply("\n".join(lines))


def judge_reply(
    request: ChatRequest,
    knobs: SimSpec,
    rng: np.random.Generator,
    *,
    correct_answer: str,
    response: str,
) -> SimReply:
    """A simulated official-prompt judge's output (see the module docstring). Draws: four
    uniforms and one integer."""
    extracted = stated_answer(response)
    right = extracted is not None and is_right(extracted, correct_answer)
    verdict = right if rng.random() < knobs.accuracy_for("judge") else not right
    confidence = stated_confidence(response)
    flawed = rng.random() < knobs.malformed_rate
    flaw = _JUDGE_FLAWS[int(rng.integers(len(_JUDGE_FLAWS)))]
    markdown = rng.random() < 0.3
    fields: dict[str, object] = {
        "extracted_final_answer": extracted or "None",
        "reasoning": "Simulated comparison of the extracted answer with the correct answer.",
        "correct": "yes" if verdict else "no",
        "confidence": round(confidence) if confidence is not None else 100,
    }
    if flawed:
        kept = _flawed(fields, flaw)
        if kept is None:
            return SimReply("I am not able to judge this response.")
        fields = kept
    if request.response_format is not None:
        return SimReply(json.dumps({**fields, "strict": True}))
    return SimReply(_judge_text(fields, markdown))


def _flawed(fields: dict[str, object], flaw: str) -> dict[str, object] | None:
    if flaw == "prose":
        return None
    if flaw == "no_verdict":
        return {k: v for k, v in fields.items() if k != "correct"}
    if flaw == "maybe":
        return {**fields, "correct": "maybe"}
    return {**fields, "confidence": 850 if flaw == "out_of_range" else 0.85}


def _judge_text(fields: Mapping[str, object], markdown: bool) -> str:
    lines = []
    for name, value in fields.items():
        if markdown and name == "correct":
            lines.append(f"**correct:** {str(value).capitalize()}.")
        elif markdown and name == "confidence" and isinstance(value, int):  # 0.85 stays bare
            lines.append(f"**confidence:** {value}%")
        else:
            lines.append(f"{name}: {value}")
    return "\n\n".join(lines)
