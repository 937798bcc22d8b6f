"""Make tests/ratings/lc_oracle.json: AlpacaEval's ``get_length_controlled_winrate`` outputs on
generated annotations, for tests/ratings/test_lc_oracle.py.

alpaca_eval's dependencies are heavy, so it lives in a throwaway virtualenv, never in .venv:

    python3 -m venv /tmp/ae-venv
    /tmp/ae-venv/bin/pip install alpaca_eval==0.6.6 'setuptools<81'
    /tmp/ae-venv/bin/python tests/ratings/make_lc_oracle.py

The official function downloads ``df_gamed.csv`` (instruction difficulty and the gamed
baselines' annotations) from the Hugging Face hub; here ``hf_hub_download`` is pointed at a
generated file of the same columns (rows ordered so that row ``i`` is instruction ``i``, as the
official lookup ``drop_duplicates("index")["instruction_difficulty"][i]`` needs). For each
model, three GLMs: ``length_controlled_v1`` (with the gamed rows), ``length_controlled_noreg``
and the same two with liblinear's tolerance tightened (``glm_info`` kwargs ``tol=1e-12``), so the
test can tell the optimum from liblinear's stopping. The file records the inputs and the
outputs (win rates, LC win rates, standard errors, GLM weights), nothing of alpaca_eval's code.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

ORACLE = Path(__file__).with_name("lc_oracle.json")
N = 60
MODELS = {"long": (0.1, 2.0), "short": (0.3, 0.5), "even": (-0.2, 1.0)}  # quality, verbosity


def inputs(rng: np.random.Generator) -> dict[str, Any]:
    difficulty = rng.normal(0, 1, N)
    base_len = rng.integers(200, 2000, N)
    gamed = []
    for verbosity in (2.0, 0.5):  # the baseline made verbose and concise
        length = (base_len * verbosity * rng.uniform(0.7, 1.3, N)).astype(int)
        delta = base_len - length
        p = 1 / (1 + np.exp(-(0.8 * np.tanh(-delta / 600) - 0.3 * difficulty)))
        gamed.append(pd.DataFrame({"index": np.arange(N), "instruction_difficulty": difficulty,
                                   "preference": np.clip(p + rng.normal(0, 0.1, N), 0, 1),
                                   "std_delta_len": delta / delta.std(ddof=1),
                                   "not_gamed_baseline": False}))  # fmt: skip
    models = {}
    for name, (quality, verbosity) in MODELS.items():
        length = (base_len * verbosity * rng.uniform(0.5, 1.5, N)).astype(int)
        z = quality + 0.6 * np.tanh((length - base_len) / 500) - 0.4 * difficulty
        pref = 1 + np.clip(1 / (1 + np.exp(-z)) + rng.normal(0, 0.15, N), 0, 1)
        pref[rng.choice(N, 4, replace=False)] = rng.choice([1.0, 2.0, 1.5, 0.0], 4)
        pref[rng.integers(N)] = np.nan
        models[name] = {"preference": pref.tolist(), "length": length.tolist()}
    return {"difficulty": difficulty.tolist(), "baseline_length": base_len.tolist(),
            "models": models, "gamed": pd.concat(gamed).to_dict("list")}  # fmt: skip


def annotations(data: dict[str, Any], name: str) -> pd.DataFrame:
    model = data["models"][name]
    return pd.DataFrame({
        "index": np.arange(N), "generator_1": "baseline", "generator_2": name,
        "output_1": ["x" * n for n in data["baseline_length"]],
        "output_2": ["y" * n for n in model["length"]],
        "preference": model["preference"],
    })  # fmt: skip


def main() -> int:
    from alpaca_eval.metrics import glm_winrate

    data = inputs(np.random.default_rng(2024))
    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / "df_gamed.csv"
        pd.DataFrame(data["gamed"]).assign(model="gamed").to_csv(csv, index=False)
        glm_winrate.hf_hub_download = lambda **_: str(csv)
        data["official"] = {name: official(glm_winrate, annotations(data, name), Path(tmp))
                            for name in data["models"]}  # fmt: skip
    data["versions"] = versions()
    ORACLE.write_text(json.dumps(data, indent=1, allow_nan=True) + "\n")
    print(f"wrote {ORACLE}")
    return 0


def official(glm: Any, frame: pd.DataFrame, tmp: Path) -> dict[str, Any]:
    out = {}
    model = str(frame["generator_2"].iloc[0])
    for name in ("length_controlled_v1", "length_controlled_noreg"):
        for solved, extra in (("default", {}), ("tight", {"tol": 1e-12, "max_iter": 100_000})):
            info = {**glm.GLM_INFO[name], "kwargs": {"n_splits": 5, **extra}}
            metrics = glm.get_length_controlled_winrate(
                frame.copy(), glm_name=name, save_weights_dir=tmp / solved, glm_info=info,
                is_add_glm_preference_inplace=False, is_warn_extreme_changes=False,
            )  # fmt: skip
            weights = pd.read_csv(tmp / solved / name / "baseline_baseline.csv", index_col=0)
            out[f"{name}/{solved}"] = {
                **{k: metrics[k] for k in ("win_rate", "length_controlled_winrate",
                                           "lc_standard_error")},
                "weights": weights.loc[model].to_dict(),
            }  # fmt: skip
    return out


def versions() -> dict[str, str]:
    import alpaca_eval
    import sklearn

    return {"alpaca_eval": alpaca_eval.__version__, "scikit-learn": sklearn.__version__,
            "numpy": np.__version__, "pandas": pd.__version__}  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
