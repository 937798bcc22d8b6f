"""evalbench.retry_loop.study: params, the loop end to end (sim and a loopback endpoint),
resuming after a crash, and unparseable judge output counted unscored."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml
from loopback import Reply
from studyfiles import CANARY_KEY, KEY_ENV

from evalbench import retry_loop as RL
from evalbench.judge import parse_rubric_output
from evalbench.params import ParamsError
from evalbench.records import read_jsonl
from evalbench.retry_loop import study
from evalbench.retry_loop.records import RoundRecord
from evalbench.runs import Run
from evalbench.studies import load_params, open_run

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "params" / "retry_loop_demo.yaml"


def _params_file(tmp_path: Path, name: str = "loop", **changes: Any) -> Path:
    data = yaml.safe_load(DEMO.read_text())
    data.update({"limit": 6, "rounds": 2, "bootstrap_rounds": 50, **changes})
    data = {k: v for k, v in data.items() if v is not None or k == "threshold"}
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"rubric": "hle"}, "rubric 'hle' has no text output field 'suggestion'"),
        ({"rounds": 4}, r"simulation\.gains: 3 values for 4 rounds"),
        ({"second_judge": {"name": "judge-sim", "provider": "sim"}}, "need unique names"),
        ({"generator": {"name": "g", "provider": "openai", "model": "m"}},
         "a simulated judge grades the simulation's known truth"),
        ({"simulation": {"gain": [1]}}, r"simulation\.gain: unknown key"),
        ({"rounds": 11}, "rounds: Input should be less than or equal to 10"),
    ],
)  # fmt: skip
def test_params_errors_name_the_field(tmp_path: Path, changes: dict, message: str) -> None:
    with pytest.raises(ParamsError, match=message):
        load_params(_params_file(tmp_path, **changes))


def _one_per_round(rows: list[dict[str, Any]]) -> bool:
    keys = Counter((r["item"], r["arm"], r["round"]) for r in rows)
    return max(keys.values()) == 1


@pytest.mark.slow
def test_the_loop_end_to_end(tmp_path: Path) -> None:
    run = open_run(_params_file(tmp_path))
    result = RL.run(run)
    rows = read_jsonl(run.dir / "records" / "rounds.jsonl")
    assert _one_per_round(rows) and len(rows) == len(result.rounds)
    written = pd.DataFrame([RoundRecord.model_validate(row).model_dump() for row in rows])
    pd.testing.assert_frame_equal(written, result.rounds)
    # every item starts in both arms with the same first answer; its rounds have no gap,
    # and the loop ends exactly once, at its last round
    for _, part in result.rounds.groupby(["item", "arm"]):
        assert part["round"].tolist() == list(range(len(part)))
        assert part["stopped"].notna().tolist() == [False] * (len(part) - 1) + [True]
    first = result.rounds[result.rounds["round"] == 0]
    assert first.groupby("item")["answer_key"].nunique().eq(1).all() and first["shared"].all()
    answers = read_jsonl(run.dir / "records" / "answers.jsonl")
    assert len(answers) == len({r["key"] for r in answers})  # round 0 asked once for both arms
    assert len(answers) == 6 + int((result.rounds["round"] > 0).sum())
    # each round's tokens are its generator call's and its loop-judge call's, from the stores
    judged = {r["key"]: r for r in read_jsonl(run.dir / "records" / "judgments.jsonl")
              if r["system"] == "judge-sim"}  # fmt: skip
    by_key = {r["key"]: r for r in answers}
    for row in result.rounds.itertuples():
        calls = [by_key[row.answer_key], judged[row.judge_key]]
        assert row.prompt_tokens == sum(c["prompt_tokens"] for c in calls)
    seconds = read_jsonl(run.dir / "records" / "second_judgments.jsonl")
    assert {r["answer"] for r in seconds} == {"first", "suggestion", "control"}
    assert study.counts(result)["items"] == 6
    again = open_run(_params_file(tmp_path))
    RL.run(again)
    assert again.ledger.frame().empty  # a finished study reruns with no call


class _CrashAfter:
    """A run whose calls raise after ``k`` answers (a kill mid-run: what was answered is kept)."""

    def __init__(self, run: Run, k: int):
        self.run, self.left = run, k

    def __getattr__(self, name: str) -> object:
        return getattr(self.run, name)

    def ask(self, spec: object, jobs: object, **kw: Any) -> object:
        def postfix(job: object, response: object) -> dict[str, Any]:
            self.left -= 1
            if self.left < 0:
                raise RuntimeError("simulated crash")
            return {}

        return self.run.ask(spec, jobs, **{**kw, "postfix": postfix})  # type: ignore[arg-type]


@pytest.mark.slow
def test_a_killed_loop_resumes_with_one_record_per_item_and_round(tmp_path: Path) -> None:
    path = _params_file(tmp_path, second_judge=None)
    with pytest.raises(RuntimeError, match="simulated crash"):
        study.run_loop(_CrashAfter(open_run(path), 20), study.load_study_items(load_params(path)))  # type: ignore[arg-type]
    records = open_run(path).dir / "records"
    asked = {name: len(read_jsonl(records / f"{name}.jsonl")) for name in ("answers", "judgments")}
    assert asked["answers"] >= 6 and asked["answers"] + asked["judgments"] < 60  # stopped midway
    resumed = open_run(path)
    result = RL.run(resumed)
    whole = RL.run(open_run(_params_file(tmp_path, "uninterrupted", second_judge=None)))
    rows = read_jsonl(records / "rounds.jsonl")
    assert _one_per_round(rows) and len(rows) == len(whole.rounds)
    keep = ["item", "arm", "round", "status", "weighted_score", "stopped", "truth"]
    assert result.rounds[keep].equals(whole.rounds[keep])  # nothing lost, nothing changed
    calls = int(resumed.ledger.frame()["calls"].sum())
    assert calls == len(read_jsonl(records / "answers.jsonl")) + len(
        read_jsonl(records / "judgments.jsonl")
    ) - sum(asked.values())  # nothing asked twice
    for name in ("answers", "judgments"):
        keys = [(r["system"], r["key"]) for r in read_jsonl(records / f"{name}.jsonl")]
        assert len(keys) == len(set(keys))


def test_unparseable_judge_output_is_unscored_never_a_score(tmp_path: Path) -> None:
    judge = {"name": "judge-sim", "provider": "sim", "sim": {"malformed_rate": 0.4}}
    run = open_run(_params_file(tmp_path, judge=judge, limit=12, second_judge=None))
    result = RL.run(run)
    raw = {r["key"]: r["text"] for r in read_jsonl(run.dir / "records" / "judgments.jsonl")}
    parsed = {k: parse_rubric_output("fine_grained", t).status for k, t in raw.items()}
    distinct = result.rounds.drop_duplicates("judge_key")
    # every judgment the parser cannot score is an unscored round with no score, and the
    # loop of that item ends there; every other is scored
    unscored = distinct[distinct["status"] == "unscored"]
    assert len(unscored) == Counter(parsed.values())["unscored"] > 0
    assert unscored["weighted_score"].isna().all() and unscored["scores"].map(len).eq(0).all()
    assert (result.rounds.loc[result.rounds["status"] == "unscored", "stopped"] == "unscored").all()
    assert study.counts(result)["unscored"] == len(unscored)
    # the failed item leaves the statistics from that round on: n counts only scored pairs
    paths = result.paths["suggestion"]
    assert int(result.gains.iloc[0]["n"]) == int(paths[[0, 1]].notna().all(axis=1).sum())


def test_every_judgment_unscored_leaves_no_number(tmp_path: Path) -> None:
    judge = {"name": "judge-sim", "provider": "sim", "sim": {"malformed_rate": 1.0}}
    result = RL.run(open_run(_params_file(tmp_path, judge=judge, limit=4)))
    assert (result.rounds["round"] == 0).all() and (result.rounds["stopped"] == "unscored").all()
    assert result.gains["n"].eq(0).all() and result.gains["gain"].isna().all()
    assert result.second is not None and result.second.table["n"].eq(0).all()


def test_a_loop_on_an_endpoint(tmp_path: Path, loopback: Any, monkeypatch: Any) -> None:
    """Two questions, one retry, suggestion arm only, generator and judge on a loopback
    server answering one request at a time (the script's order is the requests')."""
    monkeypatch.setenv(KEY_ENV, CANARY_KEY)
    (tmp_path / "q.jsonl").write_text(
        '{"item": "a", "question": "Capital of France?"}\n{"item": "b", "question": "2+2?"}\n'
    )
    common = {"provider": "openai", "model": "m", "base_url": loopback.base_url,
              "api_key_env": KEY_ENV, "max_retries": 0, "max_concurrency": 1,
              "price_input_per_mtok": 1.0, "price_output_per_mtok": 2.0}  # fmt: skip
    path = _params_file(tmp_path, items="q.jsonl", rounds=1, threshold=None, control=False,
                        second_judge=None, generator={"name": "gen", **common},
                        judge={"name": "judge", **common}, limit=None)  # fmt: skip
    verdict = {"error_analysis": "none", "scores": {"accuracy": 6, "completeness": 5,
               "clarity": 8}, "reason": "ok", "suggestion": "Name the river it is on."}  # fmt: skip
    loopback.enqueue(Reply("Paris."), Reply("4"), Reply(json.dumps(verdict)), Reply("prose"),
                     Reply("Paris, on the Seine."), Reply(json.dumps(verdict)))  # fmt: skip
    result = RL.run(open_run(path))
    rows = result.rounds.set_index(["item", "round"])
    assert rows.loc[("a", 0), "weighted_score"] == pytest.approx(0.5 * 6 + 0.3 * 5 + 0.2 * 8)
    assert rows.loc[("b", 0), "status"] == "unscored" and ("b", 1) not in rows.index
    assert rows.loc[("a", 1), "stopped"] == "rounds" and rows["truth"].isna().all()
    retry = loopback.requests[4]["messages"]
    assert retry[2] == {"role": "assistant", "content": "Paris."}
    assert "<<<BEGIN UNTRUSTED SUGGESTION>>>\nName the river it is on." in retry[3]["content"]
    # each round's cost: a generator and a judge call of 10 + 5 tokens at 1 and 2 USD per 1M
    assert rows.loc[("a", 1), "cost_usd"] == pytest.approx(2 * (10 * 1 + 5 * 2) / 1e6)
    assert loopback.count == 6


def test_a_failed_generator_call_ends_the_loop_with_no_judgment(tmp_path: Path) -> None:
    generator = {"name": "generator-sim", "provider": "sim", "sim": {"error_rate": 0.3}}
    run = open_run(_params_file(tmp_path, generator=generator, second_judge=None))
    result = RL.run(run)
    failed = result.rounds[result.rounds["status"] == "generator_error"]
    assert len(failed) > 0 and (failed["stopped"] == "generator_error").all()
    assert failed["judge_key"].isna().all() and failed["weighted_score"].isna().all()
    assert failed["generator_error"].str.startswith("sim_error").all()
    judged = {r["key"] for r in read_jsonl(run.dir / "records" / "judgments.jsonl")}
    assert not any(k.replace("answer:", "") in j for k in failed["answer_key"] for j in judged)
    distinct = result.rounds.drop_duplicates("answer_key")
    assert study.counts(result)["generator_errors"] == int(
        (distinct["status"] == "generator_error").sum()
    )
