"""Small BrowseComp inputs the tests write in the official formats (encrypted with the
official scheme), and study params."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import yaml

from evalbench.browsecomp.data import encrypt

CANARY = "BrowseComp-test-canary"


def write_csv(path: Path, rows: list[tuple[str, str, str]], canary: str = CANARY) -> Path:
    """A BrowseComp-format CSV: (problem, answer, topic) rows, problem and answer encrypted."""
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["problem", "answer", "problem_topic", "canary"])
        for problem, answer, topic in rows:
            writer.writerow([encrypt(problem, canary), encrypt(answer, canary), topic, canary])
    return path


def write_xlsx(path: Path, rows: list[tuple[str, str, str]], canary: str = "BrowseComp-ZH") -> Path:
    """A BrowseComp-ZH-format workbook: (topic, question, answer) rows, all three encrypted."""
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["Topic", "Question", "Answer", "canary"])
    for topic, question, answer in rows:
        sheet.append(
            [encrypt(topic, canary), encrypt(question, canary), encrypt(answer, canary), canary]
        )
    book.save(path)
    return path


def write_params(tmp_path: Path, name: str = "bc_test", **data: Any) -> Path:
    """A ``browsecomp`` params file (50 bootstrap rounds)."""
    body = {"study": "browsecomp", "title": "browsecomp test", "bootstrap_rounds": 50, **data}
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(body, allow_unicode=True), encoding="utf-8")
    return path
