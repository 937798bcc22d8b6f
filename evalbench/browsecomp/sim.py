"""Simulated BrowseComp systems and grader (the offline ``sim`` provider); only
:mod:`.study` uses them.

- :func:`official_answer`: a latent per-question chance ``p`` (Beta around the system's
  accuracy for the topic), right with probability ``p``, stating confidence
  ``p + shift × (1 − p)`` (``shift`` 0: calibrated; > 0: overconfident), in the official
  ``Explanation / Exact Answer / Confidence`` format (``malformed_rate``: a line missing);
- :func:`agent_response`: a simulated agent's final response in the same format;
- :func:`official_grader`: reads ``Exact Answer:``, compares it with the truth (normalised
  equality), gives the true verdict with probability ``sim.accuracy`` (else the other one),
  and writes the official grader format; ``malformed_rate`` of its replies are malformed in
  the ways real graders are (a Markdown ``**correct:** yes``, prose without a verdict, a
  confidence of ``85.5%``) — which evalbench's parser, the reference regex and BrowseComp-ZH's
  parser each read differently.
"""

from __future__ import annotations

import re

import numpy as np

from evalbench.models import ChatRequest, SimReply, SimSpec
from evalbench.models.simtext import near_text

_CJK_POOL = "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工"
_EXACT = re.compile(r"^\s*\**exact answer\**\s*:\s*(.*)$", re.I | re.M)
_CONF = re.compile(r"^\s*\**confidence\**\s*:\s*(\d+)", re.I | re.M)


def latent_chance(knobs: SimSpec, topic: str, rng: np.random.Generator) -> float:
    """A question's latent P(right): Beta with mean ``accuracy_for(topic)`` (concentration 4)."""
    mean = float(np.clip(knobs.accuracy_for(topic), 0.02, 0.98))
    return float(rng.beta(4 * mean, 4 * (1 - mean)))


def stated_confidence(p: float, shift: float) -> int:
    """The confidence a simulated system states for latent chance ``p``."""
    return round(100 * min(1.0, p + shift * (1 - p)))


def format_response(answer: str, confidence: int | None, explanation: str) -> str:
    """The official response format (``Confidence`` left out when ``None``)."""
    lines = [f"Explanation: {explanation}", f"Exact Answer: {answer}"]
    if confidence is not None:
        lines.append(f"Confidence: {confidence}%")
    return "\n".join(lines)


def wrong_official(answer: str, rng: np.random.Generator) -> str:
    """A plausible wrong answer to an official question (numbers nudged, a character or a
    word changed)."""
    if re.fullmatch(r"\d+", answer):
        return str(int(answer) + int(rng.choice([-1, 1])) * int(rng.integers(1, 10)))
    if any("\u4e00" <= c <= "\u9fff" for c in answer):
        chars = list(answer)
        i = int(rng.integers(len(chars)))
        chars[i] = str(rng.choice([c for c in _CJK_POOL if c != chars[i]]))
        return "".join(chars)
    return near_text(answer, rng)


def official_answer(
    request: ChatRequest,
    knobs: SimSpec,
    rng: np.random.Generator,
    *,
    answer: str,
    topic: str,
    shift: float,
) -> SimReply:
    """A simulated system's response to an official question (see the module docstring)."""
    p = latent_chance(knobs, topic, rng)
    right = rng.random() < p
    said = answer if right else wrong_official(answer, rng)
    confidence: int | None = stated_confidence(p, shift)
    if rng.random() < knobs.malformed_rate:
        if rng.random() < 0.5:
            return SimReply(f"I believe the answer is {said}, but I am not sure.")
        confidence = None
    return SimReply(
        format_response(said, confidence, "Found by reasoning about the clues (simulated).")
    )


def agent_response(answer: str, rng: np.random.Generator, shift: float, right: bool) -> str:
    """A simulated agent's final response to an official question."""
    p = float(rng.uniform(0.55, 0.95)) if right else float(rng.uniform(0.2, 0.7))
    said = answer if right else wrong_official(answer, rng)
    return format_response(said, stated_confidence(p, shift), "Found by searching (simulated).")


def _norm(text: str) -> str:
    return re.sub(r"[\s\"'“”‘’。.,，!！]+", "", text).casefold()


def official_grader(
    request: ChatRequest,
    knobs: SimSpec,
    rng: np.random.Generator,
    *,
    answer: str,
    response: str,
) -> SimReply:
    """A simulated grader's reply in the official format (see the module docstring)."""
    found = _EXACT.search(response)
    extracted = found.group(1).strip() if found else "None"
    truly = found is not None and _norm(extracted) == _norm(answer)
    verdict = truly if rng.random() < knobs.accuracy_for(None) else not truly
    conf = _CONF.search(response)
    confidence = conf.group(1) if conf else "100"
    word = "yes" if verdict else "no"
    why = "matches" if verdict else "does not match"
    lines = [
        f"extracted_final_answer: {extracted}",
        f"reasoning: The extracted answer {why} the correct answer (simulated grader).",
        f"correct: {word}",
        f"confidence: {confidence}%",
    ]
    if rng.random() < knobs.malformed_rate:
        kind = int(rng.integers(3))
        if kind == 0:
            lines[2] = f"**correct:** {word}"
        elif kind == 1:
            lines = [f"The response {why} the correct answer."]
        else:
            lines[3] = f"confidence: {confidence}.5%"
    return SimReply("\n".join(lines))
