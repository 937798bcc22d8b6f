"""The generated-data quality study (``study: datagen``): the run and STUDY.

:func:`run` loads the real AIME problems, asks the generator for ``n_problems`` problems
in rounds (round ``r`` retries every slot still invalid after ``r − 1`` attempts; every
answer is checkpointed, so a rerun resumes), scores them with the ``aime_quality`` rubric
judge, compares them with real problems in both presentation orders, flags
near-duplicates of real problems, reads the human reviews and summarizes it all. Model
calls, caching and run bookkeeping live in :mod:`evalbench.runs` and
:mod:`evalbench.models`; the judges in :mod:`evalbench.judge`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from evalbench.judge import JudgeCase, PairTask, RubricTask, judge_pairs, judge_rubric
from evalbench.measured import Measured, nothing_measured
from evalbench.models import ChatRequest, ChatResponse, Job, SimTask
from evalbench.records import ResponseRecord, plain_rows, write_jsonl
from evalbench.runs import Run
from evalbench.studies import Study
from evalbench.tiers import apply_tier

from . import report, sim
from .data import answer_mismatches, load_hf_reference, load_reference, unique_reference
from .duplicates import near_duplicates
from .metrics import answer_distribution, judge_vs_truth, measured_generator, summarize
from .records import (
    DatagenParams,
    DatagenResult,
    DuplicateRecord,
    GenerationResult,
    HumanData,
    PairwiseRecord,
    ProblemRecord,
    QualityRecord,
    SimFacts,
    Slot,
)
from .reviewers import is_label_source, load_reviews, read_reviewers
from .scoring import (
    PAIRWISE_QUESTION,
    TOPICS,
    GeneratedProblem,
    InvalidGeneration,
    assign_topics,
    content_key,
    generation_messages,
    pairwise_outcome,
    parse_generated,
    pick_reference,
    problem_card,
)
from .verification import (
    Verification,
    load_verifications,
    save_verifications,
    verifications_path,
)

_DATASET_FIELDS = ["id", "topic", "problem", "answer", "solution", "reference_id", "attempts"]

SIM_FACTS = SimFacts(sim.REAL_TRUE_QUALITY, sim.LOGIT_PER_POINT, sim.SIM_REVIEW_NOISE)
"""The simulator's constants every result carries for the report."""


def load_study_reference(params: DatagenParams) -> pd.DataFrame:
    """The reference problems of a study (all sources; see :func:`unique_reference`).

    Raises:
        evalbench.sources.DataUnavailable: a registered file is not reachable.
    """
    ref = params.reference
    frames = [load_reference(ref.sources, years=ref.years)] if ref.sources else []
    if ref.hf_dataset:
        frames.append(
            load_hf_reference(ref.hf_dataset, split=ref.hf_split, revision=ref.hf_revision)
        )
    return pd.concat(frames, ignore_index=True)


# --------------------------------------------------------------------------- generation


def problem_slots(n: int, rng: np.random.Generator, topics: Sequence[str] = TOPICS) -> list[Slot]:
    """``n`` slots ``gen_0001, gen_0002, ...`` with balanced, shuffled topics."""
    width = max(4, len(str(n)))
    return [Slot(f"gen_{i + 1:0{width}d}", t) for i, t in enumerate(assign_topics(n, rng, topics))]


def attempt_rng(seed: int, problem_id: str, attempt: int) -> np.random.Generator:
    """The generator that picks the style reference of one attempt (pure, resume-safe)."""
    digest = hashlib.sha256(f"{problem_id}#{attempt}".encode()).digest()
    words = [seed & 0xFFFFFFFF, *(int.from_bytes(digest[i : i + 4], "little") for i in (0, 4))]
    return np.random.default_rng(np.random.SeedSequence(words))


class PlannedGeneration(NamedTuple):
    """One generator call: the job and what it was for."""

    job: Job
    slot: Slot
    attempt: int
    reference_id: str


def generation_job(
    slot: Slot,
    attempt: int,
    reference: pd.DataFrame,
    *,
    seed: int,
    json_mode: bool = False,
) -> PlannedGeneration:
    """The chat job of one attempt at one slot (key ``gen:<id>#<attempt>``).

    The style reference is drawn with :func:`attempt_rng`, so every attempt shows its own
    reference and asks with its own request seed: a retry is never a cache hit of the
    invalid answer before it.

    Args:
        slot: the problem to generate.
        attempt: the attempt number (1 = first).
        reference: the real problems to draw the style reference from.
        seed: the study seed.
        json_mode: ask for ``response_format: json_object``.
    """
    row = pick_reference(reference, attempt_rng(seed, slot.id, attempt))
    key = f"gen:{slot.id}#{attempt}"
    request = ChatRequest(
        messages=generation_messages(row, slot.topic),
        seed=None if attempt == 1 else attempt,
        response_format={"type": "json_object"} if json_mode else None,
    )
    respond = partial(
        sim.sim_generate,
        reference_problem=str(row["problem"]),
        reference_answer=int(row["answer"]),
        topic=slot.topic,
    )
    truth = {"reference_id": str(row["id"]), "topic": slot.topic}
    return PlannedGeneration(
        Job(key, request, SimTask(respond, key, truth)), slot, attempt, truth["reference_id"]
    )


def read_generation(
    planned: PlannedGeneration, response: ResponseRecord
) -> GeneratedProblem | InvalidGeneration:
    """Parse one generator response; a failed call is an invalid attempt with its error."""
    if response.error is not None:
        return InvalidGeneration(
            reason=f"generator call failed: {response.error}",
            raw="",
            attempt=planned.attempt,
            id=planned.slot.id,
            reference_id=planned.reference_id,
        )
    return parse_generated(
        response.text,
        id=planned.slot.id,
        reference_id=planned.reference_id,
        requested_topic=planned.slot.topic,
        attempt=planned.attempt,
    )


def progress_postfix(job: Job, response: ChatResponse) -> dict[str, Any]:
    """Progress-bar fields for the last generator answer: its topic and answer."""
    parsed = parse_generated(response.text if response.error is None else None, id=job.key)
    if isinstance(parsed, GeneratedProblem):
        return {"topic": parsed.topic, "answer": parsed.answer}
    return {"topic": "-", "answer": "invalid"}


def generate_problems(run: Run[DatagenParams], reference: pd.DataFrame) -> GenerationResult:
    """Generate every slot, retrying invalid outputs, and write the dataset.

    The slots are ``n_problems`` with balanced topics, subsampled by ``tier`` / ``sample``
    (stratified by topic). Round ``r`` asks the generator for every slot still invalid
    after ``r − 1`` attempts.
    Each answer is checkpointed as it arrives (``records/generations.jsonl``), so an
    interrupted run resumes where it stopped: no problem lost, none asked twice. Writes
    ``records/problems.jsonl``, ``records/invalid.jsonl`` and the dataset
    ``<run dir>/generated.jsonl`` (the ``<data>`` of ``<data>_verifications.json``).

    Args:
        run: the open :class:`evalbench.runs.Run` of a ``datagen`` study.
        reference: real problems to draw style references from (:func:`unique_reference`).
    """
    params = run.params
    every = problem_slots(params.n_problems, run.rng("topics"), params.topics)
    slots = apply_tier(every, params, item_id=lambda s: s.id, stratum=lambda s: s.topic)
    valid: dict[str, GeneratedProblem] = {}
    invalid: list[InvalidGeneration] = []
    pending, calls = slots, 0
    for attempt in range(1, params.max_attempts + 1):
        planned = [
            generation_job(s, attempt, reference, seed=params.seed, json_mode=params.json_mode)
            for s in pending
        ]
        answers = run.ask(
            params.generator,
            [p.job for p in planned],
            store="generations",
            desc=f"generate (attempt {attempt})",
            postfix=progress_postfix,
        )
        for p in planned:
            result = read_generation(p, answers[p.job.key])
            if isinstance(result, GeneratedProblem):
                valid[p.slot.id] = result
            else:
                invalid.append(result)
        calls += len(planned)
        pending = [s for s in pending if s.id not in valid]
        if not pending:
            break
    return _generation_result(run, slots, valid, invalid, calls)


def _generation_result(
    run: Run[DatagenParams],
    slots: list[Slot],
    valid: Mapping[str, GeneratedProblem],
    invalid: list[InvalidGeneration],
    calls: int,
) -> GenerationResult:
    simulated = run.params.generator.simulated
    rows = [
        {**valid[s.id].model_dump(), "true_quality": _truth(valid[s.id].problem, simulated)}
        for s in slots
        if s.id in valid
    ]
    problems = pd.DataFrame(rows, columns=[*GeneratedProblem.model_fields, "true_quality"])
    bad = pd.DataFrame(
        [r.model_dump() for r in invalid], columns=list(InvalidGeneration.model_fields)
    )
    run.write_records("problems", plain_rows(problems))
    run.write_records("invalid", plain_rows(bad))
    write_jsonl(run.dir / "generated.jsonl", problems[_DATASET_FIELDS].to_dict("records"))
    unfilled = [s.id for s in slots if s.id not in valid]
    return GenerationResult(problems, bad, slots, unfilled, calls)


def _truth(problem: str, simulated: bool) -> float | None:
    return sim.sim_true_quality(problem) if simulated else None


# --------------------------------------------------------------------------- judging


def rubric_tasks(problems: pd.DataFrame) -> list[RubricTask]:
    """One ``aime_quality`` judgment per problem, keyed by :func:`content_key` (truth for
    the sim judge from the text)."""
    return [
        RubricTask(
            content_key(str(p["id"]), problem_card(p, with_solution=True)),
            JudgeCase(
                question=f"Write one new AIME-style problem on the topic: {p['topic']}.",
                answer=problem_card(p, with_solution=True),
            ),
            truth=sim.sim_true_quality(str(p["problem"])),
        )
        for p in problems.to_dict("records")
    ]


def judge_problems(run: Run[DatagenParams], problems: pd.DataFrame) -> pd.DataFrame:
    """Score every problem with the ``aime_quality`` rubric; writes ``records/quality.jsonl``.

    Returns :func:`evalbench.judge.judge_rubric` columns (``case_id`` is the
    :func:`~.scoring.content_key`) plus ``problem_id``; unscored rows are kept.
    """
    frame = judge_rubric(run, run.params.judge, "aime_quality", rubric_tasks(problems))
    frame.insert(1, "problem_id", problems["id"].astype(str).tolist())  # rows in task order
    run.write_records("quality", plain_rows(frame))
    return frame


def pair_plan(
    problems: pd.DataFrame, real: pd.DataFrame, n_pairs: int, rng: np.random.Generator
) -> pd.DataFrame:
    """Which generated problem meets which real one.

    Generated problems are taken in a random order without repetition (cycling through
    fresh permutations when ``n_pairs`` exceeds them); each meets a real problem drawn
    uniformly.

    Returns:
        Columns ``pair_id`` (``w0001@...``, a :func:`content_key` of both problems),
        ``generated_id, reference_id``.
    """
    if problems.empty or real.empty or n_pairs == 0:
        return pd.DataFrame(columns=["pair_id", "generated_id", "reference_id"])
    rounds = -(-n_pairs // len(problems))
    order = np.concatenate([rng.permutation(len(problems)) for _ in range(rounds)])[:n_pairs]
    opponents = rng.integers(len(real), size=n_pairs)
    gen_ids = problems["id"].astype(str).to_numpy()[order]
    ref_ids = real["id"].astype(str).to_numpy()[opponents]
    gen_text = problems["problem"].astype(str).to_numpy()[order]
    ref_text = real["problem"].astype(str).to_numpy()[opponents]
    pairs = enumerate(zip(gen_text, ref_text, strict=True))
    pair_ids = [content_key(f"w{k + 1:04d}", g, r) for k, (g, r) in pairs]
    return pd.DataFrame({"pair_id": pair_ids, "generated_id": gen_ids, "reference_id": ref_ids})


def pair_tasks(plan: pd.DataFrame, problems: pd.DataFrame, real: pd.DataFrame) -> list[PairTask]:
    """Pairwise tasks, generated problem as ``x`` and real as ``y`` (sim truth: the
    problems' qualities on the log-odds scale, real ones at :data:`sim.REAL_TRUE_QUALITY`)."""
    gen = problems.set_index(problems["id"].astype(str))
    ref = real.set_index(real["id"].astype(str))
    tasks = []
    for pair_id, gid, rid in plan[["pair_id", "generated_id", "reference_id"]].itertuples(
        index=False
    ):
        g, r = gen.loc[gid], ref.loc[rid]
        tasks.append(
            PairTask(
                pair_id=str(pair_id),
                question=PAIRWISE_QUESTION,
                model_x="generated",
                answer_x=problem_card(g),
                model_y="real",
                answer_y=problem_card(r),
                quality_x=sim.quality_logit(sim.sim_true_quality(str(g["problem"]))),
                quality_y=sim.quality_logit(sim.REAL_TRUE_QUALITY),
            )
        )
    return tasks


def compare_with_real(
    run: Run[DatagenParams], problems: pd.DataFrame, real: pd.DataFrame
) -> pd.DataFrame | None:
    """Judge ``win_rate_pairs`` generated-vs-real pairs in both orders.

    Writes ``records/pairwise.jsonl``.

    Returns:
        One row per pair: :func:`evalbench.judge.judge_pairs` columns plus
        ``generated_id, reference_id`` and ``outcome`` (``win``/``loss``/``tie`` for the
        generated problem, ``None`` when unscored or dropped); ``None`` when no pairs.
    """
    params = run.params
    plan = pair_plan(problems, real, params.win_rate_pairs, run.rng("pairs"))
    if plan.empty:
        return None
    judged = judge_pairs(
        run,
        params.judge,
        pair_tasks(plan, problems, real),
        verdict_format=params.verdict_format,
        both_orders=True,
        policy=params.inconsistent,
    )
    judged = judged.rename(columns={"outcome": "order_outcome"})
    verdicts = plan.merge(judged, on="pair_id", validate="one_to_one")
    verdicts["outcome"] = [pairwise_outcome(f, "x") for f in verdicts["final"]]
    run.write_records("pairwise", plain_rows(verdicts))
    return verdicts


def read_given_reviews(params: DatagenParams) -> pd.DataFrame | dict[str, Verification] | None:
    """The reviews of the params file's ``verifications:`` path, read and checked before any
    problem is generated (a bad file costs nothing); ``None`` for ``simulated`` or none.

    Raises:
        ValueError: the file (or a label line) that does not read, naming it.
    """
    source = params.verifications
    if source in (None, "simulated"):
        return None
    path = Path(source)
    return load_reviews(path) if is_label_source(path) else load_verifications(path)


def study_verifications(
    run: Run[DatagenParams],
    problems: pd.DataFrame,
    given: pd.DataFrame | dict[str, Verification] | None = None,
) -> HumanData:
    """The human reviews of this run: simulated, from the params file's path (``given``: as
    :func:`read_given_reviews` read them), or from ``<run dir>/generated_verifications.json``
    when a reviewer has written it.

    Simulated reviews (which need a simulated generator's hidden truth) are saved to
    ``<run dir>/simulated_verifications.json`` and read back like a reviewer's file.
    """
    params = run.params
    source = params.verifications
    if source == "simulated":
        if problems["true_quality"].isna().any():
            raise ValueError(
                "verifications: simulated needs a simulated generator (hidden true quality)"
            )
        path = run.dir / "simulated_verifications.json"
        reviews = sim.sim_verifications(problems, params.human_sample, run.rng("human"))
        save_verifications(path, reviews)
    else:
        path = Path(source) if source else verifications_path(run.dir / "generated.jsonl")
    ids = set(problems["id"].astype(str))
    if source not in (None, "simulated") and is_label_source(path):
        got = read_reviewers(
            path, ids, rng=run.rng("reviewers"), rounds=params.bootstrap_rounds,
            level=params.confidence_level,
            every=given if isinstance(given, pd.DataFrame) else None,
        )  # fmt: skip
        simulated = bool(len(got.reviews)) and bool(got.reviews["simulated"].all())
        return HumanData(got.verifications, path, simulated, got.unknown_ids, got)
    loaded = given if isinstance(given, dict) else load_verifications(path)
    known = {k: v for k, v in loaded.items() if k in ids}
    unknown = sorted(set(loaded) - ids)
    return HumanData(known, path if path.exists() else None, source == "simulated", unknown)


# --------------------------------------------------------------------------- the run


def run_study(run: Run[DatagenParams], reference: pd.DataFrame) -> DatagenResult:
    """Generate, judge, compare with real problems, check duplicates, read reviews, summarize.

    Writes ``records/problems, invalid, quality, pairwise, duplicates`` and
    ``<run dir>/generated.jsonl``; every model call is cached and checkpointed.

    Args:
        run: the open :class:`evalbench.runs.Run` of a ``datagen`` study.
        reference: from :func:`load_study_reference`.

    Raises:
        NoResult: no problem was valid, or the judge scored none (nothing to evaluate).
    """
    params = run.params
    given = read_given_reviews(params)
    real = unique_reference(reference)
    generation = generate_problems(run, real)
    problems = generation.problems
    if problems.empty:  # nothing to judge: the manifest and a page say why
        run.no_result(_measured(params, generation, None))
    judged = judge_problems(run, problems)
    if nothing_measured(rows := _measured(params, generation, judged)):
        run.no_result(rows)
    duplicates = near_duplicates(problems, reference, threshold=params.duplicate_threshold)
    run.write_records("duplicates", plain_rows(duplicates.top))
    verdicts = compare_with_real(run, problems, real)
    human = study_verifications(run, problems, given)
    summary = summarize(
        problems,
        rng=run.rng("summary"),
        judge_results=judged,
        verdicts=verdicts,
        duplicates=duplicates,
        verifications=human.verifications,
        n_invalid=len(generation.invalid),
        thresholds=params.thresholds.model_dump(),
        duplicate_policy=params.duplicate_policy,
        topics=params.topics,
        rounds=params.bootstrap_rounds,
        level=params.confidence_level,
    )
    return DatagenResult(
        params, reference, real, generation, judged, judge_vs_truth(judged, problems), verdicts,
        duplicates, human, summary,
        real_answers=answer_distribution(real["answer"]),
        mismatches=answer_mismatches(reference),
        usage=run.recorded_usage(),
        simulated=run.simulated_names,
        sim_facts=SIM_FACTS,
    )  # fmt: skip


def _measured(
    params: DatagenParams, generation: GenerationResult, judged: pd.DataFrame | None
) -> list[Measured]:
    slots = [s.id for s in generation.slots]
    return measured_generator(params.generator.name, slots, generation.invalid, judged,
                              params.max_attempts)  # fmt: skip


def measured_of(result: DatagenResult) -> list[Measured]:
    """The generator's problems the judge scored (:func:`~.metrics.measured_generator`)."""
    return _measured(result.params, result.generation, result.judge_results)


def run(run: Run[DatagenParams]) -> DatagenResult:
    """The whole study: :func:`load_study_reference`, then :func:`run_study`."""
    with run.timed("load"):
        reference = load_study_reference(run.params)
    return run_study(run, reference)


def counts(result: DatagenResult) -> dict[str, int]:
    """Item and record counts for the manifest."""
    summary = result.summary
    return {
        "problems": len(result.problems),
        "invalid_outputs": len(result.generation.invalid),
        "unfilled": len(result.generation.unfilled),
        "judge_unscored": summary.judge.n_unscored if summary.judge else 0,
        "pairs_unscored": summary.win.unscored if summary.win else 0,
        "near_duplicates": len(result.duplicates.flagged_ids()),
        "verifications": len(result.human.verifications),
    }


def notes(result: DatagenResult) -> list[str]:
    """Remarks for the index: reviews written by the simulated reviewer."""
    return ["simulated reviews"] if result.human.simulated else []


STUDY = Study(
    kind="datagen",
    params=DatagenParams,
    run=run,
    notebook="datagen_quality.ipynb",
    records={
        "generations": ResponseRecord,
        "judgments": ResponseRecord,
        "problems": ProblemRecord,
        "invalid": InvalidGeneration,
        "quality": QualityRecord,
        "pairwise": PairwiseRecord,
        "duplicates": DuplicateRecord,
    },
    headlines=report.headlines,
    findings=report.findings,
    counts=counts,
    measured=measured_of,
    notes=notes,
)
"""The datagen study kind (see :mod:`evalbench.studies`)."""
