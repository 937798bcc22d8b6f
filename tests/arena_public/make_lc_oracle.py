"""Make tests/arena_public/lc_oracle.json: AlpacaEval's own ``get_length_controlled_winrate`` on
the mirror's AlpacaEval annotations, for tests/arena_public/test_lc_oracle.py.

Two steps, two interpreters (alpaca_eval's dependencies are heavy: a throwaway virtualenv):

    EVALBENCH_DATA_MIRROR=... .venv/bin/python tests/arena_public/make_lc_oracle.py inputs
    python3 -m venv /tmp/ae-venv
    /tmp/ae-venv/bin/pip install alpaca_eval==0.6.6 'setuptools<81'
    EVALBENCH_DATA_MIRROR=... /tmp/ae-venv/bin/python tests/arena_public/make_lc_oracle.py official

``inputs`` records the instruction difficulty evalbench fits on the four models' annotations
(AlpacaEval's own vector is on the Hugging Face hub, not in the mirror) and each annotation
file's place in the mirror (from ``evalbench/sources.tsv``). ``official`` runs alpaca_eval
0.6.6's function on each file with that vector: its ``hf_hub_download`` is pointed at a
``df_gamed.csv`` written here whose row ``i`` carries instruction ``i``'s difficulty (every
file lists the 805 instructions in one order; the official lookup is by row) and no gamed rows
(``length_controlled_noreg`` does not train on them). Each GLM as shipped (liblinear
``tol=1e-4``) and solved tight (``tol=1e-12``). The file records inputs and outputs only.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ORACLE = Path(__file__).with_name("lc_oracle.json")
ROOT = Path(__file__).resolve().parents[2]
BASELINE = "gpt4_1106_preview"
MODELS = ["FuseChat-Gemma-2-9B-Instruct", "alpaca-7b", "gpt-3.5-turbo-1106", "vicuna-13b"]


def inputs() -> dict[str, Any]:
    """evalbench's fitted difficulty and the files (run with evalbench's environment)."""
    from evalbench.arena_public.metrics import alpaca_lc_scores
    from evalbench.published.alpaca_eval import load_alpaca_eval_annotations
    from evalbench.ratings_lc import fitted_difficulty

    frames = {m: load_alpaca_eval_annotations(m) for m in [*MODELS, BASELINE]}
    difficulty = fitted_difficulty(alpaca_lc_scores(frames, BASELINE))
    order = list(frames[MODELS[0]]["instruction"])
    return {"models": MODELS, "baseline": BASELINE, "files": mirror_files(),
            "difficulty": [float(difficulty[i]) for i in order]}  # fmt: skip


def mirror_files() -> dict[str, dict[str, str]]:
    """Each model's annotation file: its mirror path (the URL without ``https://``) and sha256."""
    out = {}
    with open(ROOT / "evalbench" / "sources.tsv", encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            model = row["name"].removeprefix("alpaca_eval/annotations/")
            if model in [*MODELS, BASELINE] and row["name"] != model:
                out[model] = {"path": row["url"].removeprefix("https://"), "sha256": row["sha256"]}
    return out


def official(data: dict[str, Any]) -> dict[str, Any]:
    """alpaca_eval's LC win rates (run in the throwaway virtualenv)."""
    import pandas as pd
    from alpaca_eval.metrics import glm_winrate

    mirror = Path(os.environ["EVALBENCH_DATA_MIRROR"])
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        gamed = Path(tmp) / "df_gamed.csv"
        n = len(data["difficulty"])
        pd.DataFrame({"index": range(n), "instruction_difficulty": data["difficulty"],
                      "preference": 0.5, "std_delta_len": 0.0, "not_gamed_baseline": False,
                      "model": "none"}).to_csv(gamed, index=False)  # fmt: skip
        glm_winrate.hf_hub_download = lambda **_: str(gamed)
        for model in [*data["models"], data["baseline"]]:
            path = mirror / data["files"][model]["path"]
            assert hashlib.sha256(path.read_bytes()).hexdigest() == data["files"][model]["sha256"]
            frame = pd.read_json(path)
            assert len(frame) == n
            out[model] = {solved: run(glm_winrate, frame, Path(tmp) / solved, extra)
                          for solved, extra in (("default", {}),
                                                ("tight", {"tol": 1e-12, "max_iter": 100_000}))}  # fmt: skip
    return out


def run(glm: Any, frame: Any, weights_dir: Path, extra: dict[str, Any]) -> dict[str, Any]:
    name = "length_controlled_noreg"
    info = {**glm.GLM_INFO[name], "kwargs": {"n_splits": 5, **extra}}
    metrics = glm.get_length_controlled_winrate(
        frame.copy(), glm_name=name, save_weights_dir=weights_dir, glm_info=info,
        is_add_glm_preference_inplace=False, is_warn_extreme_changes=False,
    )  # fmt: skip
    import pandas as pd

    model, base = str(frame["generator_2"].iloc[0]), str(frame["generator_1"].iloc[0])
    weights = pd.read_csv(weights_dir / name / f"baseline_{base}.csv", index_col=0)
    return {**{k: float(metrics[k]) for k in ("win_rate", "length_controlled_winrate",
                                              "lc_standard_error")},
            "weights": {k: float(v) for k, v in weights.loc[model].items()}}  # fmt: skip


def versions() -> dict[str, str]:
    import alpaca_eval
    import numpy
    import pandas
    import sklearn

    return {"alpaca_eval": alpaca_eval.__version__, "scikit-learn": sklearn.__version__,
            "numpy": numpy.__version__, "pandas": pandas.__version__}  # fmt: skip


def main() -> int:
    step = sys.argv[1] if len(sys.argv) == 2 else ""
    if step == "inputs":
        ORACLE.write_text(json.dumps(inputs(), indent=1) + "\n")
    elif step == "official":
        data = json.loads(ORACLE.read_text())
        data["official"], data["versions"] = official(data), versions()
        ORACLE.write_text(json.dumps(data, indent=1) + "\n")
    else:
        print("usage: make_lc_oracle.py inputs|official", file=sys.stderr)
        return 2
    print(f"wrote {ORACLE} ({step})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
