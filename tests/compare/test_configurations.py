"""A configuration is what a run studies: its params as resolved (the params file's content
with the ``-p`` overrides), its overrides other than ``tag=``. Editing the params file makes
another configuration, so a trend line or an alert baseline never joins the two; a new tag,
a new title or description, or new alert rules (never in the resolved params) do not."""

from __future__ import annotations

import copy
import re

from evalbench.compare import metrics
from evalbench.history import headline_series
from evalbench.history.runs import check_baseline, params_identity
from evalbench.index import build_index

RIGHT = {"s": dict.fromkeys(("t1", "t2", "t3", "t4"), True)}
WRONG = {"s": dict.fromkeys(("t1", "t2", "t3", "t4"), False)}
AS_WRITTEN = {"study": "gaia", "title": "T", "seed": 0,
              "systems": [{"name": "s", "provider": "sim", "sim": {"accuracy": 0.85}}]}  # fmt: skip
EDITED = copy.deepcopy(AS_WRITTEN)
EDITED["systems"][0]["sim"]["accuracy"] = 0.2  # the same file, strong-sim made weak


def _day(day: int) -> str:
    return f"2026-01-0{day}T00:00:00+00:00"


def test_the_identity_leaves_out_the_tag_title_and_description():
    same = [AS_WRITTEN, {**AS_WRITTEN, "tag": "2026-01-03"}, {**AS_WRITTEN, "title": "New"},
            {**AS_WRITTEN, "description": "Reworded."}]  # fmt: skip
    assert len({params_identity({"params": p}) for p in same}) == 1
    other = [EDITED, {**AS_WRITTEN, "seed": 2}, {**AS_WRITTEN, "tier": "quick"}]
    assert len({params_identity({"params": p}) for p in [AS_WRITTEN, *other]}) == 4
    assert params_identity({}) == ""  # a manifest without its params: unknown


def test_an_edited_params_file_is_another_configuration(gaia_run, outputs):
    first = gaia_run("g", "r1", RIGHT, started_at=_day(1), params=AS_WRITTEN)
    edited = gaia_run("g", "r2", WRONG, started_at=_day(2), params=EDITED)
    tagged = gaia_run("g", "r3", WRONG, started_at=_day(3), overrides=["tag=2026-01-03"],
                      params={**EDITED, "tag": "2026-01-03"})  # fmt: skip
    assert check_baseline(first)[0] is None
    assert check_baseline(edited) == (
        None, "no earlier ok run of this configuration and no pinned baseline"
    )  # fmt: skip
    assert check_baseline(tagged) == (edited, "previous ok run of this configuration")
    build_index(outputs)
    page = (outputs / "g" / "trends.html").read_text()
    # r1 alone; r2 and r3 one line (the tag aside, the same configuration)
    assert page.count('class="series"') == 1 and page.count('class="setup"') == 1
    legend = re.findall(r'<ul class="legend">(.*?)</ul>', page)[0]
    ids = params_identity({"params": AS_WRITTEN}), params_identity({"params": EDITED})
    assert legend.count("<li>") == 2
    assert f"s · as written · params {ids[0]} · abc1234def" in legend
    assert f"s · as written · params {ids[1]} · abc1234def" in legend
    series = metrics.history_series(headline_series("g"), "accuracy")
    assert series.groupby("series", sort=False)["run_id"].agg(list).to_dict() == {
        f"s · as written · params {ids[0]} · abc1234def": ["r1"],
        f"s · as written · params {ids[1]} · abc1234def": ["r2", "r3"],
    }


def test_two_params_files_of_one_name_in_two_folders_are_two_configurations(gaia_run, outputs):
    # /x/h.yaml and /x/sub/h.yaml write to the same study folder, outputs/h
    a = gaia_run("h", "r1", RIGHT, started_at=_day(1), params=AS_WRITTEN)
    b = gaia_run("h", "r2", WRONG, started_at=_day(2), params=EDITED)
    gaia_run("h", "r3", RIGHT, started_at=_day(3), params=AS_WRITTEN)
    assert check_baseline(b)[0] is None
    assert check_baseline(outputs / "h" / "r3") == (a, "previous ok run of this configuration")


def test_overrides_that_name_describe_or_alert_are_no_configuration():
    # Before: -p title=…, -p description=… and -p alerts.… each started a configuration of
    # their own (no baseline for the alert's drop rules, a trend line each), though the docs
    # set them aside as the params identity does.
    from evalbench.history.runs import configuration

    kept = ["systems.0.sim.accuracy=0.3"]
    for extra in (["tag=a"], ["title=Renamed"], ["description=x"],
                  ["alerts.notify.0.file=other.jsonl"], ["alerts={rules: []}"]):  # fmt: skip
        assert configuration(kept + extra) == tuple(kept), extra
    assert configuration(["titles=x", "seed=2"]) == ("titles=x", "seed=2")
