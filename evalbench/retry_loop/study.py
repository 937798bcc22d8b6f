"""The suggestion-driven retry loop (``study: retry_loop``): does the judge's feedback help?

A generator answers every question (round 0); a judge scores the answer on a 3-dimension
1-10 rubric and writes a suggestion; the generator retries with that suggestion (the
**suggestion** arm) or with the same words and no suggestion (the **control** arm), up to
``rounds`` times or until the weighted score reaches ``threshold``. Every call goes through
:meth:`evalbench.runs.Run.ask` (cached, checkpointed: a rerun resumes and asks nothing twice);
the loop proceeds round by round over all items. An optional second judge grades the first
and final answers (the self-preference check). Notebook: ``retry_loop.ipynb``.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from evalbench.judge import JudgeCase, RubricTask, judge_rubric, rubric_key
from evalbench.models import ChatRequest, Job, ModelSpec, SimTask, token_cost
from evalbench.records import ResponseRecord
from evalbench.runs import Run
from evalbench.studies import Study
from evalbench.tiers import apply_tier

from . import metrics as M
from . import report
from .data import load_items
from .records import (
    RetryLoopParams,
    RetryLoopResult,
    RoundRecord,
    SecondJudgmentRecord,
    SelfPreference,
)
from .scoring import SUGGESTION_FIELD, first_messages, retry_messages, round_outcome
from .sim import loop_judge_truth, sim_answer, true_scores


def load_study_items(params: RetryLoopParams) -> pd.DataFrame:
    """The questions of ``params.items``: the first ``limit``, then the ``tier`` / ``sample``
    subsample (seeded by ``sample_seed``)."""
    items = load_items(params.items)
    items = items.head(params.limit) if params.limit else items
    ids = apply_tier(list(items["item"]), params, item_id=str, stratum=lambda _: "all")
    return items[items["item"].isin(set(ids))].reset_index(drop=True)


class Attempt(NamedTuple):
    """One answer to ask for: an item in an arm and round (round 0: ``arm`` is ``first``)."""

    item: str
    arm: str
    round: int
    messages: list[dict[str, str]]
    truth: float | None
    """A simulated answer's true score (``None`` for a real generator)."""


def answer_key(item: str, arm: str, round: int) -> str:
    """The generator's job key (round 0 is one answer for both arms)."""
    return f"answer:{item}:r0" if round == 0 else f"answer:{item}:{arm}:r{round}"


def case_id(item: str, arm: str, round: int) -> str:
    """The judges' case id of an answer (round 0 is one case for both arms)."""
    return f"{item}:r0" if round == 0 else f"{item}:{arm}:r{round}"


def _generator_jobs(spec: ModelSpec, attempts: Sequence[Attempt]) -> list[Job]:
    jobs = []
    for a in attempts:
        key = answer_key(a.item, a.arm, a.round)
        sim = None
        if spec.simulated:
            respond = partial(sim_answer, label=f"{a.item}, round {a.round}, {a.arm}")
            sim = SimTask(respond, key, {"truth": a.truth})
        jobs.append(Job(key, ChatRequest(messages=a.messages), sim))
    return jobs


class Asked(NamedTuple):
    """What one round asked: a row per attempt (the :class:`~.records.RoundRecord` fields
    but ``arm``'s stop) and the answers' texts by (item, arm, round)."""

    rows: list[dict[str, Any]]
    texts: dict[tuple[str, str, int], str]


def ask_round(
    run: Run[RetryLoopParams], attempts: Sequence[Attempt], items: pd.DataFrame,
    typical: float | None,
) -> Asked:  # fmt: skip
    """Ask the generator for every attempt, then the loop judge to grade every answer."""
    p = run.params
    answers = run.ask(p.generator, _generator_jobs(p.generator, attempts), store="answers",
                      desc=f"{p.generator.name} round {attempts[0].round}")  # fmt: skip
    by_item = items.set_index("item")
    texts, tasks = {}, []
    for a in attempts:
        reply = answers[answer_key(a.item, a.arm, a.round)]
        if reply.error is None and (reply.text or "").strip():
            texts[(a.item, a.arm, a.round)] = str(reply.text)
            case = JudgeCase(question=by_item.loc[a.item, "question"], answer=str(reply.text),
                             reference=by_item.loc[a.item, "reference"])  # fmt: skip
            truth = (
                None if a.truth is None else loop_judge_truth(a.truth, a.arm, a.round, p.simulation)
            )
            tasks.append(RubricTask(case_id(a.item, a.arm, a.round), case, truth))
    judged = _judge(run, p.judge, tasks, typical)
    rows = [_row(run, a, answers[answer_key(a.item, a.arm, a.round)], judged) for a in attempts]
    return Asked(rows, texts)


def _judge(
    run: Run[RetryLoopParams], judge: ModelSpec, tasks: Sequence[RubricTask],
    typical: float | None,
) -> dict[str, dict[str, Any]]:  # fmt: skip
    """The judge's parsed judgments by case id (none without tasks)."""
    if not tasks:
        return {}
    frame = judge_rubric(run, judge, run.params.rubric_obj(), tasks, store="judgments",
                         typical_length=typical)  # fmt: skip
    return {str(r["case_id"]): r for r in frame.to_dict("records")}


def _call_usage(
    spec: ModelSpec, record: ResponseRecord | dict[str, Any] | None
) -> tuple[int, int, float]:
    if record is None:
        return 0, 0, 0.0
    row = record.model_dump() if isinstance(record, ResponseRecord) else record
    prompt, completion = row.get("prompt_tokens") or 0, row.get("completion_tokens") or 0
    return int(prompt), int(completion), token_cost(spec, prompt, completion)


def _row(
    run: Run[RetryLoopParams], a: Attempt, reply: ResponseRecord,
    judged: dict[str, dict[str, Any]],
) -> dict[str, Any]:  # fmt: skip
    p, cid = run.params, case_id(a.item, a.arm, a.round)
    judgment = judged.get(cid)
    judge_key = rubric_key(p.rubric_obj(), cid) if judgment is not None else None
    stored = run.store("judgments", ("system", "key")).get((p.judge.name, judge_key or ""))
    usage = [_call_usage(p.generator, reply), _call_usage(p.judge, stored)]
    row: dict[str, Any] = {
        "item": a.item, "round": a.round, "answer_key": answer_key(a.item, a.arm, a.round),
        "judge_key": judge_key, "truth": a.truth,
        "prompt_tokens": sum(u[0] for u in usage), "completion_tokens": sum(u[1] for u in usage),
        "cost_usd": sum(u[2] for u in usage),
    }  # fmt: skip
    if judgment is None:
        error = reply.error or "empty answer"
        return row | {"status": "generator_error", "generator_error": error}
    return row | _judgment_fields(judgment, p.rubric_obj().dimensions)


def _judgment_fields(judgment: dict[str, Any], dimensions: Sequence[Any]) -> dict[str, Any]:
    if judgment["status"] != "scored":
        return {"status": "unscored", "unscored_reason": judgment.get("unscored_reason")}
    suggestion = judgment.get(f"extra_{SUGGESTION_FIELD}")
    return {
        "status": "scored",
        "weighted_score": float(judgment["weighted_score"]),
        "scores": {d.name: float(judgment[f"score_{d.name}"]) for d in dimensions},
        "suggestion": suggestion if isinstance(suggestion, str) else None,
    }


def _stopped(p: RetryLoopParams, row: dict[str, Any], arm: str) -> str | None:
    return round_outcome(
        status=row["status"], weighted=row.get("weighted_score"), suggestion=row.get("suggestion"),
        round=row["round"], rounds=p.rounds, threshold=p.threshold, arm=arm,
    )  # fmt: skip


class Loop(NamedTuple):
    """The loop's round records and every answer's text by (item, arm, round)."""

    rows: list[dict[str, Any]]
    texts: dict[tuple[str, str, int], str]
    typical: float
    """The median length of the first answers (the judges' length-bias reference)."""


def run_loop(run: Run[RetryLoopParams], items: pd.DataFrame) -> Loop:
    """Round 0 for every item, then round by round every item still retrying, in each arm.

    Resumable: answers and judgments are checkpointed as they arrive, so a rerun after a
    kill asks only what is missing and ends with one record per item, arm and round reached.
    """
    p = run.params
    truths = _truths(run, items)
    questions = dict(zip(items["item"], items["question"], strict=True))
    first = [Attempt(i, "first", 0, first_messages(q), _truth(truths, i, "suggestion", 0))
             for i, q in zip(items["item"], items["question"], strict=True)]  # fmt: skip
    asked = ask_round(run, first, items, None)
    lengths = [len(t) for t in asked.texts.values()]
    typical = float(np.median(lengths)) if lengths else 1.0
    texts = {(i, arm, 0): t for (i, _, _), t in asked.texts.items() for arm in p.arms()}
    rows: list[dict[str, Any]] = []
    active: dict[tuple[str, str], dict[str, Any]] = {}
    for row in asked.rows:
        for arm in p.arms():
            rows.append(row | {"arm": arm, "shared": True, "stopped": _stopped(p, row, arm)})
            if rows[-1]["stopped"] is None:
                active[(row["item"], arm)] = rows[-1]
    for r in range(1, p.rounds + 1):
        if not active:
            break
        attempts = [
            _retry(questions, texts, row, arm, r, truths) for (_, arm), row in active.items()
        ]
        asked = ask_round(run, attempts, items, typical)
        texts |= asked.texts
        active = {}
        for a, row in zip(attempts, asked.rows, strict=True):
            rows.append(row | {"arm": a.arm, "shared": False, "stopped": _stopped(p, row, a.arm)})
            if rows[-1]["stopped"] is None:
                active[(a.item, a.arm)] = rows[-1]
    return Loop(rows, texts, typical)


def _truths(run: Run[RetryLoopParams], items: pd.DataFrame) -> dict[str, dict[str, np.ndarray]]:
    p = run.params
    if not p.generator.simulated:
        return {}
    return {i: true_scores(p.simulation, p.rounds, ["suggestion", "control"], run.rng("truth", i))
            for i in items["item"]}  # fmt: skip


def _truth(truths: dict[str, dict[str, np.ndarray]], item: str, arm: str, r: int) -> float | None:
    return float(truths[item][arm][r]) if truths else None


def _retry(
    questions: dict[str, str], texts: dict[tuple[str, str, int], str], previous: dict[str, Any],
    arm: str, r: int, truths: dict[str, dict[str, np.ndarray]],
) -> Attempt:  # fmt: skip
    item = previous["item"]
    suggestion = previous["suggestion"] if arm == "suggestion" else None
    messages = retry_messages(questions[item], texts[(item, arm, r - 1)], suggestion)
    return Attempt(item, arm, r, messages, _truth(truths, item, arm, r))


def round_records(loop: Loop) -> pd.DataFrame:
    """The loop's rows as :class:`~.records.RoundRecord` columns (validated), in loop order."""
    records = [RoundRecord.model_validate(row).model_dump() for row in loop.rows]
    return pd.DataFrame(records, columns=list(RoundRecord.model_fields))


# --------------------------------------------------------------------------- second judge


def second_tasks(
    run: Run[RetryLoopParams], items: pd.DataFrame, finals: pd.DataFrame, loop: Loop
) -> tuple[list[RubricTask], list[tuple[str, str, int]]]:
    """The second judge's cases: each item's first answer, and each arm's final answer when
    it is a retry (a final answer of round 0 is the first answer). Returns the tasks and,
    for each, ``(item, answer, round)`` (``answer``: ``first`` or the arm)."""
    by_item = items.set_index("item")
    truths = _truths(run, items)
    wanted = [(i, "first", 0) for i in dict.fromkeys(finals["item"])]
    wanted += [
        (f.item, f.arm, int(f.final_round)) for f in finals.itertuples() if f.final_round > 0
    ]
    tasks = []
    for item, answer, r in wanted:
        arm = "suggestion" if answer == "first" else answer
        case = JudgeCase(question=by_item.loc[item, "question"], answer=loop.texts[(item, arm, r)],
                         reference=by_item.loc[item, "reference"])  # fmt: skip
        tasks.append(RubricTask(case_id(item, answer, r), case, _truth(truths, item, arm, r)))
    return tasks, wanted


def run_second_judge(
    run: Run[RetryLoopParams], items: pd.DataFrame, rounds: pd.DataFrame, loop: Loop
) -> pd.DataFrame | None:
    """The second judge on the first and final answers (``None`` without one); writes
    ``records/second_judgments.jsonl``."""
    p = run.params
    if p.second_judge is None:
        return None
    tasks, wanted = second_tasks(run, items, M.final_rounds(rounds), loop)
    frame = judge_rubric(run, p.second_judge, p.rubric_obj(), tasks, store="judgments",
                         typical_length=loop.typical) if tasks else pd.DataFrame()  # fmt: skip
    rows = []
    for (item, answer, r), judgment in zip(wanted, frame.to_dict("records"), strict=True):
        fields = _judgment_fields(judgment, p.rubric_obj().dimensions)
        rows.append(SecondJudgmentRecord.model_validate({
            **{k: judgment[k] for k in ("judge", "replicate", "rubric", "status", "passed",
                                        "excellent", "parse_method", "unscored_kind",
                                        "unscored_reason", "raw", "error")},
            "weighted_score": fields.get("weighted_score"), "scores": fields.get("scores", {}),
            "item": item, "answer": answer, "round": r,
        }).model_dump())  # fmt: skip
    run.write_records("second_judgments", rows)
    return pd.DataFrame(rows, columns=list(SecondJudgmentRecord.model_fields))


def _second(
    run: Run[RetryLoopParams], items: pd.DataFrame, rounds: pd.DataFrame, loop: Loop
) -> SelfPreference | None:
    p = run.params
    second = run_second_judge(run, items, rounds, loop)
    if second is None:
        return None
    per_item = M.self_preference_items(M.final_rounds(rounds), second)
    stats: dict[str, Any] = {"rounds": p.bootstrap_rounds, "level": p.confidence_level}
    table = M.self_preference(per_item, arms=p.arms(), rng=run.rng("self-preference"), **stats)
    if not p.control:
        return SelfPreference(per_item, table, None, None)
    difference = M.gap_difference(per_item, rng=run.rng("gap-difference"), **stats)
    effect = M.second_effect(per_item, rng=run.rng("second-effect"), **stats)
    return SelfPreference(per_item, table, difference, effect)


# --------------------------------------------------------------------------- the study


def _statistics(
    run: Run[RetryLoopParams], rounds: pd.DataFrame
) -> tuple[dict[str, pd.DataFrame], pd.DataFrame, pd.DataFrame | None]:
    """The paths per arm, the per-round gains of every arm and the suggestion's effect."""
    p = run.params
    stats: dict[str, Any] = {"rounds": p.bootstrap_rounds, "level": p.confidence_level}
    paths = {arm: M.score_paths(rounds, arm, p.rounds) for arm in p.arms()}
    truth = {arm: M.score_paths(rounds, arm, p.rounds, "truth") for arm in p.arms()}
    simulated = p.generator.simulated
    gains = pd.concat([
        M.round_gains(paths[arm], arm=arm, rng=run.rng("gains", arm),
                      truth=truth[arm] if simulated else None, **stats)
        for arm in p.arms()
    ], ignore_index=True)  # fmt: skip
    effect = None
    if p.control:
        effect = M.suggestion_effect(
            paths["suggestion"], paths["control"], rng=run.rng("effect"),
            truth=(truth["suggestion"], truth["control"]) if simulated else None, **stats,
        )  # fmt: skip
    return paths, gains, effect


def run(run: Run[RetryLoopParams]) -> RetryLoopResult:
    """Run the loop in every arm, the second judge, and summarize; writes the records."""
    p = run.params
    with run.timed("load"):
        items = load_study_items(p)
    loop = run_loop(run, items)
    rounds = round_records(loop)
    run.write_records("rounds", rounds.to_dict("records"))
    paths, gains, effect = _statistics(run, rounds)
    second = _second(run, items, rounds, loop)
    return RetryLoopResult(
        params=p, rubric=p.rubric_obj(), items=items, rounds=rounds, paths=paths, gains=gains,
        shares=M.round_shares(rounds, p.confidence_level), costs=M.round_costs(rounds, gains),
        effect=effect, stops={arm: M.stops_helping(gains, arm) for arm in p.arms()},
        second=second, usage=run.recorded_usage(), simulated=run.simulated_names,
    )  # fmt: skip


def counts(result: RetryLoopResult) -> dict[str, int]:
    """Items, round records, retries per arm, unscored judgments and failed generator calls."""
    rounds = result.rounds
    out = {"items": len(result.items), "round_records": len(rounds)}
    for arm in result.params.arms():
        out[f"retries_{arm}"] = int(((rounds["arm"] == arm) & (rounds["round"] > 0)).sum())
    first = rounds[rounds["shared"]].drop_duplicates("item")
    distinct = pd.concat([first, rounds[~rounds["shared"]]])
    out["unscored"] = int((distinct["status"] == "unscored").sum())
    out["generator_errors"] = int((distinct["status"] == "generator_error").sum())
    return out


STUDY = Study(
    kind="retry_loop",
    params=RetryLoopParams,
    run=run,
    notebook="retry_loop.ipynb",
    records={
        "answers": ResponseRecord,
        "judgments": ResponseRecord,
        "rounds": RoundRecord,
        "second_judgments": SecondJudgmentRecord,
    },
    headlines=report.headlines,
    findings=report.findings,
    counts=counts,
    measured=lambda result: M.measured_arms(result.rounds),
    optional_records=frozenset({"second_judgments"}),  # without a second judge
)
