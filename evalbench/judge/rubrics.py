"""Rubric configuration: dimensions, pass rules, output fields, prompt pieces, built-ins.

A :class:`Rubric` says what a judge scores (its :class:`Dimension` s and scales), how a
scored result passes (:class:`PassRule`), which other fields the judge writes
(:class:`OutputField`) and the rubric-specific prompt text (:class:`PromptTemplate`).
:data:`RUBRICS` holds the built-in ones (``fine_grained``, ``hle``, ``aime_quality``,
``single_rating``). The rubric arithmetic lives here too: the weighted score is always
``sum(w·s) / sum(w)`` (:func:`weighted_score`), computed here, never taken from the judge.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Literal

import numpy as np
from pydantic import Field, model_validator

from evalbench.records import Record

_IDENT = r"^[a-z][a-z0-9_]*$"
LABEL_PATTERN = r"^[A-Z][A-Z0-9 ]*$"
"""A prompt block label: uppercase words (``ANSWER``, ``REFERENCE ANSWER``)."""
# Weighted sums of integer scores with weights like 0.3 land a hair below the exact value
# (0.5·7 + 0.3·7 + 0.2·7 = 6.999…), so thresholds are compared with this slack.
_THRESHOLD_SLACK = 1e-9


def _is_empty(value: list[object]) -> bool:
    return not value


class Dimension(Record):
    """One scored dimension of a rubric."""

    name: str = Field(pattern=_IDENT)
    """Identifier and JSON key (lowercase letters, digits, underscores), e.g. ``accuracy``."""
    description: str
    """What the judge assesses on this dimension; shown in the prompt."""
    weight: float = Field(default=1.0, ge=0, allow_inf_nan=False)
    """Relative weight in the weighted score ``sum(w·s) / sum(w)``."""
    scale_min: float = Field(default=1.0, allow_inf_nan=False)
    """Lowest valid score (inclusive)."""
    scale_max: float = Field(default=10.0, allow_inf_nan=False)
    """Highest valid score (inclusive)."""

    @model_validator(mode="after")
    def _check_scale(self) -> Dimension:
        if self.scale_min >= self.scale_max:
            raise ValueError(
                f"dimension {self.name!r}: scale_min {self.scale_min:g} must be below "
                f"scale_max {self.scale_max:g}"
            )
        return self


class PassRule(Record):
    """When a scored result passes (and, optionally, counts as excellent)."""

    statistic: Literal["dimension", "weighted", "mean"]
    """What is compared: one dimension's score, the weighted score, or the plain mean."""
    dimension: str | None = None
    """The dimension compared when ``statistic == "dimension"`` (e.g. ``accuracy``)."""
    threshold: float = Field(allow_inf_nan=False)
    """Pass when the statistic is ``>=`` this value."""
    excellent: float | None = Field(default=None, allow_inf_nan=False)
    """Excellent when the statistic is ``>=`` this value; ``None``: not defined."""

    @model_validator(mode="after")
    def _check_rule(self) -> PassRule:
        if (self.statistic == "dimension") != (self.dimension is not None):
            raise ValueError("pass_rule.dimension is required exactly when statistic='dimension'")
        if self.excellent is not None and self.excellent < self.threshold:
            raise ValueError(
                f"pass_rule.excellent {self.excellent:g} is below threshold {self.threshold:g}"
            )
        return self


class OutputField(Record):
    """A non-score field the judge writes (``reason``, ``error_analysis``, ``confidence``)."""

    name: str = Field(pattern=_IDENT)
    """JSON key of the field."""
    description: str
    """What to write there; shown in the prompt."""
    kind: Literal["text", "number"] = "text"
    """``text`` (kept as a string) or ``number`` (checked against the scale below)."""
    scale_min: float | None = Field(default=None, allow_inf_nan=False)
    """Lowest valid value of a ``number`` field."""
    scale_max: float | None = Field(default=None, allow_inf_nan=False)
    """Highest valid value of a ``number`` field."""
    position: Literal["before_scores", "after_scores"] = "after_scores"
    """Whether the judge writes it before the scores (analysis first) or after them."""
    required: bool = False
    """If true, an output without this field is unscored."""

    @model_validator(mode="after")
    def _check_scale(self) -> OutputField:
        has_scale = self.scale_min is not None and self.scale_max is not None
        if self.kind == "number" and not (has_scale and self.scale_min < self.scale_max):  # type: ignore[operator]
            raise ValueError(f"output field {self.name!r}: a number needs scale_min < scale_max")
        if self.kind == "text" and (self.scale_min is not None or self.scale_max is not None):
            raise ValueError(f"output field {self.name!r}: a text field has no scale")
        return self


class PromptTemplate(Record):
    """The rubric-specific pieces of the judge prompt (the data blocks are added in code)."""

    system: str
    """Opening of the system message: the judge's role and what is being graded."""
    instructions: str
    """Grading procedure, shown after the dimension list (e.g. "analyse errors first")."""
    question_label: str = Field(default="QUESTION", pattern=LABEL_PATTERN)
    """Name of the question block (uppercase), e.g. ``GENERATION REQUEST``."""
    answer_label: str = Field(default="ANSWER", pattern=LABEL_PATTERN)
    """Name of the block holding the text being graded."""
    reference_label: str = Field(default="REFERENCE ANSWER", pattern=LABEL_PATTERN)
    """Name of the reference block."""
    no_documents_note: str | None = None
    """Said when a case has no documents ("pure LLM" mode); ``None``: say nothing."""


class CalibrationExample(Record):
    """A worked example shown to the judge to anchor the scale (few-shot calibration)."""

    question: str
    """The example's question."""
    answer: str
    """The example's answer (e.g. a fabricated one)."""
    reference: str | None = None
    """The example's reference answer, if the rubric uses one."""
    scores: dict[str, float]
    """The expected score of every dimension."""
    explanation: str
    """Why these scores."""


class Rubric(Record):
    """A complete rubric judge: dimensions, pass rule, output fields, prompt pieces."""

    name: str = Field(pattern=_IDENT)
    """Registry name, e.g. ``fine_grained``."""
    description: str
    """One line on what the rubric is for."""
    dimensions: list[Dimension] = Field(min_length=1)
    """The scored dimensions, in the order the judge writes them."""
    pass_rule: PassRule | None = None
    """How ``passed``/``excellent`` are decided; ``None``: not defined (both stay ``None``)."""
    output_fields: list[OutputField] = Field(default_factory=list)
    """Extra fields the judge writes besides the scores."""
    prompt: PromptTemplate
    """Prompt pieces."""
    examples: list[CalibrationExample] = Field(default_factory=list)
    """Few-shot calibration examples shown in the system message."""
    anchors: list[CalibrationExample] = Field(default_factory=list, exclude_if=_is_empty)
    """Few-shot anchors a study adds to the rubric (:func:`with_anchors`): graded answers
    shown after ``examples`` to pin points of the scale (e.g. a fabricated answer labelled
    2); their judgments get their own job keys."""
    requires_reference: bool = False
    """If true, a case without a reference answer is an error."""
    max_documents: int = Field(default=5, ge=1)
    """Top-k: at most this many reference documents are shown (in the order given)."""
    document_char_budget: int = Field(default=12_000, ge=1)
    """At most this many document characters in total are shown (see ``clip_documents``)."""

    @model_validator(mode="after")
    def _check_consistency(self) -> Rubric:
        problems = _rubric_problems(self)
        if problems:
            raise ValueError(f"rubric {self.name!r}: " + "; ".join(problems))
        return self

    def dimension(self, name: str) -> Dimension:
        """The dimension called ``name`` (``KeyError`` naming the rubric if absent)."""
        for dim in self.dimensions:
            if dim.name == name:
                return dim
        raise KeyError(f"rubric {self.name!r} has no dimension {name!r}")


def _rubric_problems(rubric: Rubric) -> list[str]:
    names = [d.name for d in rubric.dimensions]
    fields = [f.name for f in rubric.output_fields]
    problems = [f"duplicate name {n!r}" for n, c in Counter(names + fields).items() if c > 1]
    if "scores" in names + fields:
        problems.append("'scores' is reserved for the scores object")
    if sum(d.weight for d in rubric.dimensions) <= 0:
        problems.append("the dimension weights sum to 0")
    rule = rubric.pass_rule
    if rule is not None and rule.dimension is not None and rule.dimension not in names:
        problems.append(f"pass_rule.dimension {rule.dimension!r} is not a dimension")
    for i, example in enumerate(rubric.examples):
        problems += [f"examples[{i}]: {p}" for p in score_map_problems(rubric, example.scores)]
    return problems + anchor_problems(rubric, rubric.anchors)


def anchor_problems(rubric: Rubric, anchors: Sequence[CalibrationExample]) -> list[str]:
    """What is wrong with few-shot anchors for ``rubric``: each anchor's scores
    (:func:`score_map_problems`) and a missing reference the rubric requires, as
    ``anchors[i]: ...``."""
    problems = []
    for i, anchor in enumerate(anchors):
        problems += [f"anchors[{i}]: {p}" for p in score_map_problems(rubric, anchor.scores)]
        if rubric.requires_reference and anchor.reference is None:
            problems.append(f"anchors[{i}]: the rubric needs a reference answer, it has none")
    return problems


def score_map_problems(rubric: Rubric, scores: Mapping[str, float]) -> list[str]:
    """What is wrong with a score per dimension: unknown, missing or out-of-range dimensions."""
    names = {d.name for d in rubric.dimensions}
    problems = [f"unknown dimension {k!r}" for k in scores if k not in names]
    for dim in rubric.dimensions:
        value = scores.get(dim.name)
        if value is None:
            problems.append(f"missing dimension {dim.name!r}")
        elif not dim.scale_min <= value <= dim.scale_max:
            problems.append(f"{dim.name}={value:g} is outside {dim.scale_min:g}-{dim.scale_max:g}")
    return problems


class JudgeCase(Record):
    """What one rubric judgment is about."""

    question: str
    """The question (or generation request) the answer responds to."""
    answer: str
    """The text being graded."""
    reference: str | None = None
    """A reference answer, if any."""
    documents: list[str] | None = None
    """Reference documents, most relevant first (top-k and a character budget apply)."""
    criteria: str | list[str] | None = None
    """Case-specific grading criteria from the dataset."""


# --------------------------------------------------------------------------- built-in rubrics


def _fine_grained() -> Rubric:
    dims = [
        Dimension(
            name="accuracy",
            weight=0.5,
            description="Factual correctness: no wrong, fabricated or unsupported claims "
            "(checked against the documents or reference when given).",
        ),
        Dimension(
            name="completeness",
            weight=0.3,
            description="Covers every part of the question and the key facts needed.",
        ),
        Dimension(
            name="clarity",
            weight=0.2,
            description="Well organised, unambiguous and easy to follow.",
        ),
    ]
    fields = [
        OutputField(
            name="error_analysis",
            position="before_scores",
            description="List each factual error, omission or unclear passage you find, "
            "citing the documents or reference where relevant; write 'none' if none.",
        ),
        OutputField(name="reason", description="One or two sentences justifying the scores."),
        OutputField(name="suggestion", description="The single most useful improvement."),
    ]
    example = CalibrationExample(
        question="In which year did Apollo 11 land on the Moon, and who was its commander?",
        answer="Apollo 11 landed on the Moon in 1972 under the command of Buzz Aldrin.",
        reference="It landed on 20 July 1969; the commander was Neil Armstrong.",
        scores={"accuracy": 2, "completeness": 5, "clarity": 8},
        explanation="Both facts are fabricated (1972 instead of 1969, Aldrin was the lunar "
        "module pilot, not the commander), so accuracy is 2 even though the answer is "
        "clear and addresses both parts of the question.",
    )
    prompt = PromptTemplate(
        system="You are a meticulous grader of answers to factual questions. You grade "
        "one answer on the dimensions below.",
        instructions="Procedure: first write the error analysis, then score each dimension "
        "on its scale, then give the reason and a suggestion. A fabricated or wrong key "
        "fact caps accuracy at 3, however fluent the answer is. Length is not a merit.",
        no_documents_note="No reference documents are provided (pure LLM mode): judge with "
        "your own knowledge and say in the error analysis which claims you could not check.",
    )
    return Rubric(
        name="fine_grained",
        description="Accuracy 50% / completeness 30% / clarity 20% (1-10); pass: accuracy >= 7.",
        dimensions=dims,
        pass_rule=PassRule(statistic="dimension", dimension="accuracy", threshold=7),
        output_fields=fields,
        prompt=prompt,
        examples=[example],
    )


def _hle() -> Rubric:
    aspects = {
        "accuracy": "Agrees with the reference answer; no factual or logical errors.",
        "completeness": "Addresses every part of the question and every case criterion.",
        "relevance": "Stays on the question; no padding or digressions.",
        "coherence": "Reasoning is consistent and logically ordered.",
        "depth": "Shows understanding beyond a surface answer where the question needs it.",
        "timeliness": "Information is current, or correctly dated where it may have changed.",
    }
    dims = [
        Dimension(name=n, description=d, scale_min=0, scale_max=100) for n, d in aspects.items()
    ]
    fields = [
        OutputField(
            name="overall",
            kind="number",
            scale_min=0,
            scale_max=100,
            description="Your overall score (kept for comparison; the official overall is "
            "computed from the dimension scores).",
        ),
        OutputField(
            name="confidence",
            kind="number",
            scale_min=0,
            scale_max=100,
            description="How confident you are in this grading.",
        ),
        OutputField(name="reason", description="A short justification citing the criteria."),
    ]
    prompt = PromptTemplate(
        system="You are an expert examiner grading an answer to a hard, expert-level "
        "question against a reference answer and case-specific criteria.",
        instructions="Compare the answer with the reference answer and check every case "
        "criterion. Score each dimension from 0 (absent or wrong) to 100 (flawless).",
    )
    return Rubric(
        name="hle",
        description="HLE-style expert grading: six dimensions 0-100, overall and confidence.",
        dimensions=dims,
        output_fields=fields,
        prompt=prompt,
        requires_reference=True,
    )


def _aime_quality() -> Rubric:
    aspects = {
        "correctness": "The problem is well posed and the stated answer (an integer 0-999) "
        "is correct.",
        "clarity": "The statement is precise and unambiguous.",
        "difficulty_match": "The difficulty matches an AIME problem (or the requested level).",
        "completeness": "The solution is complete: every step needed to reach the answer.",
    }
    dims = [Dimension(name=n, description=d, scale_min=1, scale_max=5) for n, d in aspects.items()]
    fields = [
        OutputField(name="reason", description="The main strengths and problems."),
        OutputField(name="suggestion", description="How to improve the problem."),
    ]
    prompt = PromptTemplate(
        system="You review competition mathematics problems generated in the style of the "
        "AIME (American Invitational Mathematics Examination).",
        instructions="Solve the problem yourself before scoring correctness. Score each "
        "dimension from 1 (unusable) to 5 (excellent).",
        question_label="GENERATION REQUEST",
        answer_label="GENERATED PROBLEM AND SOLUTION",
        reference_label="REFERENCE PROBLEM",
    )
    return Rubric(
        name="aime_quality",
        description="Generated AIME-style problems: four dimensions 1-5; pass: mean >= 3.5, "
        "excellent: mean >= 4.5.",
        dimensions=dims,
        pass_rule=PassRule(statistic="mean", threshold=3.5, excellent=4.5),
        output_fields=fields,
        prompt=prompt,
    )


def _single_rating() -> Rubric:
    prompt = PromptTemplate(
        system="You are an impartial judge of the quality of an AI assistant's answer: its "
        "helpfulness, relevance, accuracy, depth, creativity and level of detail.",
        instructions="Explain your assessment briefly and objectively, then rate the answer.",
    )
    explanation = OutputField(
        name="explanation", position="before_scores", description="Your short assessment."
    )
    return Rubric(
        name="single_rating",
        description="MT-Bench-style single rating 1-10 (also parses 'Rating: [[n]]').",
        dimensions=[Dimension(name="rating", description="Overall quality of the answer.")],
        output_fields=[explanation],
        prompt=prompt,
    )


RUBRICS: dict[str, Callable[[], Rubric]] = {
    "fine_grained": _fine_grained,
    "hle": _hle,
    "aime_quality": _aime_quality,
    "single_rating": _single_rating,
}
"""Built-in rubrics by name (factories: each call returns a fresh, editable ``Rubric``)."""


def get_rubric(name: str) -> Rubric:
    """A fresh copy of the built-in rubric ``name``.

    Raises:
        KeyError: ``name`` is not in ``RUBRICS`` (the message lists the known names).
    """
    if name not in RUBRICS:
        raise KeyError(f"unknown rubric {name!r}; known: {', '.join(sorted(RUBRICS))}")
    return RUBRICS[name]()


def known_rubric(name: str) -> str:
    """``name`` itself if it is a built-in rubric, else ``ValueError`` (a params validator).

    Raises:
        ValueError: ``name`` is not in ``RUBRICS`` (the message lists the known names).
    """
    if name not in RUBRICS:
        raise ValueError(f"unknown rubric {name!r}; known: {', '.join(sorted(RUBRICS))}")
    return name


def with_anchors(rubric: Rubric | str, anchors: Sequence[CalibrationExample]) -> Rubric:
    """A copy of ``rubric`` with ``anchors`` as its few-shot anchors (none: an equal copy).

    Raises:
        ValueError: an anchor misses a dimension, is off the scale, or lacks a reference the
            rubric requires (the message names ``anchors[i]``).
    """
    data = as_rubric(rubric).model_dump()
    return Rubric.model_validate({**data, "anchors": [a.model_dump() for a in anchors]})


def as_rubric(rubric: Rubric | str) -> Rubric:
    """``rubric`` itself, or the built-in rubric of that name."""
    return get_rubric(rubric) if isinstance(rubric, str) else rubric


# --------------------------------------------------------------------------- arithmetic


def weighted_score(rubric: Rubric, scores: Mapping[str, float]) -> float:
    """``sum(w·s) / sum(w)`` over the rubric's dimensions (e.g. 0.5·8 + 0.3·6 + 0.2·9 = 7.6).

    Raises:
        KeyError: a dimension is missing from ``scores``.
    """
    total = sum(d.weight for d in rubric.dimensions)
    return sum(d.weight * scores[d.name] for d in rubric.dimensions) / total


def pass_status(rubric: Rubric, scores: Mapping[str, float]) -> tuple[bool | None, bool | None]:
    """``(passed, excellent)`` under the rubric's pass rule; ``None`` where not defined."""
    rule = rubric.pass_rule
    if rule is None:
        return None, None
    if rule.statistic == "dimension":
        value = scores[rule.dimension]  # type: ignore[index]
    elif rule.statistic == "weighted":
        value = weighted_score(rubric, scores)
    else:
        value = float(np.mean([scores[d.name] for d in rubric.dimensions]))
    excellent = None if rule.excellent is None else value >= rule.excellent - _THRESHOLD_SLACK
    return value >= rule.threshold - _THRESHOLD_SLACK, excellent


def plain_number(value: float) -> int | float:
    """``value`` as an int when it is whole (``8.0`` -> ``8``), so JSON shows ``8``."""
    return int(value) if float(value).is_integer() else float(value)
