"""Human verification files, the CSV round trip and the form (verification, review)."""

from __future__ import annotations

import csv
import json
from datetime import datetime, timezone
from pathlib import Path

import pytest
from datagen.cases import (
    edit_csv,
    review_of,
    sample_problems,
)

from evalbench.datagen import (
    review,
    verification,
)


def test_verification_file_round_trip_and_merge(tmp_path: Path) -> None:
    path = verification.verifications_path(tmp_path / "aime_generated.json")
    assert path.name == "aime_generated_verifications.json"
    first = review_of("gen_1", (5, 4, 4, 5), "approved", "2025-01-10T12:00:00+00:00")
    verification.save_verifications(path, [first])
    raw = json.loads(path.read_text())
    assert raw["gen_1"]["scores"] == {
        "correctness": 5,
        "clarity": 4,
        "difficulty_match": 4,
        "completeness": 5,
    }
    assert raw["gen_1"]["total_score"] == pytest.approx((5 + 4 + 4 + 5) / 4)  # 4.5
    assert raw["gen_1"]["verified_at"].startswith("2025-01-10T12:00:00")
    assert (
        datetime.fromisoformat(raw["gen_1"]["verified_at"].replace("Z", "+00:00"))
        .utcoffset()
        .total_seconds()
        == 0
    )
    assert set(raw["gen_1"]) >= {"scores", "total_score", "status", "comments", "verified_at"}
    second = review_of("gen_2", (2, 3, 3, 2), "rejected", "2025-01-11T09:30:00+02:00")
    verification.save_verifications(path, {"gen_2": second})
    loaded = verification.load_verifications(path)
    assert set(loaded) == {"gen_1", "gen_2"} and loaded["gen_1"] == first
    assert loaded["gen_2"].verified_at == datetime(2025, 1, 11, 7, 30, tzinfo=timezone.utc)
    redo = review_of("gen_1", (3, 3, 3, 3), "needs_revision", "2025-01-12T00:00:00+00:00")
    stale = review_of("gen_2", (5, 5, 5, 5), "approved", "2024-12-31T00:00:00+00:00")
    merged = verification.save_verifications(path, [redo, stale])
    assert merged["gen_1"].status == "needs_revision"  # newer review wins
    assert merged["gen_2"].status == "rejected"  # an older review does not overwrite
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary files left


def test_naive_time_stamps_read_as_utc_and_bad_files_name_the_key(tmp_path: Path) -> None:
    path = tmp_path / "v.json"
    entry = {
        "scores": {"correctness": 5, "clarity": 4, "difficulty_match": 4, "completeness": 5},
        "total_score": 4.5,
        "status": "approved",
        "comments": "",
        "verified_at": "2025-01-10T12:00:00",
    }
    path.write_text(json.dumps({"gen_aime_1": entry}))  # the Hello-Agents layout
    assert verification.load_verifications(path)["gen_aime_1"].verified_at.tzinfo == timezone.utc
    path.write_text(json.dumps({"gen_aime_1": {**entry, "total_score": 3.0}}))
    with pytest.raises(ValueError, match=r"v.json: verification 'gen_aime_1': .*not the mean"):
        verification.load_verifications(path)
    path.write_text(json.dumps({"gen_aime_1": {**entry, "status": "ok"}}))
    with pytest.raises(ValueError, match=r"verification 'gen_aime_1': status"):
        verification.load_verifications(path)
    assert verification.load_verifications(tmp_path / "missing.json") == {}


def test_csv_export_edit_import_round_trip(tmp_path: Path) -> None:
    csv_path = verification.export_verification_csv(sample_problems(), tmp_path / "review.csv")
    with open(csv_path, encoding="utf-8-sig", newline="") as fh:
        exported = list(csv.DictReader(fh))
    assert exported[0]["problem"] == "Line one\nline two of problem 1"
    assert exported[2]["solution"].startswith("'=HYPERLINK")  # not run as a formula
    scores = {"correctness": "5", "clarity": "4.0", "difficulty_match": "4", "completeness": "5"}
    edit_csv(
        csv_path,
        {
            "gen_1": {**scores, "status": "approved", "comments": "fine"},
            "gen_3": {**scores, "status": "needs_revision"},
        },
    )
    when = datetime(2025, 2, 1, tzinfo=timezone.utc)
    imported = verification.import_verification_csv(csv_path, verified_at=when)
    assert set(imported) == {"gen_1", "gen_3"}  # gen_2 was left blank: not reviewed yet
    assert imported["gen_1"].scores == {
        "correctness": 5,
        "clarity": 4,
        "difficulty_match": 4,
        "completeness": 5,
    }
    assert imported["gen_1"].total_score == pytest.approx(18 / 4)
    assert imported["gen_1"].verified_at == when and imported["gen_1"].comments == "fine"
    store = tmp_path / "v.json"
    verification.save_verifications(store, imported)
    again = verification.export_verification_csv(
        sample_problems(), tmp_path / "again.csv", verification.load_verifications(store)
    )
    reimported = verification.import_verification_csv(
        again, verified_at=datetime(2025, 3, 1, tzinfo=timezone.utc)
    )
    merged = verification.save_verifications(store, reimported)
    assert merged["gen_1"].verified_at == when  # unchanged review keeps its time stamp


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ({"correctness": "6"}, r"review.csv:4: correctness must be an integer 1-5, got '6'"),
        ({"clarity": "4.5"}, r"review.csv:4: clarity must be an integer 1-5, got '4.5'"),
        ({"completeness": ""}, r"review.csv:4: completeness must be an integer 1-5, got ''"),
        (
            {"status": "ok"},
            r"review.csv:4: status must be one of approved, rejected, needs_revision",
        ),
    ],
)
def test_bad_csv_row_error_names_the_line(
    tmp_path: Path, edit: dict[str, str], message: str
) -> None:
    csv_path = verification.export_verification_csv(sample_problems(), tmp_path / "review.csv")
    good = {
        "correctness": "5",
        "clarity": "4",
        "difficulty_match": "4",
        "completeness": "5",
        "status": "approved",
    }
    # line 1 header; gen_1 spans lines 2-3 (its problem has a newline); gen_2 starts on line 4
    edit_csv(csv_path, {"gen_1": good, "gen_2": {**good, **edit}})
    with pytest.raises(ValueError, match=message):
        verification.import_verification_csv(csv_path)


def test_csv_with_missing_columns_or_repeated_problem_fails(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text("problem_id,correctness\ngen_1,5\n")
    with pytest.raises(ValueError, match=r"r.csv:1: missing column"):
        verification.import_verification_csv(path)
    row = "gen_1,5,4,4,5,approved,\n"
    path.write_text(
        "problem_id,correctness,clarity,difficulty_match,completeness,status,comments\n" + row + row
    )
    with pytest.raises(ValueError, match=r"r.csv:3: problem 'gen_1' already reviewed on line 2"):
        verification.import_verification_csv(path)


def test_verification_form_saves_through_the_same_file(tmp_path: Path) -> None:
    pytest.importorskip("ipywidgets")
    path = tmp_path / "v.json"
    form = review.verification_form(sample_problems(), path)
    view, controls, buttons, _message = form.children
    assert "Problem &lt;b&gt;2&lt;/b&gt;" not in view.value  # first problem shown
    prev, save, nxt = buttons.children
    nxt.click()
    assert "Problem &lt;b&gt;2&lt;/b&gt;" in view.value and "<b>2</b>" not in view.value  # escaped
    *sliders, status, comments = controls.children
    for slider, value in zip(sliders, (5, 4, 3, 2), strict=True):
        slider.value = value
    status.value, comments.value = "needs_revision", "check the answer"
    save.click()
    saved = verification.load_verifications(path)["gen_2"]
    assert saved.scores == {
        "correctness": 5,
        "clarity": 4,
        "difficulty_match": 3,
        "completeness": 2,
    }
    assert (saved.status, saved.comments, saved.total_score) == (
        "needs_revision",
        "check the answer",
        3.5,
    )
    prev.click()
    nxt.click()  # back on gen_2: the form shows the saved review
    assert [s.value for s in sliders] == [5, 4, 3, 2] and status.value == "needs_revision"


def test_the_review_template_opens_in_a_spreadsheet_and_is_written_whole(tmp_path, monkeypatch):
    # Before: no BOM, so Excel read the UTF-8 template as its own code page ("Ã—" for "×")
    # and saved that back, which import then refused as not UTF-8; and a full disk left a
    # half-written template over the last one
    path = verification.export_verification_csv(sample_problems(), tmp_path / "review.csv")
    raw = path.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbfproblem_id,")
    assert verification.import_verification_csv(path) == {}  # read back, BOM and all

    import evalbench.records

    real_replace = evalbench.records.os.replace

    def full(src, dst):  # the disk fills as the new template is put in place
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(evalbench.records.os, "replace", full)
    with pytest.raises(OSError, match="No space left"):
        verification.export_verification_csv(sample_problems()[:1], path)
    monkeypatch.setattr(evalbench.records.os, "replace", real_replace)
    assert path.read_bytes() == raw  # the last template, whole
    assert [p.name for p in tmp_path.iterdir()] == ["review.csv"]  # no temp file left
