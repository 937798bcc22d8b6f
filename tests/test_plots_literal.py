"""A name is drawn as it is written: a ``$`` in a system name is a dollar sign, not the start
of matplotlib's math text (``a$\\foo{$b`` failed the whole report with "ValueError: \\foo{")."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pandas as pd

from evalbench import plots

NAME = "a$\\foo{$b"
ROOT = Path(__file__).resolve().parents[1]


def test_a_dollar_in_a_system_name_is_drawn_literally():
    frame = pd.DataFrame({"level": ["L1", "L1"], "system": [NAME, "$x$"], "accuracy": [0.5, 0.6],
                          "ci_low": [0.4, 0.5], "ci_high": [0.6, 0.7]})  # fmt: skip
    with plt.rc_context():
        plots.setup()
        ax = plots.interval_bars(frame, x="system", y="accuracy", low="ci_low", high="ci_high",
                                 hue="system", title=f"{NAME} vs $x$")  # fmt: skip
        ax.figure.canvas.draw()  # raised ValueError: \foo{ (math text)
        texts = [*ax.get_xticklabels(), *ax.get_legend().get_texts(), ax.title]
        assert {t.get_text() for t in texts} == {NAME, "$x$", f"{NAME} vs $x$"}
        assert not any(t.get_parse_math() for t in texts)
        plt.close("all")


def test_every_notebook_sets_the_look_up_before_its_figures():
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = [c for c in json.loads(notebook.read_text())["cells"] if c["cell_type"] == "code"]
        sources = ["".join(c["source"]) for c in cells]
        first = next(i for i, s in enumerate(sources) if "plots.setup()" in s)
        drawn = [i for i, s in enumerate(sources) if "figures." in s or "plots." in s]
        assert first <= min(drawn), notebook.name
