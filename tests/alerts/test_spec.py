"""The ``alerts:`` block and ``tag:`` of a params file: validated, never part of the run id."""

from __future__ import annotations

import pytest
import yaml

from evalbench.params import ParamsError, params_hash
from evalbench.studies import load_params

BASE = {
    "study": "gaia", "title": "t", "dataset": "demo",
    "systems": [{"name": "s", "provider": "sim"}],
}  # fmt: skip
ALERTS = {
    "rules": [
        {"metric": "accuracy", "drop_more_than": 0.05},
        {"cost_usd_more_than": 1.25},
        {"error_rate_more_than": 0.02},
        {"latency_p95_more_than": 1.5, "systems": ["s"]},
    ],
    "notify": [
        {"webhook": "https://hooks.example.com/services/SECRET"},
        {"webhook_env": "SLACK_WEBHOOK_URL"},
        {"file": "alerts.jsonl"},
    ],
}


def _write(tmp_path, data):
    path = tmp_path / "x.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_alerts_load_and_leave_the_run_id_as_it_was(tmp_path):
    plain = load_params(_write(tmp_path, BASE))
    with_alerts = load_params(_write(tmp_path, {**BASE, "alerts": ALERTS}))
    assert [r.kind for r in with_alerts.alerts.rules] == [
        "drop_more_than", "cost_usd_more_than", "error_rate_more_than", "latency_p95_more_than"
    ]  # fmt: skip
    assert params_hash(with_alerts) == params_hash(plain)  # same run folder
    assert "alerts" not in with_alerts.model_dump()
    public = with_alerts.alerts.public()
    assert "SECRET" not in str(public)  # a literal webhook shows its host only
    assert public["notify"][0] == "webhook https://hooks.example.com/…"


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ({"metric": "accuracy"}, "exactly one of drop_more_than"),
        ({"drop_more_than": 0.1, "cost_usd_more_than": 2}, "exactly one of"),
        ({"metric": "accuracy", "cost_usd_more_than": 2}, "metric: applies to drop_more_than"),
        ({"drop_more_than": -0.1}, "alerts.rules.0.drop_more_than"),
        ({"drop_more_than": float("inf")}, "alerts.rules.0.drop_more_than"),
        ({"drop_more_than": 0.1, "typo": 1}, "alerts.rules.0.typo: unknown key"),
    ],
)
def test_a_bad_rule_is_one_line_naming_the_field(tmp_path, rule, message):
    with pytest.raises(ParamsError, match=message.replace("(", r"\(")):
        load_params(_write(tmp_path, {**BASE, "alerts": {"rules": [rule]}}))


def test_a_notify_entry_names_one_target(tmp_path):
    bad = {"rules": [{"drop_more_than": 0.1}], "notify": [{"webhook_env": "A", "file": "x"}]}
    with pytest.raises(ParamsError, match=r"alerts\.notify\.0: .*exactly one of webhook"):
        load_params(_write(tmp_path, {**BASE, "alerts": bad}))
    ftp = {"rules": [{"drop_more_than": 0.1}], "notify": [{"webhook": "ftp://x"}]}
    with pytest.raises(ParamsError, match=r"alerts\.notify\.0\.webhook"):
        load_params(_write(tmp_path, {**BASE, "alerts": ftp}))


def test_a_tag_is_a_new_run_folder_and_a_date_reads_as_text(tmp_path):
    path = _write(tmp_path, BASE)
    tagged = load_params(path, ["tag=2026-05-01"])
    assert tagged.tag == "2026-05-01"
    assert params_hash(tagged) != params_hash(load_params(path))
    assert params_hash(load_params(path, ["tag="])) == params_hash(load_params(path))
    with pytest.raises(ParamsError, match="tag"):
        load_params(path, ["tag=a b"])
