"""A comparison that compared nothing is never "no regression": runs sharing no item, items
without a value on both sides, a metric that paired nothing, a metric nobody has, and
numbers that are not finite. Each is exit 2 with one line saying why (README: exit codes)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from evalbench.cli import main
from evalbench.history import compare_runs
from evalbench.importers import OutcomeError, RunOutcomes

N = 6
GATE = ["compare", "--fail-on-regression", "--no-report", "--baseline"]


def _items(prefix: str, value: bool | None = True) -> dict[str, bool | None]:
    return {f"{prefix}{i}": value for i in range(N)}


def _gate(capsys, base: Path, cand: Path, *extra: str) -> tuple[int, str, str]:
    code = main([*GATE, str(base), *extra, str(cand)])
    out, err = capsys.readouterr()
    return code, out, err


def test_runs_sharing_no_item_id_exit_2_never_no_regression(gaia_run, capsys):
    base = gaia_run("g", "a", {"s": _items("t")})
    cand = gaia_run("g", "b", {"s": _items("u")})  # u0..u5: not one id in common
    code, out, err = _gate(capsys, base, cand)
    assert code == 2 and "no regression" not in out
    assert err == (
        "evalbench: g/b vs g/a: nothing compared: the runs share no item id "
        "(g/a: 6 items, e.g. 't0'; g/b: 6 items, e.g. 'u0')\n"
    )
    # the plain comparison (no gate) says the same: a table of nothing is not a result
    assert main(["compare", "--no-report", str(base), str(cand)]) == 2


def test_items_without_a_value_on_both_sides_exit_2(gaia_run, capsys):
    base = gaia_run("g", "a", {"s": _items("t", None)})  # hidden truth: unscored
    cand = gaia_run("g", "b", {"s": _items("t")})
    code, out, err = _gate(capsys, base, cand)
    assert code == 2 and "no regression" not in out
    assert "g/b vs g/a: nothing compared: 6 items in both runs, none with a value in both" in err


def test_a_metric_that_paired_nothing_fails_the_gate_but_not_the_table(gaia_run, capsys):
    # s pairs 6 items; x is unscored everywhere in B: its accuracy compared nothing
    base = gaia_run("g", "a", {"s": _items("t"), "x": _items("t")})
    cand = gaia_run("g", "b", {"s": _items("t"), "x": _items("t", None)})
    code, out, err = _gate(capsys, base, cand)
    assert code == 2 and "no regression" not in out
    assert err.strip().splitlines() == [
        "evalbench: g/b vs g/a, x accuracy: the gate compared nothing: 0 paired items (only "
        "in A 0, only in B 0, unscored 6); it cannot pass (restrict with --metric/--pair or fix "
        "the runs)"
    ]
    assert "s accuracy" in out  # the table of what was compared is still printed
    assert main(["compare", "--no-report", str(base), str(cand)]) == 0  # no gate: a table


def test_an_unknown_metric_is_exit_2(gaia_run, capsys):
    base = gaia_run("g", "a", {"s": _items("t")})
    cand = gaia_run("g", "b", {"s": _items("t")})
    code, _, err = _gate(capsys, base, cand, "--metric", "acuracy")
    assert code == 2
    assert err == "evalbench: metric 'acuracy': not in g/a or g/b (they have: accuracy)\n"


def _run(label: str, values: list[float]) -> RunOutcomes:
    frame = pd.DataFrame({
        "item_id": [f"t{i}" for i in range(len(values))], "system": "s", "metric": "score",
        "kind": "score", "higher_is_better": True, "value": values, "state": "ok",
    })  # fmt: skip
    return RunOutcomes(label, "x", "evalbench", Path(label), frame, (), frozenset(),
                       {"status": "ok"})  # fmt: skip


def test_a_non_finite_value_is_refused_before_any_test():
    good = _run("A", [1.0, 2.0, 3.0])
    with pytest.raises(OutcomeError, match=r"^B: item 't1' score = inf: not a finite number"):
        compare_runs([good, _run("B", [1.0, math.inf, 3.0])], rounds=0)


@pytest.mark.filterwarnings("ignore:overflow encountered")
def test_a_mean_that_overflows_fails_the_gate(monkeypatch, capsys):
    """Finite values whose mean is not (1e308 + 1e308 overflows): no verdict from an inf."""
    import evalbench.history.cli as cli

    runs = [_run("A", [1e308, 1e308]), _run("B", [1.0, 1.0])]
    monkeypatch.setattr(cli, "load_run", lambda ref, **kw: runs.pop(0))
    code = main(["compare", "--fail-on-regression", "--no-report", "--baseline", "A", "B"])
    err = capsys.readouterr().err
    assert code == 2 and "B vs A, s score: the compared numbers are not finite (mean A inf" in err


def _lm_eval(folder: Path, values: list[str]) -> Path:
    folder.mkdir(parents=True)
    date = "2026-01-01T00-00-00.1"
    (folder / f"results_{date}.json").write_text(json.dumps({"results": {"toy": {}},
                                                             "model_name": "m"}))  # fmt: skip
    lines = [f'{{"doc_id": {i}, "filter": "none", "metrics": ["acc"], "acc": {v}}}\n'
             for i, v in enumerate(values)]  # fmt: skip
    (folder / f"samples_toy_{date}.jsonl").write_text("".join(lines))
    return folder


def test_an_infinite_per_sample_value_is_exit_2_naming_file_and_line(tmp_path, capsys):
    base = _lm_eval(tmp_path / "a", ["1", "1", "0"])
    cand = _lm_eval(tmp_path / "b", ["1", "Infinity", "0"])
    code, out, err = _gate(capsys, base, cand)
    assert code == 2 and "no regression" not in out
    assert (
        "samples_toy_2026-01-01T00-00-00.1.jsonl:2: acc: Infinity is not a per-item number" in err
    )


def test_a_run_with_no_outcomes_says_so(gaia_run, capsys):
    base = gaia_run("g", "a", {"s": _items("t")})
    empty = gaia_run("g", "b", {})  # a records file with no line
    assert main(["compare", "--no-report", str(base), str(empty)]) == 2
    assert capsys.readouterr().err == (
        "evalbench: g/b: no outcomes (its records hold no item): nothing to compare\n"
    )


def test_the_gate_refuses_a_run_that_did_not_finish(gaia_run, capsys):
    """A candidate still being written (or killed) has partial records: the gate cannot pass
    on them; the plain table says so in a note."""
    from evalbench.runs import lock_run, release_run

    base = gaia_run("g", "a", {"s": _items("t")})
    cand = gaia_run("g", "b", {"s": _items("t")}, status="running")
    lock_run(cand)  # as the process writing it holds it
    try:
        code, out, err = _gate(capsys, base, cand)
        assert code == 2 and "no regression" not in out
        assert err == (
            "evalbench: g/b: status running (not finished: its records may be partial); the "
            "gate compares finished runs\n"
        )
        assert main(["compare", "--no-report", str(base), str(cand)]) == 0
        assert "note: g/b: status running (not finished" in capsys.readouterr().out
    finally:
        release_run(cand)
    code, out, err = _gate(capsys, base, cand)  # the writer is gone: interrupted
    assert code == 2 and "g/b: status interrupted (not finished" in err
