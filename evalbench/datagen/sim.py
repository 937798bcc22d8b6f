"""The simulated generator and reviewer, with known ground truth (offline demo).

:func:`sim_generation_output` writes what a generator model would write: templated
problems whose integer answers are computed in code, malformed outputs (answer 1000,
missing solution, prose) and light copies of the reference problem, as fenced or bare
JSON, sometimes with LaTeX single backslashes. Each simulated problem's hidden quality is
:func:`sim_true_quality` of its text, so a simulated judge that only sees the text can
recover it; real problems' is :data:`REAL_TRUE_QUALITY`. A simulated reviewer
(:func:`sim_review`) scores around the same truth. Only :mod:`evalbench.datagen.study`
imports this module.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from fractions import Fraction
from typing import Any, Literal, NamedTuple

import numpy as np
import pandas as pd

from evalbench.models import ChatRequest, SimReply, SimSpec

from .duplicates import normalize_problem_text
from .scoring import DIMENSIONS, PASS_SCORE, require_topic
from .verification import Verification, make_verification

REAL_TRUE_QUALITY = 4.5
"""Hidden true quality (1–5) of every real AIME problem for the simulated judges.

Real contest problems are well posed, correct and at AIME difficulty, so they sit near the
top of the scale; 4.5 (not 5) leaves room for a simulated generator to match or beat them.
"""
LOGIT_PER_POINT = 1.0
"""Log-odds per quality point for the simulated pairwise judge.

A quality ``q`` on 1–5 becomes the latent ``(q - 3) * LOGIT_PER_POINT`` of
:class:`evalbench.judge.PairTask`, so for an unbiased judge with no tie band
``P(generated beats real) = σ(q_generated − 4.5)``: a problem one point worse than a real
one wins 27% of its comparisons, an equally good one 50%.
"""
SIM_REVIEW_NOISE = 0.5
"""Standard deviation (scale points) of the simulated reviewer's scores around the truth."""
SIM_REVIEW_TIME = datetime(2025, 1, 1, tzinfo=timezone.utc)
"""Time stamp of simulated reviews (fixed, so a rerun writes the same file)."""


def quality_logit(quality: float) -> float:
    """A 1–5 quality on the pairwise judge's log-odds scale (see :data:`LOGIT_PER_POINT`)."""
    return LOGIT_PER_POINT * (quality - 3.0)


class SimGeneration(NamedTuple):
    """What the simulated generator wrote, with its hidden truth."""

    text: str
    """The output text, as a model would return it."""
    kind: Literal["valid", "malformed", "copy"]
    """``valid`` (a fresh templated problem), ``malformed`` or ``copy`` of the reference."""
    detail: str
    """Format or defect: ``fenced``, ``bare``, ``prose_json`` (+ ``+raw_latex``),
    ``answer_1000``, ``missing_solution``, ``prose``."""
    answer: int | None
    """The correct answer of the problem written (``None`` for prose, and for a copy, whose
    changed numbers make the stated reference answer unreliable)."""
    true_quality: float
    """Hidden quality on 1–5; equals ``sim_true_quality(problem)`` (NaN without a problem)."""


_SIM_FORMATS = ("fenced", "bare", "prose_json")
SIM_RAW_LATEX_RATE = 0.3
"""Share of simulated JSON outputs that write LaTeX with single backslashes."""
_SIM_CANDIDATES = 10
_SIM_QUALITY_SD = 0.6


def sim_true_quality(problem: str) -> float:
    """The hidden quality (1–5) of a simulated problem, derived from its text alone.

    A stable hash of :func:`normalize_problem_text` mapped to [1, 5], so a simulated
    judge that only sees the problem text can recover the truth. The simulated generator
    makes its mean match its ``quality`` knob by choosing among candidate problems.
    """
    digest = hashlib.sha256(normalize_problem_text(problem).encode()).digest()
    return 1.0 + 4.0 * int.from_bytes(digest[:6], "big") / float(1 << 48)


def sim_generation_output(
    reference_row: Mapping[str, Any],
    topic: str,
    *,
    rng: np.random.Generator,
    quality: float = 3.5,
    malformed_rate: float = 0.0,
    copy_rate: float = 0.0,
) -> SimGeneration:
    """The text a generator model would write for one generation prompt (simulated).

    With probability ``malformed_rate`` the output is invalid (answer 1000, the solution
    missing, or prose without JSON); with ``copy_rate`` it is a lightly edited copy of
    the reference problem (:func:`lightly_edit`); otherwise a templated problem on
    ``topic`` whose integer answer (0–999) is computed in code. JSON outputs are fenced,
    bare, or after a line of prose, and in :data:`SIM_RAW_LATEX_RATE` of cases write
    LaTeX with single backslashes (invalid JSON that :func:`~.scoring.parse_generated` repairs;
    never for text with ``\\u...`` such as ``\\underline``, which cannot be repaired).

    The hidden quality of a problem is :func:`sim_true_quality` of its text; among
    ``10`` candidate problems the one closest to a draw from ``N(quality, 0.6)`` (clipped
    to 1–5) is written, so the mean true quality tracks ``quality``. Deterministic for the
    state of ``rng``.

    ``reference_row`` is the real problem shown in the prompt (``problem``, ``answer``);
    ``quality`` is the sim knob ``SimSpec.quality``.
    """
    topic = require_topic(topic)
    draw = rng.random()
    if draw < copy_rate:
        problem = lightly_edit(str(reference_row["problem"]), rng)
        solution = "Adapting the standard approach to this setting gives the answer directly."
        fields = _fields(problem, int(reference_row["answer"]), solution, topic)
        return _sim_json(rng, fields, truth=None, kind="copy")
    problem, solution, answer = _pick_candidate(topic, rng, quality)
    if draw < copy_rate + malformed_rate:
        return _sim_malformed(rng, _fields(problem, answer, solution, topic))
    return _sim_json(rng, _fields(problem, answer, solution, topic), truth=answer, kind="valid")


def sim_generate(
    request: ChatRequest,
    knobs: SimSpec,
    rng: np.random.Generator,
    *,
    reference_problem: str,
    reference_answer: int,
    topic: str,
) -> SimReply:
    """The ``sim`` provider's generator: :func:`sim_generation_output` with the spec's knobs
    ``quality``, ``malformed_rate`` and ``copy_rate`` (the request itself is not read)."""
    out = sim_generation_output(
        {"problem": reference_problem, "answer": reference_answer},
        topic,
        rng=rng,
        quality=knobs.quality,
        malformed_rate=knobs.malformed_rate,
        copy_rate=knobs.copy_rate,
    )
    return SimReply(out.text)


def _fields(problem: str, answer: int, solution: str, topic: str) -> dict[str, Any]:
    return {"problem": problem, "answer": answer, "solution": solution, "topic": topic}


def _pick_candidate(topic: str, rng: np.random.Generator, quality: float) -> tuple[str, str, int]:
    target = float(np.clip(rng.normal(quality, _SIM_QUALITY_SD), 1.0, 5.0))
    candidates = [_SIM_TEMPLATES[topic](rng) for _ in range(_SIM_CANDIDATES)]
    return min(candidates, key=lambda c: abs(sim_true_quality(c[0]) - target))


def _sim_json(
    rng: np.random.Generator,
    fields: dict[str, Any],
    *,
    truth: int | None,
    kind: Literal["valid", "malformed", "copy"],
    defect: str = "",
) -> SimGeneration:
    body = json.dumps(fields, indent=2, ensure_ascii=False)
    fmt = _SIM_FORMATS[int(rng.integers(len(_SIM_FORMATS)))]
    detail = defect or fmt
    latex = "\\\\" in body  # an escaped backslash: the text has LaTeX
    # \u... (\underline) cannot be told from a JSON unicode escape, so no repair can save it
    if latex and "\\\\u" not in body and rng.random() < SIM_RAW_LATEX_RATE:
        body = body.replace("\\\\", "\\")  # what models write: LaTeX unescaped in JSON
        detail += "+raw_latex"
    text = {
        "fenced": f"```json\n{body}\n```",
        "bare": body,
        "prose_json": f"Here is an original AIME-style problem.\n\n{body}\n",
    }[fmt]
    return SimGeneration(text, kind, detail, truth, sim_true_quality(fields["problem"]))


def _sim_malformed(rng: np.random.Generator, fields: dict[str, Any]) -> SimGeneration:
    defect = ("answer_1000", "missing_solution", "prose")[int(rng.integers(3))]
    if defect == "answer_1000":
        wrong = {**fields, "answer": 1000}
        return _sim_json(rng, wrong, truth=fields["answer"], kind="malformed", defect=defect)
    if defect == "missing_solution":
        partial = {k: v for k, v in fields.items() if k != "solution"}
        return _sim_json(rng, partial, truth=fields["answer"], kind="malformed", defect=defect)
    text = (
        "I considered several ideas for a problem on this topic, but could not make the "
        "answer come out as an integer between 0 and 999, so I stopped here."
    )
    return SimGeneration(text, "malformed", defect, None, float("nan"))


_EDIT_SWAPS = (
    ("Find", "Determine"),
    ("Let ", "Now let "),
    ("such that", "so that"),
    ("positive integers", "positive whole numbers"),
    ("the number of", "how many"),
    ("probability", "chance"),
    ("is divided by", "is divided through by"),
    ("where", "in which"),
    ("There exist", "There are"),
    ("real numbers", "reals"),
)


def lightly_edit(text: str, rng: np.random.Generator, *, swaps: int = 2) -> str:
    """A light copy of a problem: every number outside LaTeX commands changed, and up to
    ``swaps`` phrases replaced by near-synonyms (what a copying generator does)."""
    present = [pair for pair in _EDIT_SWAPS if pair[0] in text]
    if present:
        for k in rng.permutation(len(present))[:swaps]:
            old, new = present[int(k)]
            text = text.replace(old, new, 1)
    return re.sub(
        r"(?<![\\A-Za-z0-9])\d+", lambda m: str(int(m.group()) + int(rng.integers(1, 4))), text
    )


def _tpl_algebra(rng: np.random.Generator) -> tuple[str, str, int]:
    while True:
        s, p = int(rng.integers(5, 32)), int(rng.integers(2, 200))
        answer = s * s - 2 * p
        if s * s >= 4 * p and 0 <= answer <= 999:
            break
    problem = (
        f"Real numbers $a$ and $b$ satisfy $a+b={s}$ and $ab={p}$. Find the value of $a^2+b^2$."
    )
    solution = (
        f"Since $(a+b)^2=a^2+2ab+b^2$, we get $a^2+b^2=(a+b)^2-2ab={s}^2-2\\cdot {p}={answer}$. "
        f"Such reals exist because the discriminant ${s}^2-4\\cdot {p}\\geq 0$."
    )
    return problem, solution, answer


def _tpl_number_theory(rng: np.random.Generator) -> tuple[str, str, int]:
    base, exp, mod = (
        int(rng.integers(2, 20)),
        int(rng.integers(50, 2025)),
        int(rng.integers(101, 1000)),
    )
    answer = pow(base, exp, mod)
    problem = f"Find the remainder when ${base}^{{{exp}}}$ is divided by ${mod}$."
    solution = (
        f"Compute ${base}^{{{exp}}} \\pmod{{{mod}}}$ by repeated squaring: write {exp} in "
        f"binary and multiply the needed powers ${base}^{{2^k}}$, reducing modulo {mod} at "
        f"each step. The result is ${answer}$."
    )
    return problem, solution, answer


def _tpl_combinatorics(rng: np.random.Generator) -> tuple[str, str, int]:
    while True:
        n, k = int(rng.integers(8, 25)), int(rng.integers(2, 6))
        answer = math.comb(n - k + 1, k)
        if n - k + 1 >= k and answer <= 999:
            break
    problem = (
        f"How many {k}-element subsets of $\\{{1,2,\\ldots,{n}\\}}$ contain no two "
        "consecutive integers?"
    )
    solution = (
        f"Map a subset $a_1<a_2<\\cdots<a_{k}$ to $b_i=a_i-(i-1)$; this is a bijection onto "
        f"all {k}-subsets of $\\{{1,\\ldots,{n - k + 1}\\}}$, so the count is "
        f"$\\binom{{{n - k + 1}}}{{{k}}}={answer}$."
    )
    return problem, solution, answer


_TRIPLES = ((3, 4, 5), (5, 12, 13), (8, 15, 17), (7, 24, 25), (20, 21, 29), (9, 40, 41))


def _tpl_geometry(rng: np.random.Generator) -> tuple[str, str, int]:
    while True:
        a, b, c = _TRIPLES[int(rng.integers(len(_TRIPLES)))]
        k = int(rng.integers(1, 6))
        answer = k * a * k * b // 2
        if answer <= 999:
            break
    problem = (
        f"A triangle has side lengths ${k * a}$, ${k * b}$ and ${k * c}$. "
        "Find the area of the triangle."
    )
    solution = (
        f"Because ${k * a}^2+{k * b}^2={k * c}^2$, the triangle is right-angled with legs "
        f"${k * a}$ and ${k * b}$, so its area is $\\frac{{{k * a}\\cdot {k * b}}}{{2}}={answer}$."
    )
    return problem, solution, answer


def _tpl_probability(rng: np.random.Generator) -> tuple[str, str, int]:
    sides = int(rng.integers(4, 13))
    total = int(rng.integers(3, 2 * sides))
    ways = sum(1 for i in range(1, sides + 1) if 1 <= total - i <= sides)
    prob = Fraction(ways, sides * sides)
    answer = prob.numerator + prob.denominator
    problem = (
        f"Two fair {sides}-sided dice, each with faces numbered $1$ through ${sides}$, are "
        f"rolled. The probability that the sum of the two numbers rolled is ${total}$ is "
        "$\\frac{m}{n}$, where $m$ and $n$ are relatively prime positive integers. Find $m+n$."
    )
    solution = (
        f"There are ${sides}^2={sides * sides}$ equally likely outcomes, and {ways} of them "
        f"have sum {total}. So the probability is $\\frac{{{ways}}}{{{sides * sides}}}="
        f"\\frac{{{prob.numerator}}}{{{prob.denominator}}}$ and $m+n={answer}$."
    )
    return problem, solution, answer


def _tpl_sequences_series(rng: np.random.Generator) -> tuple[str, str, int]:
    a, d, n = int(rng.integers(1, 50)), int(rng.integers(2, 30)), int(rng.integers(20, 120))
    total = n * (2 * a + (n - 1) * d) // 2
    answer = total % 1000
    problem = (
        f"An arithmetic sequence has first term ${a}$ and common difference ${d}$. "
        f"Find the remainder when the sum of its first ${n}$ terms is divided by $1000$."
    )
    solution = (
        f"The sum is $\\sum_{{i=0}}^{{{n - 1}}} ({a}+{d}i)="
        f"\\frac{{{n}(2\\cdot {a}+{n - 1}\\cdot {d})}}{{2}}={total}$, "
        f"which leaves remainder ${answer}$ modulo $1000$."
    )
    return problem, solution, answer


def _tpl_complex_numbers(rng: np.random.Generator) -> tuple[str, str, int]:
    while True:
        a, b, m = int(rng.integers(1, 25)), int(rng.integers(1, 25)), int(rng.integers(1, 3))
        answer = (a * a + b * b) ** m
        if answer <= 999:
            break
    imag = f"{b}i" if b > 1 else "i"
    problem = (
        f"Let $z={a}+{imag}$, where $i=\\sqrt{{-1}}$. Find the modulus of $z^{{{2 * m}}}$, "
        f"that is, $|z^{{{2 * m}}}|$."
    )
    solution = (
        f"We have $|z|^2=z\\overline{{z}}={a}^2+{b}^2={a * a + b * b}$, so "
        f"$|z^{{{2 * m}}}|=(|z|^2)^{{{m}}}={answer}$."
    )
    return problem, solution, answer


_SIM_TEMPLATES: dict[str, Callable[[np.random.Generator], tuple[str, str, int]]] = {
    "algebra": _tpl_algebra,
    "number_theory": _tpl_number_theory,
    "combinatorics": _tpl_combinatorics,
    "geometry": _tpl_geometry,
    "probability": _tpl_probability,
    "sequences_series": _tpl_sequences_series,
    "complex_numbers": _tpl_complex_numbers,
}


# --------------------------------------------------------------------------- the reviewer


def sim_review(
    problem_id: str,
    true_quality: float,
    rng: np.random.Generator,
    *,
    noise: float = SIM_REVIEW_NOISE,
    verified_at: datetime = SIM_REVIEW_TIME,
) -> Verification:
    """A simulated human review of one problem.

    Each dimension is ``clip(rint(true_quality + noise·z), 1, 5)``, ``z ~ N(0, 1)``. The
    status follows the scores: ``approved`` when the mean is at least 3.5 and no dimension
    is below 3, ``rejected`` when the mean is below 2.5, else ``needs_revision``.

    Args:
        problem_id: the reviewed problem.
        true_quality: its hidden quality (1-5).
        rng: the random generator (one normal per dimension).
        noise: standard deviation of the scores around the truth.
        verified_at: the time stamp (fixed, so reruns write the same file).
    """
    z = rng.standard_normal(len(DIMENSIONS))
    values = np.clip(np.rint(true_quality + noise * z), 1, 5).astype(int)
    scores = {d: int(v) for d, v in zip(DIMENSIONS, values, strict=True)}
    total = float(values.mean())
    if total >= PASS_SCORE and values.min() >= 3:
        status = "approved"
    elif total < 2.5:
        status = "rejected"
    else:
        status = "needs_revision"
    return make_verification(
        problem_id, scores, status, "simulated reviewer", verified_at=verified_at
    )


def sim_verifications(
    problems: pd.DataFrame, n: int, rng: np.random.Generator
) -> dict[str, Verification]:
    """Simulated reviews of a random sample of ``n`` problems (all when fewer), from each
    problem's hidden ``true_quality`` (see :func:`sim_review`)."""
    take = rng.permutation(len(problems))[: min(n, len(problems))]
    sample = problems.iloc[np.sort(take)]
    return {
        str(p["id"]): sim_review(str(p["id"]), float(p["true_quality"]), rng)
        for p in sample.to_dict("records")
    }
