"""``evalbench watch -p tier=...`` / ``-p tag=...``: watch sets both itself (after the user's
overrides, so the user's lost, and the run's history showed both values); refused in one
line naming the option to use, exit 2, before anything runs (found by attack)."""

from __future__ import annotations

import argparse
import datetime as dt

import pytest
import yaml

from evalbench.alerts.cli import watch_overrides
from evalbench.cli import main
from evalbench.params import ParamsError
from evalbench.settings import get_settings


def _args(**kw):
    return argparse.Namespace(**{"tier": "quick", "tag": None, "overrides": [], **kw})


@pytest.mark.parametrize(
    ("override", "said"),
    [("tier=full", "-p tier=full: watch sets the tier; use --tier full"),
     ("tag=mytag", "-p tag=mytag: watch sets the tag; use --tag mytag"),
     (" tag = nightly 7", "-p  tag = nightly 7: watch sets the tag; use --tag 'nightly 7'"),
     ("tier", "-p tier: watch sets the tier; use --tier")],
    ids=["tier", "tag", "spaced", "no-value"],
)  # fmt: skip
def test_a_tier_or_tag_override_names_the_option(override, said):
    with pytest.raises(ParamsError) as caught:
        watch_overrides(_args(overrides=["seed=2", override]))
    assert str(caught.value) == said


def test_other_overrides_stay_the_users():
    args = _args(overrides=["tiers=x", "title=tag=1", "cache=use"])  # names that only look alike
    assert watch_overrides(args, dt.date(2026, 5, 1)) == [
        "tiers=x", "title=tag=1", "cache=use", "tier=quick", "tag=2026-05-01"
    ]  # fmt: skip


def test_watch_refuses_them_before_anything_runs(tmp_path, capsys):
    params = tmp_path / "x.yaml"
    params.write_text(yaml.safe_dump({"study": "gaia", "title": "t", "dataset": "demo",
                                      "systems": [{"name": "s", "provider": "sim"}]}))  # fmt: skip
    argv = ["watch", str(params), "-p", "tier=full", "-p", "tag=mytag"]
    assert main(argv) == 2
    assert capsys.readouterr() == ("", "evalbench: -p tier=full: watch sets the tier; "
                                       "use --tier full\n")  # fmt: skip
    assert not get_settings().outputs_dir.exists()  # nothing ran
