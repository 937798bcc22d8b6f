"""Format sensitivity: the 26 official prompt formats, their decoders, the spread across
formats, and a study asking simulated systems; prompts and verdicts against the official
bfcl-eval's (tests/bfcl/format_sensitivity_oracle.json, made by make_format_oracle.py)."""

from __future__ import annotations

import hashlib
import json
import math
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalbench.bfcl import metrics, report
from evalbench.bfcl.checker import check
from evalbench.bfcl.data import load_format_items
from evalbench.bfcl.format_sensitivity import (
    CONFIGS,
    DEFAULT_CONFIG,
    cases,
    decode_output,
    label,
    messages,
    render,
)
from evalbench.bfcl.records import FormatVerdictRecord
from evalbench.bfcl.schema import Call
from evalbench.bfcl.scoring import correct_calls
from evalbench.records import read_jsonl

ORACLE = Path(__file__).with_name("format_sensitivity_oracle.json")


@pytest.fixture(scope="module")
def official() -> dict:
    return json.loads(ORACLE.read_text())


@pytest.fixture(scope="module")
def all_cases():
    if not os.environ.get("EVALBENCH_DATA_MIRROR"):
        pytest.skip("needs the public-data mirror: set EVALBENCH_DATA_MIRROR (.ci/run does)")
    return cases(load_format_items())


def _digest(rows: list) -> str:
    return hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()


@pytest.mark.slow
def test_the_cases_and_their_prompts_are_the_official_ones(all_cases, official):
    assert len(all_cases) == 200 * 26 and len(CONFIGS) == 4 * 2 * 3 + 2
    assert list(official["prompts"]) == list(CONFIGS)  # the official order
    assert _digest([case.id for case in all_cases]) == official["ids"]
    example = next(c for c in all_cases if c.config == CONFIGS[1])
    assert messages(example)[0]["content"] == official["prompt_example"]
    for config in CONFIGS:
        ours = [messages(case) for case in all_cases if case.config == config]
        assert _digest(ours) == official["prompts"][config], config


def test_every_answer_gets_the_official_verdict(all_cases, official):
    by_id = {case.id: case for case in all_cases}
    wrong = []
    for row in official["answers"]:
        case = by_id[row["id"]]
        verdict = check(case.item, decode_output(row["raw"], case.config))
        got = (verdict.valid, None if verdict.valid else verdict.error_type)
        if got != (row["valid"], row["error_type"]):
            wrong.append((case.config, row["raw"][:80], got, row["error_type"]))
    assert len(official["answers"]) > 1400 and wrong == []


@pytest.mark.parametrize(
    ("raw", "config", "calls"),
    [
        ('```json\n[{"function": "f", "parameters": {"a": 1}}]\n```', 1, [("f", {"a": 1})]),
        ("[not json]", 1, []),  # official: an unparsable JSON list is no call
        ('<TOOLCALL>[{"function": "f", "parameters": {}}]</TOOLCALL>', 2, [("f", {})]),
        ('<functions><function name="f"><params><param name="a" value="[1, 2]" '
         'type="array"/><param name="b" value="x" type="boolean"/></params></function>'
         "</functions>", 3, [("f", {"a": [1, 2], "b": False})]),
        ('<functions><function name="g"><param name="a" type="integer"> 7 </param>'
         "</function></functions>", 4, [("g", {"a": 7})]),
        ("<TOOLCALL>f(a=1)</TOOLCALL>", 0, [("f", {"a": 1})]),  # one call, no brackets
    ],
)  # fmt: skip
def test_decoding_each_return_format(raw, config, calls):
    configs = {  # json without tags, json with tags, verbose / concise XML, python with tags
        0: "ret_fmt=python&tool_call_tag=True&func_doc_fmt=json&prompt_fmt=plaintext&style=classic",
        1: "ret_fmt=json&tool_call_tag=False&func_doc_fmt=json&prompt_fmt=plaintext&style=classic",
        2: "ret_fmt=json&tool_call_tag=True&func_doc_fmt=json&prompt_fmt=plaintext&style=classic",
        3: "ret_fmt=verbose_xml&tool_call_tag=False&func_doc_fmt=xml&prompt_fmt=plaintext&"
        "style=classic",
        4: "ret_fmt=concise_xml&tool_call_tag=False&func_doc_fmt=xml&prompt_fmt=plaintext&"
        "style=classic",
    }
    decoded = decode_output(raw, configs[config])
    assert decoded.calls is not None and [tuple(c) for c in decoded.calls] == calls


def test_a_missing_tag_or_tree_is_a_decode_failure():
    tagged = (
        "ret_fmt=python&tool_call_tag=True&func_doc_fmt=json&prompt_fmt=plaintext&style=classic"
    )
    assert decode_output("[f(a=1)]", tagged).error_type == "ast_decoder:decoder_failed"
    xml = CONFIGS[13]  # verbose_xml, tags, docs xml
    assert decode_output("<TOOLCALL>f(a=1)</TOOLCALL>", xml).error_type == (
        "ast_decoder:decoder_failed"
    )
    assert label(xml) == "verbose_xml · tags · docs xml" and label(CONFIGS[-1]) == (
        "experimental wording"
    )


@pytest.mark.slow
def test_correct_answers_pass_in_every_format(all_cases):
    sample = all_cases[:: 26 * 10 + 1]  # 20 items, every format in turn
    answers = [render(correct_calls(case.item), case.config) for case in sample]
    failed = [
        (case.config, case.item.id)
        for case, raw in zip(sample, answers, strict=True)
        if not check(case.item, decode_output(raw, case.config)).valid
    ]
    assert failed == []
    # the default format's prompt with a single Python hint is prompt mode's own
    assert DEFAULT_CONFIG in CONFIGS and render([Call("f", {"a": 1})], DEFAULT_CONFIG) == "[f(a=1)]"


# --------------------------------------------------------------------------- the spread


def _formats(rows: list[tuple[str, str, str, bool]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["system", "item_id", "config", "valid"])


def test_accuracy_per_format_and_the_spread_by_hand():
    a, b, c = CONFIGS[0], CONFIGS[5], CONFIGS[25]
    rows = [("s", "i1", a, True), ("s", "i2", a, True),  # format a: 2 of 2
            ("s", "i1", b, True), ("s", "i2", b, False),  # b: 1 of 2
            ("s", "i1", c, False), ("s", "i2", c, False)]  # c: 0 of 2  # fmt: skip
    table = metrics.format_accuracy(_formats(rows))
    assert table["config"].tolist() == [a, b, c]  # official order
    assert table["accuracy"].tolist() == [1.0, 0.5, 0.0]
    spread = metrics.format_spread(_formats(rows), seed=3, rounds=200).iloc[0]
    assert spread["max_delta"] == 1.0 - 0.0
    # sample standard deviation of (1, 0.5, 0): sqrt(((0.5)^2 + 0 + (0.5)^2) / 2) = 0.5
    assert math.isclose(spread["std"], 0.5)
    assert (spread["worst"], spread["best"]) == (label(c), label(a))
    assert 0 <= spread["null_low"] <= spread["null_max_delta"] <= spread["null_high"] <= 1
    again = metrics.format_spread(_formats(rows), seed=3, rounds=200).iloc[0]
    assert again.equals(spread)  # seeded


@pytest.mark.slow
def test_a_format_blind_system_is_judged_by_shuffling_not_by_a_bootstrap_interval():
    """26 formats of coin-flip systems on 16 items: the true spread is 0, the observed one is
    item noise. A percentile bootstrap interval of max - min over items always misses 0 and
    a bias-corrected (basic) one mostly does (why format_spread gives none); the permutation p-value is valid: below
    0.05 for about 5% of such systems (here at most 4 of 40), and the observed largest
    difference sits inside the shuffled range."""
    rejected, outside, basic_misses = 0, 0, 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        answers = rng.random((16, 26)) < 0.5
        acc = answers.mean(axis=0)
        boot = answers[rng.integers(0, 16, (300, 16))].mean(axis=1)
        resampled = boot.max(axis=1) - boot.min(axis=1)
        q_low, q_high = np.quantile(resampled, [0.025, 0.975])
        estimate = acc.max() - acc.min()
        assert q_low > 0  # the percentile interval always excludes the truth
        basic_misses += 2 * estimate - q_high > 0  # the bias-corrected one mostly does
        rows = [("s", f"i{i}", config, bool(answers[i, j]))
                for j, config in enumerate(CONFIGS) for i in range(16)]  # fmt: skip
        spread = metrics.format_spread(_formats(rows), seed=seed, rounds=200).iloc[0]
        assert spread["max_delta"] == estimate
        rejected += spread["p_value"] < 0.05
        outside += not spread["null_low"] <= spread["max_delta"] <= spread["null_high"]
    assert rejected <= 4 and outside <= 4 and basic_misses >= 20, (basic_misses, rejected)


def test_no_spread_when_every_format_scores_the_same():
    rows = [("s", f"i{i}", config, i % 2 == 0) for config in CONFIGS for i in range(4)]
    spread = metrics.format_spread(_formats(rows), rounds=100).iloc[0]
    # each resample picks the same items in every format: every format scores alike
    assert spread["max_delta"] == 0 and spread["std"] == 0
    # shuffling an item's identical answers across formats changes nothing: p = 1
    assert spread["null_max_delta"] == spread["null_high"] == spread["null_std"] == 0
    assert spread["p_value"] == 1


def test_a_format_that_alone_works_is_beyond_what_shuffling_gives():
    first = CONFIGS[0]
    rows = [("s", f"i{i}", config, config == first) for config in CONFIGS for i in range(20)]
    spread = metrics.format_spread(_formats(rows), rounds=199).iloc[0]
    assert spread["max_delta"] == 1.0 and spread["best"] == label(first)
    # shuffled, each item's one right answer lands in a random format: far below 1
    assert spread["null_max_delta"] < 0.5 and spread["p_value"] == 1 / (199 + 1)


# --------------------------------------------------------------------------- a study


@pytest.mark.slow
def test_a_study_asks_prompting_systems_every_format(tmp_path):
    if not os.environ.get("EVALBENCH_DATA_MIRROR"):
        pytest.skip("needs the public-data mirror: set EVALBENCH_DATA_MIRROR (.ci/run does)")
    from evalbench import bfcl
    from evalbench.studies import open_run

    path = tmp_path / "study.yaml"
    systems = [{"name": "p", "provider": "sim", "sim": {"accuracy": 0.7}},
               {"name": "t", "provider": "sim"}]  # fmt: skip
    path.write_text(json.dumps({
        "study": "bfcl", "title": "t", "categories": ["simple_python", "format_sensitivity"],
        "limit_per_category": 1, "systems": systems, "system_modes": {"t": "tools"},
    }))  # fmt: skip
    run = open_run(path)
    result = bfcl.run(run)
    formats = result.formats
    assert formats is not None and set(formats["system"]) == {"p"}  # tools mode is not asked
    assert len(formats) == 8 * 26  # one item of each of the selection's 8 categories
    assert set(result.verdicts["test_category"]) == {"simple_python"}  # kept apart
    for row in read_jsonl(run.dir / "records" / "format_sensitivity.jsonl"):
        FormatVerdictRecord.model_validate(row)
    written = run.dir / "bfcl_results" / "p" / "format_sensitivity"
    assert [f.name for f in written.glob("*.json")] == ["BFCL_v4_format_sensitivity_result.json"]
    assert "no format preference" in report.format_sentence(result)
    assert len(report.format_table(result)) == 26
    assert report.coverage_v4_table(result).set_index("test_category").loc[
        "format_sensitivity", "studied"] == 8 * 26  # fmt: skip
    again = bfcl.run(open_run(path))  # resumed: the same answers from the store
    assert again.formats is not None
    assert again.formats["valid"].tolist() == formats["valid"].tolist()


def _params(**extra):
    from evalbench.bfcl.records import BfclParams

    return BfclParams.model_validate({
        "title": "t", "categories": ["format_sensitivity"],
        "systems": [{"name": "p", "provider": "sim"}], **extra,
    })  # fmt: skip


def test_a_subset_keeps_the_official_case_ids_and_order(all_cases):
    from evalbench.bfcl.study import load_format_cases

    chosen = load_format_cases(_params(limit_per_category=1))
    official = [case.id for case in all_cases]
    assert len(chosen) == 8 * 26
    # official ids count every (item, format) of the 200 items: a subset keeps them, so
    # `bfcl evaluate --partial-eval` matches its result file to the official prompts
    assert set(case.id for case in chosen) <= set(official)
    assert [c.id for c in chosen] == [i for i in official if i in {c.id for c in chosen}]


def test_format_items_have_their_own_limit(all_cases):
    from evalbench.bfcl.study import load_format_cases

    chosen = load_format_cases(_params(limit_per_category=5, format_limit_per_category=2))
    assert len(chosen) == 8 * 2 * 26
    assert len({case.item.id for case in chosen}) == 16


def test_a_format_limit_without_the_category_is_refused():
    with pytest.raises(ValueError, match="format_limit_per_category: 'format_sensitivity' is not"):
        _params(categories=["simple_python"], format_limit_per_category=2)


def test_prompt_mode_sends_the_official_default_prompt(all_cases, official):
    """evalbench's prompt mode (scoring.prompt_messages) = the official chat prompt-mode
    messages (system_prompt_pre_processing_chat_model, bfcl-eval 2026.3.23) of the first 5
    items of each of the 8 categories. It failed on the older text of gorilla bc64944."""
    from evalbench.bfcl.data import load
    from evalbench.bfcl.scoring import prompt_messages

    categories = dict.fromkeys(case.item.category for case in all_cases)
    items = [item for cat in categories for item in load(cat)[:5]]
    ours = [prompt_messages(item) for item in items]
    assert len(ours) == 8 * 5 and _digest(ours) == official["prompt_mode"]


def test_the_sentence_says_why_no_format_was_asked(tmp_path):
    from bfcl.cases import hand_made_result

    result = hand_made_result(tmp_path)
    assert "not studied: add <code>format_sensitivity</code>" in report.format_sentence(result)
    studied = result.params.model_copy(update={"categories": ["format_sensitivity"]})
    assert "no live system is asked in prompt mode" in report.format_sentence(
        result._replace(params=studied)
    )
