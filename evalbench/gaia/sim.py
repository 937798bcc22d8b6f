"""Simulated GAIA assistants and semantic judge (the offline ``sim`` provider), known truth.

- A simulated **assistant** answers correctly with its configured per-level probability, else
  a plausible wrong answer of the same type that the official scorer marks wrong; it
  sometimes forgets the ``FINAL ANSWER:`` template. With ``sim_variant_rate`` it writes a
  right answer in another, equivalent form (:func:`~.equivalence.equivalent_forms`: ``42`` as
  ``forty-two`` or ``四十二``, ``12600`` as ``3.5 hours``, a list in another order where none
  is asked), preferring forms the official scorer rejects.
- A simulated **semantic judge** (:func:`semantic_reply`) knows the truth
  (:func:`~.equivalence.equivalent`) and gives it with probability ``sim.accuracy`` (one
  number, or per case: ``same`` = the official scorer also accepts the answer, ``variant`` =
  equivalent but rejected by it, ``different`` = not equivalent), else the opposite; with
  ``sim.malformed_rate`` it writes one of three unreadable outputs (prose, "maybe", both
  verdicts), chosen uniformly, that the parser leaves unscored.

Only :mod:`evalbench.gaia.study` uses this module.
"""

from __future__ import annotations

import re

import numpy as np

from evalbench.judge.matching import MatchPrompt
from evalbench.models import ChatRequest, SimReply, SimSpec

from .equivalence import equivalent, equivalent_forms, semantic_case
from .scoring import is_float, question_scorer

_JUDGE_FLAWS = ("prose", "maybe", "both")


def sim_answer(
    request: ChatRequest,
    knobs: SimSpec,
    rng: np.random.Generator,
    *,
    expected: str | None,
    level: int,
    question: str = "",
    variant_rate: float = 0.0,
) -> SimReply:
    """A simulated assistant's answer to one GAIA item (the ``sim`` provider).

    Correct with probability ``knobs.accuracy_for(level)``; otherwise a plausible wrong
    answer of the same type (a nearby number, a list with one element changed or two
    swapped, a near-miss string). With probability ``knobs.malformed_rate`` it forgets the
    ``FINAL ANSWER:`` template (a "no answer"). The reasoning trace's length follows
    ``knobs.verbosity``. With probability ``variant_rate`` a right answer is written in an
    equivalent form (:func:`equivalent_variant`); that draw comes last, so an assistant
    without variants draws exactly what it always did.
    """
    steps = max(1, round(knobs.verbosity * (1 + level + int(rng.integers(0, 3)))))
    trace = "\n".join(f"Step {i + 1}: working on the question." for i in range(steps))
    if rng.random() < knobs.malformed_rate:
        return SimReply(f"{trace}\nI could not settle on an answer.")
    truth = expected if expected is not None else "unknown"
    right = rng.random() < knobs.accuracy_for(level)
    answer = truth if right else plausible_wrong(truth, rng)
    if right and variant_rate and rng.random() < variant_rate:
        answer = equivalent_variant(truth, question, rng)
    return SimReply(f"{trace}\nFINAL ANSWER: {answer}")


def equivalent_variant(truth: str, question: str, rng: np.random.Generator) -> str:
    """One of :func:`~.equivalence.equivalent_forms` of ``truth``, drawn uniformly among those
    the official scorer rejects (else among all); ``truth`` itself when it has none."""
    forms = equivalent_forms(truth, question)
    rejected = [form for form in forms if not question_scorer(form, truth)]
    pool = rejected or forms
    return pool[int(rng.integers(len(pool)))] if pool else truth


def plausible_wrong(truth: str, rng: np.random.Generator) -> str:
    """An answer of the same type as ``truth`` that the official scorer marks wrong."""
    for _ in range(20):
        candidate = _perturb(truth, rng)
        if not question_scorer(candidate, truth):
            return candidate
    return f"not {truth}"


def _perturb(truth: str, rng: np.random.Generator) -> str:
    if is_float(truth):
        return _perturb_number(truth, rng)
    if any(sep in truth for sep in ",;"):
        parts = [p.strip() for p in re.split(r"[,;]", truth)]
        if len(parts) > 1 and rng.random() < 0.5:
            i = int(rng.integers(0, len(parts) - 1))
            parts[i], parts[i + 1] = parts[i + 1], parts[i]
        else:
            i = int(rng.integers(0, len(parts)))
            parts[i] = _perturb(parts[i], rng) if parts[i] else "x"
        return ", ".join(parts)
    return _perturb_text(truth, rng)


def _perturb_number(truth: str, rng: np.random.Generator) -> str:
    value = float(truth.replace(",", ""))
    if value.is_integer() and "." not in truth:
        step = max(1, int(abs(value) * 0.1))
        return str(int(value) + int(rng.choice([-1, 1])) * int(rng.integers(1, step + 1)))
    decimals = len(truth.split(".")[1]) if "." in truth else 2
    return f"{value * (1 + rng.choice([-1, 1]) * rng.uniform(0.05, 0.25)):.{decimals}f}"


def _perturb_text(truth: str, rng: np.random.Generator) -> str:
    words = truth.split()
    if len(words) > 1:
        del words[int(rng.integers(0, len(words)))]
        return " ".join(words)
    if len(truth) > 2:
        i = int(rng.integers(0, len(truth) - 1))
        return truth[:i] + truth[i + 1] + truth[i] + truth[i + 2 :]
    return truth + "s"


# ---------------------------------------------------------------------------- the judge


def semantic_reply(
    request: ChatRequest,
    knobs: SimSpec,
    rng: np.random.Generator,
    *,
    prompt: MatchPrompt,
    answer: str,
    expected: str,
    question: str,
) -> SimReply:
    """A simulated semantic judge's output in ``prompt``'s format (see the module docstring).
    Draws: two uniforms, then one integer when the output is malformed."""
    truth = equivalent(answer, expected, question)
    case = semantic_case(truth, question_scorer(answer, expected))
    verdict = truth if rng.random() < knobs.accuracy_for(case) else not truth
    if rng.random() < knobs.malformed_rate:
        return SimReply(_flawed(prompt, _JUDGE_FLAWS[int(rng.integers(len(_JUDGE_FLAWS)))]))
    if prompt == "equality_checker":
        return SimReply("Yes" if verdict else "No")
    return SimReply(
        f"extracted_final_answer: {' '.join(answer.split())}\n\n"
        "reasoning: Simulated comparison of the extracted answer with the correct answer.\n\n"
        f"correct: {'yes' if verdict else 'no'}\n\nconfidence: 100"
    )


def _flawed(prompt: MatchPrompt, flaw: str) -> str:
    if flaw == "prose":
        return "I cannot tell whether the two answers are the same."
    if prompt == "equality_checker":
        return "Maybe" if flaw == "maybe" else "Yes or No"
    return "correct: maybe" if flaw == "maybe" else "correct: yes\n\ncorrect: no"
