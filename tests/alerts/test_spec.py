"""The ``alerts:`` block and ``tag:`` of a params file: validated, never part of the run id."""

from __future__ import annotations

import re

import pytest
import yaml

from evalbench.alerts.spec import MAX_TARGETS
from evalbench.params import ParamsError, params_hash
from evalbench.settings import get_settings
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
    bad = {"rules": [{"drop_more_than": 0.1}], "notify": [{"webhook_env": "A", "file": "x.jsonl"}]}
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


def _alerts(tmp_path, alerts, base=None):
    return load_params(_write(tmp_path, {**(base or BASE), "alerts": alerts}))


@pytest.mark.parametrize(
    "file",
    ["../escaped/x.jsonl", "a/../../x.jsonl", "/tmp/x.jsonl", "~/.bashrc", "alerts.txt",
     "a/.hidden.jsonl", "sub\\..\\..\\x.jsonl", "x.jsonl\n"],
)  # fmt: skip
def test_a_file_target_outside_the_outputs_folder_is_refused(tmp_path, file):
    alerts = {"rules": [{"drop_more_than": 0.1}], "notify": [{"file": file}]}
    with pytest.raises(ParamsError, match=r"alerts\.notify\.0\.file: ") as caught:
        _alerts(tmp_path, alerts)
    assert "\n" not in str(caught.value)  # one line


def test_a_file_target_under_the_outputs_folder_is_accepted(tmp_path):
    alerts = {"rules": [{"drop_more_than": 0.1}],
              "notify": [{"file": "alerts.jsonl"}, {"file": "ci/nightly-alerts.jsonl"}]}  # fmt: skip
    assert [t.file for t in _alerts(tmp_path, alerts).alerts.notify] == [
        "alerts.jsonl", "ci/nightly-alerts.jsonl"
    ]  # fmt: skip


def test_a_file_target_that_is_a_symlink_out_of_the_outputs_folder_is_refused(tmp_path):
    outputs = get_settings().outputs_dir
    outputs.mkdir(parents=True)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outputs / "linked").symlink_to(outside)  # outputs/linked/x.jsonl is elsewhere/x.jsonl
    alerts = {"rules": [{"drop_more_than": 0.1}], "notify": [{"file": "linked/x.jsonl"}]}
    with pytest.raises(ParamsError, match=r"alerts\.notify\.0\.file: .*outside the outputs"):
        _alerts(tmp_path, alerts)


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://hooks.example.com/SECRET TOKEN", "a space or a control character"),
        ("http://hooks.example.com:SECRET/x", "its port is not a number from 1 to 65535"),
        ("http://[::1/SECRET", "it cannot be parsed"),
        ("ftp://hooks.example.com/SECRET", "it is not an http:// or https:// URL"),
        ("https:///SECRET", "it names no host"),
        ("https://hooks.example.com/SECRÉT", "a character that is not ASCII"),
    ],
)
def test_a_bad_literal_webhook_is_refused_without_showing_it(tmp_path, url, why):
    alerts = {"rules": [{"drop_more_than": 0.1}], "notify": [{"webhook": url}]}
    with pytest.raises(ParamsError, match=r"alerts\.notify\.0\.webhook: ") as caught:
        _alerts(tmp_path, alerts)
    assert why in str(caught.value)
    assert "SECRET" not in str(caught.value) and "SECRÉT" not in str(caught.value)


@pytest.mark.parametrize(
    "url",
    ["javascript:alert(1)", "https://user:SECRET@ci.example.com/artifacts",
     "https://ci.example.com/artifacts?token=SECRET", "https://ci.example.com/a#SECRET",
     "https://ci.example.com/a b"],
)  # fmt: skip
def test_a_report_url_with_a_secret_or_another_scheme_is_refused(tmp_path, url):
    alerts = {"rules": [{"drop_more_than": 0.1}], "report_url": url}
    with pytest.raises(ParamsError, match=r"alerts\.report_url: ") as caught:
        _alerts(tmp_path, alerts)
    assert "SECRET" not in str(caught.value) and "alert(1)" not in str(caught.value)


def test_a_webhook_that_could_take_too_long_is_refused(tmp_path):
    # worst case of one target: attempts x timeout_s + the backoffs, doubled each time:
    # 10 x 120 + 60 x (1 + 2 + ... + 256) = 1,200 + 60 x 511 = 31,860 s (8.85 h)
    slow = {"webhook_env": "HOOK", "attempts": 10, "timeout_s": 120, "backoff_s": 60}
    with pytest.raises(ParamsError, match=r"31,860 s; at most 300 s"):
        _alerts(tmp_path, {"rules": [{"drop_more_than": 0.1}], "notify": [slow]})
    # 5 x 60 + 1 x (1 + 2 + 4 + 8) = 315 s: refused; 4 x 60 + 1 x (1 + 2 + 4) = 247 s: fine
    five = {"webhook_env": "HOOK", "attempts": 5, "timeout_s": 60}
    with pytest.raises(ParamsError, match=r"315 s"):
        _alerts(tmp_path, {"rules": [{"drop_more_than": 0.1}], "notify": [five]})
    four = {**five, "attempts": 4}
    spec = _alerts(tmp_path, {"rules": [{"drop_more_than": 0.1}], "notify": [four]}).alerts
    assert spec.notify[0].worst_case_s == 247.0


@pytest.mark.parametrize(
    ("base", "rule", "message"),
    [
        # accuracy lies in [0, 1]: it can fall by 1 at most, never by more than 1
        ({}, {"metric": "accuracy", "drop_more_than": 5}, "can never fire: accuracy lies in"),
        ({}, {"metric": "accuracy", "drop_more_than": 1}, "can never fire: accuracy lies in"),
        ({}, {"drop_more_than": 1.5}, "can never fire"),  # every metric of gaia: accuracy
        ({}, {"metric": "acuracy", "drop_more_than": 0.1}, "no metric 'acuracy' in gaia runs"),
        ({}, {"error_rate_more_than": 1.0}, "can never fire: a share of calls is at most 1"),
        ({"study": "judge_public", "title": "t"}, {"drop_more_than": 0.1},
         "judge_public runs have no per-item outcomes"),
    ],
)  # fmt: skip
def test_a_threshold_outside_the_metrics_range_is_refused(tmp_path, base, rule, message):
    with pytest.raises(ParamsError, match=re.escape(message)) as caught:
        _alerts(tmp_path, {"rules": [rule]}, base)
    assert "alerts" in str(caught.value) and "\n" not in str(caught.value)


def test_thresholds_inside_the_range_are_accepted(tmp_path):
    rules = [{"metric": "accuracy", "drop_more_than": 0.99}, {"error_rate_more_than": 0.99},
             {"cost_usd_more_than": 50}, {"latency_p95_more_than": 0.5}]  # fmt: skip
    assert len(_alerts(tmp_path, {"rules": rules}).alerts.rules) == 4


def test_the_metric_ranges_cover_every_study_kind_with_outcomes():
    from evalbench.alerts.spec import METRICS
    from evalbench.importers import READERS

    assert set(METRICS) == set(READERS)  # a new reader needs its metrics' ranges here


def test_more_notify_targets_than_anyone_reads_are_refused(tmp_path):
    # Before: 1,000 file targets were taken; the manifest, rewritten after each delivery,
    # grew to 334 KB and the check took 46 s after the status line said the run was done
    targets = [{"file": f"t{i}.jsonl"} for i in range(MAX_TARGETS + 1)]
    with pytest.raises(ParamsError) as caught:
        _alerts(tmp_path, {"rules": [{"error_rate_more_than": 0.1}], "notify": targets})
    assert f"alerts.notify: at most {MAX_TARGETS} targets (got {MAX_TARGETS + 1})" in str(
        caught.value
    )
    alerts = {"rules": [{"error_rate_more_than": 0.1}], "notify": targets[:MAX_TARGETS]}
    assert len(_alerts(tmp_path, alerts).alerts.notify) == MAX_TARGETS


URL = "https://hooks.slack.com/services/T000/B000/SECRETXYZ"


@pytest.mark.parametrize(
    ("notify", "where"),
    [([URL], "alerts.notify.0: "), (URL, "alerts.notify: "), ([{"webhook": [URL]}], "alerts.notify.0.webhook: "),
     ([{"file": URL}], "alerts.notify.0.file: "), ([{"webhook_env": URL}], "alerts.notify.0.webhook_env: ")],
)  # fmt: skip
def test_a_webhook_url_in_the_wrong_place_is_refused_without_showing_it(tmp_path, notify, where):
    """A URL where a target should be (``webhook:`` forgotten) was quoted in the error:
    ``(got 'https://hooks.slack.com/services/T000/B000/SECRETXYZ')``."""
    with pytest.raises(ParamsError, match=re.escape(where)) as caught:
        _alerts(tmp_path, {"rules": [{"drop_more_than": 0.1}], "notify": notify})
    assert "SECRETXYZ" not in str(caught.value) and "hooks.slack.com" not in str(caught.value)


def test_rules_that_differ_only_in_alpha_are_two_rules_and_a_repeated_rule_is_refused(tmp_path):
    """Rules are keyed by their description, which left ``alpha`` out: two drop rules that
    differed only in it were merged into one notification, naming neither's alpha."""
    strict = {"metric": "accuracy", "drop_more_than": 0.05, "alpha": 0.01}
    loose = {"metric": "accuracy", "drop_more_than": 0.05, "alpha": 0.2}
    params = _alerts(tmp_path, {"rules": [strict, loose, {"drop_more_than": 0.1}]})
    assert [r.describe() for r in params.alerts.rules] == [
        "accuracy drop_more_than 0.05 alpha 0.01", "accuracy drop_more_than 0.05 alpha 0.2",
        "drop_more_than 0.1",  # the default alpha (0.05) is not said
    ]  # fmt: skip
    with pytest.raises(ParamsError, match=r"alerts\.rules: rule 1 repeats rule 0 \(accuracy"):
        _alerts(tmp_path, {"rules": [strict, dict(strict)]})
