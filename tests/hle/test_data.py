"""HLE data: the loader on small HLE-format files the tests write (JSONL, JSON, parquet, a
folder), one-line errors naming file:line and field, the image switch, the hub path without a
token / offline, the demo suite and the official predictions files."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest
from hle.cases import IMAGE, row, write_jsonl

from evalbench.hle import data
from evalbench.settings import MissingSecret
from evalbench.sources import DataUnavailable

# ----------------------------------------------------------------------------- questions


def test_the_loader_reads_a_small_hle_format_file(tmp_path):
    rows = [row("a"), row("b", category="Physics", image=IMAGE), row("c", answer="B",
            answer_type="multipleChoice")]  # fmt: skip
    items = data.load(write_jsonl(tmp_path / "data.jsonl", rows))
    assert [it.id for it in items] == ["a", "b", "c"]
    assert items[1].has_image and items[1].image == IMAGE and not items[0].has_image
    assert items[2].answer_type == "multipleChoice" and items[0].category == "Math"
    assert data.items_frame(items)["has_image"].tolist() == [False, True, False]


def test_json_parquet_and_folders_read_the_same(tmp_path):
    rows = [row("a"), row("b", image=None)]  # the hub's image is "" or absent; None reads as ""
    (tmp_path / "q.json").write_text(json.dumps(rows))
    pd.DataFrame(rows).to_parquet(tmp_path / "q.parquet")
    folder = tmp_path / "snapshot" / "data"
    folder.mkdir(parents=True)
    pd.DataFrame(rows).to_parquet(folder / "test-00000-of-00001.parquet")
    for source in (tmp_path / "q.json", tmp_path / "q.parquet", tmp_path / "snapshot"):
        items = data.load(source)
        assert [(it.id, it.image) for it in items] == [("a", ""), ("b", "")], source


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (
            {"answer_type": "exact_match"},
            "field 'answer_type' must be exactMatch or multipleChoice",
        ),
        ({"answer": ""}, "field 'answer' is empty"),
        ({"category": 3}, "field 'category' must be a string"),
        ({"id": None}, "missing field 'id'"),
    ],
)
def test_a_bad_row_is_one_line_naming_file_line_and_field(tmp_path, bad, message):
    path = write_jsonl(tmp_path / "data.jsonl", [row("a"), {**row("b"), **bad}])
    with pytest.raises(data.HleDataError, match=re.escape(f"{path}:2: {message}")):
        data.load(path)


def test_broken_json_duplicates_and_unknown_categories(tmp_path):
    path = tmp_path / "data.jsonl"
    path.write_text(json.dumps(row("a")) + "\n{not json\n")
    with pytest.raises(data.HleDataError, match=re.escape(f"{path}:2: not valid JSON")):
        data.load(path)
    write_jsonl(path, [row("a"), row("a")])
    with pytest.raises(data.HleDataError, match="duplicate question id"):
        data.load(path)
    write_jsonl(path, [row("a"), row("b", category="Physics")])
    assert [it.id for it in data.load(path, categories=["Physics"])] == ["b"]
    with pytest.raises(data.HleDataError, match="unknown categories"):
        data.load(path, categories=["Chemistry"])
    with pytest.raises(data.HleDataError, match="does not exist"):
        data.load(tmp_path / "nowhere")


def test_a_folder_file_that_leads_outside_the_folder_is_refused(tmp_path):
    """Before: a ``.jsonl`` symbolic link in the dataset folder to a file elsewhere was read
    (its questions asked and published); GAIA's attachments already refused that."""
    folder, outside = tmp_path / "hle", tmp_path / "outside"
    folder.mkdir()
    outside.mkdir()
    write_jsonl(folder / "q.jsonl", [row("a")])
    write_jsonl(outside / "secret.jsonl", [row("secret")])
    (folder / "link.jsonl").symlink_to(outside / "secret.jsonl")
    with pytest.raises(data.HleDataError, match=re.escape(
            f"{folder / 'link.jsonl'}: leads outside the HLE folder {folder} (to "
            f"{outside / 'secret.jsonl'}); refused")):  # fmt: skip
        data.load(folder)
    (folder / "link.jsonl").unlink()
    (folder / "sub").symlink_to(outside, target_is_directory=True)  # a linked folder:
    assert [it.id for it in data.load(folder)] == ["a"]  # not walked into


def test_a_repeated_id_names_both_lines_and_an_empty_file_says_so(tmp_path):
    """Before: "duplicate question id(s) ['a'] (1 in all)", with no file or line; an empty
    file ran to "no question left (after the category filter and exclude_images)"."""
    path = write_jsonl(tmp_path / "q.jsonl", [row("a"), row("b"), row("a")])
    with pytest.raises(data.HleDataError, match=re.escape(
            f"{path}:3: duplicate question id 'a' (first at {path}:1)")):  # fmt: skip
        data.load(path)
    (tmp_path / "empty.jsonl").write_text("")
    with pytest.raises(data.HleDataError, match=re.escape(f"{tmp_path / 'empty.jsonl'}: no "
                                                          "questions")):  # fmt: skip
        data.load(tmp_path / "empty.jsonl")


def test_exclude_images_counts_what_it_leaves_out(tmp_path):
    items = data.load(write_jsonl(tmp_path / "h.jsonl", [row("a"), row("b", image=IMAGE)]))
    assert data.split_images(items, exclude=False) == (items, 0)
    kept, excluded = data.split_images(items, exclude=True)
    assert [it.id for it in kept] == ["a"] and excluded == 1


def test_the_hub_needs_a_token_and_is_skipped_offline(monkeypatch):
    monkeypatch.delenv("HF_TOKEN", raising=False)
    with pytest.raises(MissingSecret, match="HF_TOKEN"):
        data.load("hf")
    monkeypatch.setenv("HF_TOKEN", "hf_not_a_real_token")
    monkeypatch.setenv("EVALBENCH_OFFLINE", "1")
    with pytest.raises(DataUnavailable, match="EVALBENCH_OFFLINE"):
        data.load("hf")


def test_a_hub_failure_is_data_unavailable_with_the_pinned_revision(monkeypatch):
    import datasets

    seen = {}

    def refuse(repo, **kwargs):
        seen.update(kwargs, repo=repo)
        raise ConnectionError("gated: ask for access")

    monkeypatch.setenv("HF_TOKEN", "hf_not_a_real_token")
    monkeypatch.delenv("EVALBENCH_OFFLINE", raising=False)
    monkeypatch.setattr(datasets, "load_dataset", refuse)
    with pytest.raises(DataUnavailable, match="ConnectionError: gated"):
        data.load("hf")
    assert seen == {"repo": "cais/hle", "split": "test", "revision": data.HF_REVISION,
                    "token": "hf_not_a_real_token"}  # fmt: skip


def test_the_demo_suite_is_labelled_and_well_formed():
    items = data.load("demo")
    assert len(items) >= 40 and len({it.id for it in items}) == len(items)
    assert len({it.category for it in items}) >= 5
    assert all(it.id.startswith("demo-") and not it.has_image for it in items)
    raw = [json.loads(line) for line in (data.demo_path() / "questions.jsonl").open()]
    assert all("DEMO — not HLE" in r["canary"] for r in raw)
    choices = [it for it in items if it.answer_type == "multipleChoice"]
    assert choices and all(
        re.search(rf"^{it.answer}\. ", it.question, re.M) for it in choices
    )  # every multiple-choice answer is one of the listed letters
    counts = data.category_counts(items).set_index("category")
    assert counts.loc["total", "total"] == len(items)
    assert counts.loc["total", "multipleChoice"] == len(choices)


def test_some_demo_answers_recomputed():
    by_id = {it.id: it for it in data.load("demo")}
    for it in by_id.values():
        question = it.question
        if m := re.match(
            r"What is the remainder when (\d+)\^(\d+) is divided by (\d+)\?", question
        ):
            assert it.answer == str(pow(*map(int, m.groups()))), it.id
        if m := re.match(r"What is gcd\((\d+), (\d+)\)\?", question):
            import math

            assert it.answer == str(math.gcd(*map(int, m.groups()))), it.id
        if m := re.match(r"What is the decimal value of the binary number ([01]+)\?", question):
            assert it.answer == str(int(m.group(1), 2)), it.id
        if m := re.match(r"How many edges does the complete graph on (\d+) vertices", question):
            n = int(m.group(1))
            assert it.answer == str(n * (n - 1) // 2), it.id


# ----------------------------------------------------------------------------- predictions


def test_official_predictions_files_round_trip(tmp_path):
    entries = {"a": {"model": "m", "response": "Answer: 4", "usage": {"prompt_tokens": 3}},
               "b": {"model": "m", "response": "Answer: 5", "usage": {},
                     "judge_response": {"correct": "yes"}}}  # fmt: skip
    path = data.write_predictions(tmp_path / "hle_m.json", entries)
    assert json.loads(path.read_text()) == entries and path.read_text().startswith("{\n    ")
    read = data.read_predictions(path)
    assert read["a"].response == "Answer: 4" and read["a"].usage == {"prompt_tokens": 3}
    assert set(read) == {"a", "b"}
    path.write_text(json.dumps({"a": {"model": "m"}}))
    with pytest.raises(data.HleDataError, match="entry 'a': field 'response' must be a string"):
        data.read_predictions(path)
    path.write_text("[]")
    with pytest.raises(data.HleDataError, match="expected a JSON object keyed by question id"):
        data.read_predictions(path)


def test_the_demo_predictions_file_leaves_some_questions_out():
    predictions = data.read_predictions(data.demo_path() / "predictions_demo.json")
    ids = {it.id for it in data.load("demo")}
    assert set(predictions) < ids and len(ids - set(predictions)) == 20
