"""A JupyterLab form to review generated problems one at a time (needs ``ipywidgets``).

Given a ``<data>_verifications.json`` path, every *save* goes through
:func:`evalbench.datagen.verification.save_verifications` (merged into the file, written
atomically), so the form and the CSV round trip can be used on the same file. Given a labels
folder (or ``<reviewer>.jsonl``) and a reviewer name, every *save* appends one label record
to ``<folder>/<reviewer>.jsonl`` — the very file the browser app (``evalbench label serve``)
writes for that reviewer — so a researcher alone in JupyterLab and annotators in the browser
add to the same reviews.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from evalbench.labels import LabelRecord, LabelStore, current_labels, make_item
from evalbench.labels.storage import now_utc

from .reviewers import is_label_source
from .scoring import DIMENSIONS, VERIFICATION_STATUSES
from .verification import Verification, load_verifications, make_verification, save_verifications


def verification_form(
    problems: pd.DataFrame,
    path: Path | str,
    reviewer: str | None = None,
    *,
    task: str | None = None,
) -> Any:
    """A JupyterLab form to review problems one at a time (needs ``ipywidgets``).

    Shows the problem, answer and solution (HTML-escaped, LaTeX rendered), four 1–5 sliders,
    a status dropdown and a comment box; *Save* writes the review, prefilling from reviews
    already saved.

    Args:
        problems: columns ``id, problem, answer, solution`` (``topic`` optional).
        path: the verifications JSON (see :func:`verifications_path`; one reviewer), or a
            labels folder / ``<reviewer>.jsonl`` shared with the browser app.
        reviewer: who reviews (required for a labels folder; a ``.jsonl`` names it).
        task: the label task's name stored on each label (default: the folder's name
            without ``_labels``, as ``evalbench label init`` names the folder).

    Returns:
        An ``ipywidgets.VBox``; display it in a notebook cell.
    """
    import ipywidgets as w  # lazy: only the optional 'lab' extra installs it

    rows = problems.to_dict("records")
    if not rows:
        raise ValueError("verification_form: no problems to review")
    target = _target(Path(path), reviewer, task)
    ui = _FormWidgets(w)
    position = {"i": 0}

    def show(i: int) -> None:
        position["i"] = i % len(rows)
        row = rows[position["i"]]
        ui.view.value = _problem_html(row, position["i"], len(rows))
        ui.fill(target.load(str(row["id"])))

    def save(_: Any) -> None:
        row = rows[position["i"]]
        pid = str(row["id"])
        try:
            review = make_verification(pid, ui.scores(), ui.status.value, ui.comments.value)
            target.save(review, row, position["i"])
        except (ValueError, OSError) as exc:  # shown in the form, where the reviewer looks
            ui.message.value = f"<b>not saved</b>: {html.escape(str(exc))}"
            return
        ui.message.value = f"saved {html.escape(pid)} ({review.status})"

    ui.prev.on_click(lambda _: show(position["i"] - 1))
    ui.next.on_click(lambda _: show(position["i"] + 1))
    ui.save.on_click(save)
    show(0)
    return ui.box


class _JsonTarget:
    """Reviews in a ``<data>_verifications.json`` (one reviewer; merged, atomic)."""

    def __init__(self, path: Path):
        self.path = path

    def load(self, pid: str) -> Verification | None:
        return load_verifications(self.path).get(pid)

    def save(self, review: Verification, row: Mapping[str, Any], position: int) -> None:
        save_verifications(self.path, [review])


class _LabelTarget:
    """Reviews appended as label records to ``<folder>/<reviewer>.jsonl`` (the app's file)."""

    def __init__(self, folder: Path, reviewer: str, task: str):
        self.store, self.reviewer, self.task = LabelStore(folder), reviewer, task

    def load(self, pid: str) -> Verification | None:
        mine = [r for r in current_labels(self.store.read(self.reviewer))
                if (r.task, r.item) == (self.task, pid)]  # fmt: skip
        if not mine or mine[0].scores is None or mine[0].status is None:
            return None
        r, scores = mine[0], mine[0].scores
        ints = {d: int(scores[d]) for d in DIMENSIONS}
        return make_verification(pid, ints, str(r.status), r.comment, verified_at=r.time)

    def save(self, review: Verification, row: Mapping[str, Any], position: int) -> None:
        item = make_item("verification", row)
        self.store.append(LabelRecord(
            task=self.task, kind="verification", item=item.id, item_digest=item.digest,
            annotator=self.reviewer, time=now_utc(), position=position,
            scores={d: float(v) for d, v in review.scores.items()}, status=review.status,
            comment=review.comments,
        ))  # fmt: skip


def _target(path: Path, reviewer: str | None, task: str | None) -> _JsonTarget | _LabelTarget:
    if not is_label_source(path):
        return _JsonTarget(path)
    folder = path if path.suffix.lower() != ".jsonl" else path.parent
    name = reviewer or (path.stem if path.suffix.lower() == ".jsonl" else None)
    if name is None:
        raise ValueError("verification_form: a labels folder needs reviewer='<your name>'")
    if path.suffix.lower() == ".jsonl" and path.stem != name:
        raise ValueError(f"verification_form: {path.name} is {path.stem!r}'s file, not {name!r}'s")
    return _LabelTarget(folder, name, task or folder.name.removesuffix("_labels"))


class _FormWidgets:
    """The widgets of :func:`verification_form` (kept apart so that function stays short)."""

    def __init__(self, w: Any):
        self.view = w.HTMLMath()  # renders the LaTeX of problems and solutions
        self.sliders = {
            d: w.IntSlider(value=3, min=1, max=5, description=d.replace("_", " "))
            for d in DIMENSIONS
        }
        self.status = w.Dropdown(options=list(VERIFICATION_STATUSES), description="status")
        self.comments = w.Textarea(description="comments", layout=w.Layout(width="90%"))
        self.prev = w.Button(description="◀ previous")
        self.next = w.Button(description="next ▶")
        self.save = w.Button(description="save", button_style="primary")
        self.message = w.HTML()
        controls = w.VBox([*self.sliders.values(), self.status, self.comments])
        buttons = w.HBox([self.prev, self.save, self.next])
        self.box = w.VBox([self.view, controls, buttons, self.message])

    def scores(self) -> dict[str, int]:
        """The slider values by dimension."""
        return {d: int(s.value) for d, s in self.sliders.items()}

    def fill(self, review: Verification | None) -> None:
        """Show ``review`` (or the defaults when there is none)."""
        for dim, slider in self.sliders.items():
            slider.value = review.scores[dim] if review else 3
        self.status.value = review.status if review else VERIFICATION_STATUSES[0]
        self.comments.value = review.comments if review else ""
        self.message.value = "already reviewed" if review else ""


def _problem_html(row: Mapping[str, Any], i: int, n: int) -> str:
    esc = {
        k: html.escape(str(row.get(k, "")))
        for k in ("id", "topic", "problem", "answer", "solution")
    }
    return (
        f"<h4>Problem {i + 1} / {n}: {esc['id']} ({esc['topic']})</h4>"
        f"<p style='white-space: pre-wrap'>{esc['problem']}</p>"
        f"<p><b>Answer:</b> {esc['answer']}</p>"
        f"<details><summary>Solution</summary><p style='white-space: pre-wrap'>"
        f"{esc['solution']}</p></details>"
    )
