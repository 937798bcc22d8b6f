"""LLM judges, the pure core: rubric and pairwise prompts, robust parsing, panels, simulation.

Nothing here talks to a model except :func:`judge_rubric` / :func:`judge_pairs`, which ask
through a run. The caller does::

    messages = build_rubric_messages(rubric, case)      # OpenAI-style [{role, content}]
    text = <chat client>(messages)
    result = parse_rubric_output(rubric, text)          # scored, or explicitly unscored

and the same for pairwise comparisons (``build_pairwise_messages`` →
``parse_pairwise_output``, then ``resolve_order`` over the two presentation orders).

The modules, one role each:

- :mod:`~evalbench.judge.rubrics`: rubric configuration, the built-in rubrics
  (:data:`RUBRICS`), few-shot anchors (:func:`with_anchors`), the weighted score and the
  pass rule;
- :mod:`~evalbench.judge.prompts`: untrusted-data fences, document clipping, rubric and
  pairwise messages;
- :mod:`~evalbench.judge.parse`: a rubric judge's reply → scores or unscored;
- :mod:`~evalbench.judge.pairwise`: pairwise verdicts and the two presentation orders;
- :mod:`~evalbench.judge.panel`: several judges aggregated per item;
- :mod:`~evalbench.judge.ask`: rubric and pairwise jobs asked through a run;
- :mod:`~evalbench.judge.sim`: the simulated judges (kept apart from the parsers);
- :mod:`~evalbench.judge.tables`: verdict-agreement tables shared by the judge studies;
- :mod:`~evalbench.judge.matching`: answer-matching judges (does an answer mean the same as
  the gold one?) with HLE's grader or simple-evals' equality checker, strictly parsed;
- :mod:`~evalbench.judge.spec`: :class:`JudgeModel`, the params of a judge that may be asked
  for structured output.

Conventions and sources:

- Single-answer grading and the pairwise ``[[A]]``/``[[B]]``/``[[C]]`` verdicts follow
  MT-Bench (Zheng et al., 2023, "Judging LLM-as-a-Judge with MT-Bench and Chatbot Arena",
  arXiv:2306.05685; lm-sys/FastChat ``fastchat/llm_judge``); the five-label strength verdicts
  ``[[A>>B]]`` … ``[[B>>A]]`` follow Arena-Hard (Li et al., 2024, arXiv:2406.11939;
  lm-sys/arena-hard-auto). Unlike FastChat, which takes the first of ``[[A]]``, ``[[B]]``,
  ``[[C]]`` found, a judgment naming two different verdicts is *unscored* (ambiguous), as in
  Arena-Hard's parser.
- The weighted score is always computed here, ``sum(w·s) / sum(w)``; a total the model
  writes is kept as an extra field for comparison, never used.
- Unparseable, out-of-range, non-finite, boolean or incomplete outputs give an explicit
  ``unscored`` result with a reason and the raw text, never a default score.
- Question, answer, reference and documents are untrusted data: each goes inside a fixed
  ``<<<BEGIN UNTRUSTED …>>>`` / ``<<<END UNTRUSTED …>>>`` block, and every run of three or
  more ``<`` inside the data is replaced by as many ``‹`` so the data cannot close (or fake)
  a block.
"""

from __future__ import annotations

from .ask import (
    PairTask,
    RubricJudgment,
    RubricTask,
    judge_pairs,
    judge_rubric,
    pairwise_jobs,
    rubric_jobs,
    rubric_key,
)
from .pairwise import (
    SIDE_TO_VERDICT,
    InconsistentPolicy,
    ModelSide,
    OrderOutcome,
    OrderResolution,
    PairJudgment,
    PairwiseVerdict,
    Position,
    Strength,
    combine_orders,
    parse_pairwise_output,
    position_to_model,
    resolve_order,
)
from .panel import aggregate_panel_scores, aggregate_panel_verdicts
from .parse import (
    ParseMethod,
    RubricResult,
    Status,
    coerce_score,
    parse_rubric_output,
    results_frame,
    rubric_result,
)
from .prompts import (
    PAIRWISE_SYSTEM,
    UNTRUSTED_RULE,
    VERDICT_INSTRUCTIONS,
    ClippedDocuments,
    RubricPrompt,
    VerdictFormat,
    build_pairwise_messages,
    build_rubric_messages,
    build_rubric_prompt,
    clip_documents,
    fence_untrusted,
    neutralise_delimiters,
)
from .rubrics import (
    RUBRICS,
    CalibrationExample,
    Dimension,
    JudgeCase,
    OutputField,
    PassRule,
    PromptTemplate,
    Rubric,
    anchor_problems,
    get_rubric,
    known_rubric,
    pass_status,
    weighted_score,
    with_anchors,
)
from .sim import (
    sim_pairwise_latent,
    sim_pairwise_output,
    sim_pairwise_probabilities,
    sim_rubric_output,
    sim_rubric_score_matrix,
    sim_rubric_scores,
)
from .spec import JudgeModel

__all__ = [
    "PAIRWISE_SYSTEM",
    "RUBRICS",
    "SIDE_TO_VERDICT",
    "UNTRUSTED_RULE",
    "VERDICT_INSTRUCTIONS",
    "CalibrationExample",
    "ClippedDocuments",
    "Dimension",
    "InconsistentPolicy",
    "JudgeCase",
    "JudgeModel",
    "ModelSide",
    "OrderOutcome",
    "OrderResolution",
    "OutputField",
    "PairJudgment",
    "PairTask",
    "PairwiseVerdict",
    "ParseMethod",
    "PassRule",
    "Position",
    "PromptTemplate",
    "Rubric",
    "RubricJudgment",
    "RubricPrompt",
    "RubricResult",
    "RubricTask",
    "Status",
    "Strength",
    "VerdictFormat",
    "aggregate_panel_scores",
    "aggregate_panel_verdicts",
    "anchor_problems",
    "build_pairwise_messages",
    "build_rubric_messages",
    "build_rubric_prompt",
    "clip_documents",
    "coerce_score",
    "combine_orders",
    "fence_untrusted",
    "get_rubric",
    "judge_pairs",
    "judge_rubric",
    "known_rubric",
    "neutralise_delimiters",
    "pairwise_jobs",
    "parse_pairwise_output",
    "parse_rubric_output",
    "pass_status",
    "position_to_model",
    "resolve_order",
    "results_frame",
    "rubric_jobs",
    "rubric_key",
    "rubric_result",
    "sim_pairwise_latent",
    "sim_pairwise_output",
    "sim_pairwise_probabilities",
    "sim_rubric_output",
    "sim_rubric_score_matrix",
    "sim_rubric_scores",
    "weighted_score",
    "with_anchors",
]
