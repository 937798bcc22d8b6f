"""The arena runner: systems answer prompts, a judge compares or grades them, ratings.

Systems x prompts -> answers (:func:`collect_answers`, cached) -> a pairwise judge in both
orders (:func:`evalbench.judge.judge_pairs`) or a rubric judge (:func:`judge_by_rubric`)
-> battles (:func:`run_study`) -> Bradley–Terry ratings with bootstrap intervals and
online Elo (:func:`evalbench.ratings.rate_battles`). "Deep research" systems
(``retrieval_systems``) get each prompt's documents in their system prompt. Notebook:
``arena.ipynb``.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple, cast

import numpy as np
import pandas as pd

from evalbench.judge import JudgeCase, PairTask, RubricTask, get_rubric, judge_pairs, judge_rubric
from evalbench.measured import nothing_measured
from evalbench.models import ChatRequest, Job, ModelSpec, SimTask
from evalbench.ratings import ArenaError, RatingReport, by_dataset, rate_battles, win_rate_vs
from evalbench.ratings_style import StyleControl, battles_with_style
from evalbench.ratings_style import style_control as controlled
from evalbench.records import ResponseRecord, StyleCoefficient, write_jsonl
from evalbench.runs import Run
from evalbench.studies import Study
from evalbench.tiers import apply_tier

from . import metrics, report
from .data import ArenaPrompt, label_pair_rows, load_human_battles, load_prompts
from .metrics import measured_systems
from .records import (
    ArenaBattle,
    ArenaParams,
    ArenaRating,
    ArenaResult,
    HumanBattle,
    HumanVotes,
)
from .scoring import (
    answer_messages,
    any_pair_scored,
    battles_from_judged_pairs,
    battles_from_rubric,
    no_battles,
)
from .sim import (
    overall_quality,
    sim_answer,
    system_quality,
    true_dimension_means,
    true_dimension_scores,
    truth_table,
)


def answer_jobs(prompts: Sequence[ArenaPrompt], spec: ModelSpec, params: ArenaParams) -> list[Job]:
    """One chat job per prompt for ``spec`` (a sim system gets its hidden quality)."""
    with_documents = spec.name in params.retrieval_systems
    jobs = []
    for prompt in prompts:
        key = f"answer:{prompt.id}"
        request = ChatRequest(messages=answer_messages(prompt, with_documents=with_documents))
        sim = None
        if spec.simulated:
            quality = system_quality(params, spec, prompt.id)
            respond = partial(sim_answer, prompt=prompt, with_documents=with_documents)
            sim = SimTask(respond, key, {"quality": quality, "documents": with_documents})
        jobs.append(Job(key, request, sim))
    return jobs


def collect_answers(run: Run[ArenaParams], prompts: Sequence[ArenaPrompt]) -> pd.DataFrame:
    """Ask every system every prompt (cached, resumable; ``records/answers.jsonl``).

    Returns:
        One row per (system, prompt): ``system, question_id, with_documents, answer,
        error, length`` (characters) and ``quality`` (a sim system's hidden overall
        quality; NaN for real systems). An empty answer without an error is an error.
    """
    params = run.params
    rubric = get_rubric(params.rubric)
    rows = []
    for spec in params.systems:
        answers = run.ask(spec, answer_jobs(prompts, spec, params), store="answers",
                          desc=f"answers {spec.name}")  # fmt: skip
        for prompt in prompts:
            reply = answers[f"answer:{prompt.id}"]
            error = reply.error or (None if reply.text else "empty answer")
            quality = system_quality(params, spec, prompt.id) if spec.simulated else None
            rows.append({
                "system": spec.name,
                "question_id": prompt.id,
                "with_documents": spec.name in params.retrieval_systems,
                "answer": reply.text if error is None else None,
                "error": error,
                "length": len(reply.text) if error is None and reply.text else np.nan,
                "quality": overall_quality(quality, rubric) if quality else np.nan,
            })  # fmt: skip
    return pd.DataFrame(rows)


def pair_tasks(
    answers: pd.DataFrame, prompts: Sequence[ArenaPrompt], params: ArenaParams
) -> tuple[list[PairTask], int]:
    """The pairwise comparisons to judge, and how many pairs were skipped (an answer failed).

    Model x of each pair is the first system of :meth:`ArenaParams.pairs` (the baseline
    with ``vs_baseline``); a sim pair carries both answers' hidden qualities.
    """
    ok = answers[answers["error"].isna()].set_index(["question_id", "system"])
    tasks, skipped = [], 0
    for prompt in prompts:
        for x, y in params.pairs():
            if (prompt.id, x) not in ok.index or (prompt.id, y) not in ok.index:
                skipped += 1
                continue
            ax, ay = ok.loc[(prompt.id, x)], ok.loc[(prompt.id, y)]
            tasks.append(
                PairTask(
                    pair_id=prompt.id,
                    question=prompt.question,
                    model_x=x,
                    answer_x=str(ax["answer"]),
                    model_y=y,
                    answer_y=str(ay["answer"]),
                    quality_x=_finite_or_none(ax["quality"]),
                    quality_y=_finite_or_none(ay["quality"]),
                )
            )
    return tasks, skipped


def _finite_or_none(value: Any) -> float | None:
    return float(value) if value is not None and np.isfinite(value) else None


def rubric_tasks(
    answers: pd.DataFrame, prompts: Sequence[ArenaPrompt], params: ArenaParams
) -> list[RubricTask]:
    """One rubric judgment per successful answer (case id ``<question_id>|<system>``).

    The judge sees the prompt's documents when ``judge_documents`` is set; a sim
    system's answer carries its true per-dimension scores (:func:`true_dimension_scores`).
    """
    rubric = get_rubric(params.rubric)
    by_id = {p.id: p for p in prompts}
    specs = {s.name: s for s in params.systems}
    tasks = []
    for row in answers[answers["error"].isna()].itertuples():
        prompt, spec = by_id[str(row.question_id)], specs[str(row.system)]
        documents = list(prompt.documents) if params.judge_documents and prompt.documents else None
        case = JudgeCase(question=prompt.question, answer=str(row.answer), documents=documents)
        truth = None
        if spec.simulated:
            truth = true_dimension_scores(system_quality(params, spec, prompt.id), rubric)
        tasks.append(RubricTask(f"{prompt.id}|{spec.name}", case, truth))
    return tasks


def judge_by_rubric(
    run: Run[ArenaParams], answers: pd.DataFrame, prompts: Sequence[ArenaPrompt]
) -> pd.DataFrame:
    """Grade every successful answer with the study's rubric (resumable).

    Returns:
        :func:`evalbench.judge.judge_rubric` columns plus ``system, question_id`` (no row
        when every answer failed).
    """
    params = run.params
    tasks = rubric_tasks(answers, prompts, params)
    if not tasks:  # every answer failed: nothing to grade (the study has no result)
        return pd.DataFrame(columns=["judge", "question_id", "system", "status",
                                     "weighted_score", "error"])  # fmt: skip
    frame = judge_rubric(run, cast(ModelSpec, params.judge), params.rubric, tasks)
    ids = [t.case_id.split("|", 1) for t in tasks]
    frame.insert(1, "question_id", [qid for qid, _ in ids])
    frame.insert(2, "system", [system for _, system in ids])
    return frame


class ArenaRun(NamedTuple):
    """What the runner produced."""

    answers: pd.DataFrame
    """:func:`collect_answers`."""
    judgments: pd.DataFrame
    """Pairwise: :func:`evalbench.judge.judge_pairs` rows; rubric: :func:`judge_by_rubric`."""
    battles: pd.DataFrame
    """The battles the ratings are fitted on."""
    counts: dict[str, int]
    """prompts, answers, answer errors, judgments, unscored, dropped, skipped pairs, battles."""


def run_study(run: Run[ArenaParams], prompts: Sequence[ArenaPrompt]) -> ArenaRun:
    """Answers -> judge (pairwise in both orders, or rubric) -> battles.

    Writes ``records/pair_judgments.jsonl`` or ``records/rubric_scores.jsonl`` (the
    parsed judgments; the raw calls are in ``answers.jsonl`` and ``judgments.jsonl``).
    """
    params = run.params
    judge = cast(ModelSpec, params.judge)
    answers = collect_answers(run, prompts)
    skipped = 0
    if params.judging == "pairwise":
        tasks, skipped = pair_tasks(answers, prompts, params)
        judgments = judge_pairs(
            run, judge, tasks, verdict_format=params.verdict_format, policy=params.inconsistent
        )
        battles = no_battles(judgments)
        if "final" in judgments and judgments["final"].notna().any():
            battles = battles_from_judged_pairs(judgments, strong_weight=params.strong_weight)
        run.write_records("pair_judgments", judgments)
    else:
        judgments = judge_by_rubric(run, answers, prompts)
        baseline = params.baseline if params.pairing == "vs_baseline" else None
        battles = no_battles(judgments)
        if any_pair_scored(judgments, baseline):
            battles = battles_from_rubric(
                judgments, tie_margin=params.tie_margin, baseline=baseline
            )
        run.write_records("rubric_scores", judgments)
    counts = {
        "prompts": len(prompts),
        "answers": int(answers["error"].isna().sum()),
        "answer_errors": int(answers["error"].notna().sum()),
        "skipped_pairs": skipped,
        "judgments": len(judgments),
        "unscored": int(battles.attrs.get("unscored", 0)),
        "dropped": int(battles.attrs.get("dropped", 0)),
        "battles": len(battles),
    }
    return ArenaRun(answers, judgments, battles, counts)


# ------------------------------------------------------------------ the study


def study_prompts(params: ArenaParams) -> list[ArenaPrompt]:
    """The prompts of the study: ``prompts`` (first ``limit``), then the ``tier`` /
    ``sample`` subsample (one stratum: prompts carry no category)."""
    prompts = load_prompts(params.prompts, limit=params.limit)
    return apply_tier(prompts, params, item_id=lambda p: p.id, stratum=lambda p: "all")


def write_label_pairs(
    run: Run[ArenaParams], answers: pd.DataFrame, prompts: Sequence[ArenaPrompt]
) -> None:
    """``<run dir>/label_pairs.jsonl``: every pair of answers for human votes
    (``evalbench label init pairwise <run dir>``)."""
    tasks, _ = pair_tasks(answers, prompts, run.params)
    write_jsonl(run.dir / "label_pairs.jsonl", label_pair_rows(tasks, prompts))


def read_votes(params: ArenaParams, prompts: Sequence[ArenaPrompt]) -> pd.DataFrame | None:
    """The ``human_battles`` votes, read and checked before any system or judge is asked (a
    bad votes file costs nothing); ``None`` without ``human_battles``.

    Raises:
        ArenaError: a bad vote (file, line, field), or no vote on a prompt of this run.
    """
    if params.human_battles is None:
        return None
    loaded = load_human_battles(params.human_battles, [s.name for s in params.systems])
    if not loaded["question_id"].isin({p.id for p in prompts} | {""}).any():
        raise ArenaError(
            f"{params.human_battles}: none of its {len(loaded)} votes is on a prompt of this run"
        )
    return loaded


def human_votes(
    run: Run[ArenaParams],
    judge_battles: pd.DataFrame,
    prompts: Sequence[ArenaPrompt],
    loaded: pd.DataFrame | None,
) -> HumanVotes | None:
    """The ``human_battles`` votes (:func:`read_votes`): ratings, judge agreement,
    annotator agreement.

    Votes on prompts outside this run (``limit``, ``tier``) are left out and counted.
    Writes ``records/human_battles.jsonl``. ``None`` without ``human_battles``.
    """
    params = run.params
    if loaded is None:
        return None
    inside = loaded["question_id"].isin({p.id for p in prompts} | {""})
    votes = metrics.oriented(loaded[inside].reset_index(drop=True), params.pairs())
    rated, why = _human_ratings(run, votes)
    majority = metrics.human_majority(votes)
    run.write_records("human_battles", votes.drop(columns=["line", "simulated"]).to_dict("records"))
    return HumanVotes(
        votes, int((~inside).sum()), rated, why, majority,
        metrics.judge_human_agreement(judge_battles, majority),
        metrics.vote_agreement(
            votes, rng=run.rng("human-agreement"), rounds=params.bootstrap_rounds,
            level=params.confidence_level,
        ),
    )  # fmt: skip


def _human_ratings(
    run: Run[ArenaParams], votes: pd.DataFrame
) -> tuple[RatingReport | None, str | None]:
    """Ratings from the votes alone, or ``None`` and why (e.g. one system never lost: no
    maximum-likelihood fit without a ``prior``); the rest of the study still stands."""
    params = run.params
    anchor = params.rating_anchor()
    voted = set(votes["model_a"]) | set(votes["model_b"])
    try:
        rated = rate_battles(
            votes, rng=run.rng("human-ratings"), rounds=params.bootstrap_rounds,
            level=params.confidence_level, anchor=anchor if anchor in voted else None,
            anchor_rating=params.anchor_rating, elo_k=params.elo_k, prior=params.prior,
        )  # fmt: skip
    except ArenaError as exc:
        return None, str(exc)
    return rated, None


def run(run: Run[ArenaParams]) -> ArenaResult:
    """Answers -> judge -> battles -> ratings, and the summaries the notebook shows.

    Writes ``records/battles.jsonl`` and ``records/ratings.jsonl`` (besides the answers,
    the judge's calls and its parsed judgments written on the way).
    """
    params = run.params
    with run.timed("load"):
        prompts = study_prompts(params)
        votes = read_votes(params, prompts)
    done = run_study(run, prompts)
    measured = measured_systems(done.answers, done.judgments, done.battles)
    if nothing_measured(measured):  # no battle to rate: the manifest and a page say why
        run.no_result(measured)
    write_label_pairs(run, done.answers, prompts)
    anchor = params.rating_anchor()
    rated = rate_battles(
        done.battles, rng=run.rng("ratings"), rounds=params.bootstrap_rounds,
        level=params.confidence_level, anchor=anchor, anchor_rating=params.anchor_rating,
        elo_k=params.elo_k, prior=params.prior,
    )  # fmt: skip
    truth = truth_table(params) if params.judging == "pairwise" else None
    with run.timed("style control"):
        style = style_control(run, done, rated, truth)
    lc = None
    if params.baseline is not None:
        with run.timed("length control"):
            lc = metrics.length_controlled(done.battles, done.answers, params.baseline)
    table = _ratings_table(rated, truth, style, lc)
    pairwise = params.judging == "pairwise"
    result = ArenaResult(
        params, prompts, done.answers, done.judgments, done.battles, done.counts, anchor,
        rated, table, truth, _versus(done.battles, params),
        metrics.judge_position_bias(done.judgments) if pairwise else None,
        metrics.judge_prefers_longer(done.judgments, level=params.confidence_level)
        if pairwise else None,
        None if pairwise else _dimension_means(run, done.judgments, prompts),
        run.recorded_usage(), run.simulated_names, human_votes(run, done.battles, prompts, votes),
        style.control, lc,
    )  # fmt: skip
    dataset = Path(params.prompts).stem
    run.write_records("battles", by_dataset({dataset: style.battles}))
    run.write_records("ratings", by_dataset({dataset: table}))
    run.write_records("style_coefficients", by_dataset({dataset: style.control.coefficients}))
    return result


class _Styled(NamedTuple):
    control: StyleControl
    battles: pd.DataFrame
    """The judge's battles with both answers' style counts."""


def style_control(
    run: Run[ArenaParams], done: ArenaRun, rated: RatingReport, truth: pd.DataFrame | None
) -> _Styled:
    """Style-controlled ratings of the judge's battles (same anchor, rounds and level as the
    raw ones), and how both recover the simulated truth."""
    params = run.params
    battles = battles_with_style(done.battles, metrics.answer_styles(done.answers))
    control = controlled(
        battles, rated.table.set_index("model")["rating"], rng=run.rng("style"),
        rounds=params.bootstrap_rounds, level=params.confidence_level,
        anchor=params.rating_anchor(), anchor_rating=params.anchor_rating,
    )  # fmt: skip
    if truth is not None:
        table = control.table.merge(truth[["model", "true_rating"]], on="model", how="left")
        control = control._replace(table=table, recovery=metrics.recovery(table))
    return _Styled(control, battles)


def _ratings_table(
    rated: RatingReport, truth: pd.DataFrame | None, style: _Styled, lc: pd.DataFrame | None
) -> pd.DataFrame:
    """The ratings table of the records: raw, truth, style-controlled, win rates."""
    table = metrics.with_truth(rated.table, truth)
    columns = ["model", "style_rating", "style_ci_low", "style_ci_high", "rank", "style_rank",
               "rank_change"]  # fmt: skip
    table = table.merge(style.control.table[columns], on="model", how="left")
    if lc is not None:
        table = table.merge(lc[["model", "win_rate", "lc_win_rate", "lc_standard_error"]],
                            on="model", how="left")  # fmt: skip
    return table


def _versus(battles: pd.DataFrame, params: ArenaParams) -> pd.DataFrame | None:
    if params.baseline is None:
        return None
    return win_rate_vs(battles, str(params.baseline), level=params.confidence_level)


def _dimension_means(
    run: Run[ArenaParams], scores: pd.DataFrame, prompts: list[ArenaPrompt]
) -> pd.DataFrame:
    params = run.params
    means = metrics.dimension_means(
        scores, params.rubric, rng=run.rng("dimensions"), rounds=params.bootstrap_rounds,
        level=params.confidence_level,
    )  # fmt: skip
    truth = true_dimension_means(params, prompts)
    return means.merge(truth, on=["system", "dimension"], how="left") if len(truth) else means


def counts(result: ArenaResult) -> dict[str, int]:
    """Prompts, answers, errors, judgments, unscored, dropped, skipped pairs, battles (and
    human votes)."""
    out = dict(result.counts)
    if result.human is not None:
        out["human_votes"] = len(result.human.votes)
    return out


STUDY = Study(
    kind="arena",
    params=ArenaParams,
    run=run,
    notebook="arena.ipynb",
    records={
        "answers": ResponseRecord,
        "judgments": ResponseRecord,
        "battles": ArenaBattle,
        "ratings": ArenaRating,
        "style_coefficients": StyleCoefficient,
        "human_battles": HumanBattle,
    },
    headlines=report.headlines,
    findings=report.findings,
    counts=counts,
    measured=lambda result: measured_systems(result.answers, result.judgments, result.battles),
    optional_records=frozenset({"human_battles"}),
)
