"""The summary's alerts: the count it states matches the lines it lists (a drop overall and in
a level of one system is one line; the places are counted apart)."""

from __future__ import annotations

import html
import json
import re

from alerts.helpers import outcomes_from, write_run

from evalbench.settings import get_settings
from evalbench.summary import write_summary


def _fired(system: str, where: str) -> dict[str, object]:
    return {"rule": "accuracy drop_more_than 0.05", "system": system, "metric": "accuracy",
            "slice": where, "baseline": 1.0, "now": 0.0, "change": -1.0, "low": -1.0,
            "high": -1.0, "p_holm": 0.001, "n": 4}  # fmt: skip


def test_the_stated_count_is_the_count_listed():
    outputs = get_settings().outputs_dir
    run = write_run(
        outputs, "now", {"a": outcomes_from([True] * 4), "b": outcomes_from([True] * 4)}
    )
    manifest = json.loads((run / "manifest.json").read_text())
    fired = [_fired("a", "overall"), _fired("a", "level=1"), _fired("b", "overall")]
    manifest["alerts"] = {"baseline": "watched/base", "fired": fired}
    (run / "manifest.json").write_text(json.dumps(manifest))
    write_summary(run)
    page = html.unescape((run / "summary.html").read_text())
    head, listed = re.findall(r'<p class="warn">(Alerts fired[^<]*)</p><ul>(.*?)</ul>', page)[0]
    assert listed.count("<li>") == 2  # a's two places are one line
    assert head == "Alerts fired (2; 3 places counting each slice):"
