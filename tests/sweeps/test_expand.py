"""A ``sweep:`` block -> cells: expansion order, overrides, baseline, and every mistake as one
line naming it, before anything runs (load_params and ``evalbench run``: exit 2)."""

from __future__ import annotations

import math
import time
from pathlib import Path

import pytest
import yaml

from evalbench.cli import main
from evalbench.params import ParamsError, params_hash
from evalbench.settings import get_settings
from evalbench.studies import load_params
from evalbench.sweeps import MAX_CELLS, SweepParams
from evalbench.sweeps.expand import cell_count, factors, level_label

SIM = {"name": "a", "provider": "sim", "sim": {"accuracy": 0.5}}
ROOT = Path(__file__).resolve().parents[2]


def sweep_file(tmp_path: Path, sweep: dict, name: str = "sw", **extra) -> Path:
    """A GAIA demo params file with ``sweep``."""
    data = {"study": "gaia", "title": "t", "dataset": "demo", "systems": [dict(SIM)],
            "sweep": sweep} | extra  # fmt: skip
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def refused(path: Path) -> str:
    with pytest.raises(ParamsError) as info:
        load_params(path)
    message = str(info.value)
    assert "\n" not in message and message.startswith(str(path))
    return message


def test_grid_zip_and_seeds_expand_in_order(tmp_path: Path) -> None:
    path = sweep_file(tmp_path, {
        "grid": {"systems.0.temperature": [0.0, 0.7], "attempts": [1, 2]},
        "zip": {"systems.0.model": ["s", "l"], "systems.0.sim.accuracy": [0.3, 0.9]},
        "seeds": [5, 6],
    })  # fmt: skip
    params = load_params(path)
    assert isinstance(params, SweepParams) and params.study == "sweep" and params.swept == "gaia"
    cells = [cell for cell, _ in params.cells]
    # 2 temperatures x 2 attempts x 2 zip rows = 8 configurations, x 2 seeds = 16 cells; the
    # first grid key varies slowest, the seed fastest
    assert len(cells) == 16 == cell_count(params.sweep)
    assert [(c.config, c.seed) for c in cells[:4]] == [(0, 5), (0, 6), (1, 5), (1, 6)]
    assert cells[0].overrides == ("systems.0.temperature=0.0", "attempts=1", "systems.0.model=s",
                                  "systems.0.sim.accuracy=0.3", "seed=5")  # fmt: skip
    assert cells[3].settings == {"systems.0.temperature": 0.0, "attempts": 1,
                                 "systems.0.model": "l", "systems.0.sim.accuracy": 0.9}  # fmt: skip
    assert cells[15].overrides[0] == "systems.0.temperature=0.7" and cells[15].seed == 6
    cell_params = params.cells[15][1]
    assert cell_params.systems[0].temperature == 0.7 and cell_params.attempts == 2
    assert cell_params.seed == 6 and cell_params.systems[0].model == "l"
    # the baseline: the first configuration, at every seed
    assert [c.id for c in cells if c.baseline] == [0, 1]
    assert factors(params.sweep) == ["systems.0.temperature", "attempts", "systems.0.model (zip)"]
    assert level_label(cells[3].settings, "systems.0.model (zip)") == "l"


def test_a_cell_is_the_run_its_overrides_make(tmp_path: Path) -> None:
    """A cell's params are the study's params with ``-p sweep=null`` and its overrides: the
    same params hash, so its own report is that run."""
    path = sweep_file(tmp_path, {"grid": {"systems.0.sim.accuracy": [{"1": 0.2}, 0.9]}})
    params = load_params(path)
    for cell, cell_params in params.cells:
        plain = load_params(path, ["sweep=null", *cell.overrides])
        assert params_hash(plain) == params_hash(cell_params)
    assert params.cells[0][0].overrides == ("systems.0.sim.accuracy={'1': 0.2}",)


def test_baseline_and_default_seed(tmp_path: Path) -> None:
    path = sweep_file(tmp_path, {"grid": {"attempts": [1, 2, 3]}, "baseline": {"attempts": 2}},
                      seed=9)  # fmt: skip
    cells = [cell for cell, _ in load_params(path).cells]
    assert [c.baseline for c in cells] == [False, True, False]
    assert {c.seed for c in cells} == {9} and all(
        "seed" not in " ".join(c.overrides) for c in cells
    )


def test_a_baseline_matches_a_number_by_its_value(tmp_path: Path) -> None:
    # attempts: [1, 2] with baseline 2.0 (YAML float): the configuration attempts=2
    path = sweep_file(tmp_path, {"grid": {"attempts": [1, 2]}, "baseline": {"attempts": 2.0}})
    assert [c.baseline for c, _ in load_params(path).cells] == [False, True]
    nested = {"grid": {"systems.0.sim.accuracy": [{"1": 1, "2": 0.5}, {"1": 0.5, "2": 0.5}]},
              "baseline": {"systems.0.sim.accuracy": {"1": 1.0, "2": 0.5}}}  # fmt: skip
    assert [c.baseline for c, _ in load_params(sweep_file(tmp_path, nested, "n")).cells] == [
        True,
        False,
    ]
    # true is not 1: no configuration
    path = sweep_file(tmp_path, {"grid": {"attempts": [1, 2]}, "baseline": {"attempts": True}}, "b")
    assert 'sweep.baseline: {"attempts": true} is no configuration' in refused(path)


def test_seed_keys_that_are_seed_fields_are_accepted(tmp_path: Path) -> None:
    keys = ["seed", "sample_seed", "systems.0.seed"]
    path = sweep_file(tmp_path, {"grid": {"attempts": [1, 2]}, "seeds": [3, 4], "seed_keys": keys})
    params = load_params(path)
    cell, cell_params = params.cells[1]
    assert cell.seed == 4 and cell_params.seed == cell_params.sample_seed == 4
    assert cell_params.systems[0].seed == 4


def test_a_seed_key_must_hold_an_integer_once_validated(tmp_path: Path) -> None:
    # named like a seed, but a key of a simulated agent's tool mix (tool -> weight): 0 becomes 0.0
    systems = [{"name": "a", "provider": "sim", "sim_agent": {"tool_mix": {"search": 1.0}}}]
    sweep = {"seeds": [0, 1], "seed_keys": ["seed", "systems.0.sim_agent.tool_mix.seed"]}
    path = sweep_file(tmp_path, sweep, systems=systems)
    assert (
        "sweep.seed_keys: systems.0.sim_agent.tool_mix.seed is not a seed field (a seed key names "
        "an integer seed: seed, sample_seed, systems.0.seed); cell 0 has 0.0 there"
    ) in refused(path)


def test_max_parallel_is_not_part_of_the_sweep(tmp_path: Path) -> None:
    one = load_params(sweep_file(tmp_path, {"grid": {"attempts": [1, 2]}, "max_parallel": 1}, "a"))
    two = load_params(sweep_file(tmp_path, {"grid": {"attempts": [1, 2]}, "max_parallel": 4}, "b"))
    assert params_hash(one) == params_hash(two)
    assert one.sweep.max_parallel == 1


@pytest.mark.parametrize(
    "sweep, expected",
    [
        ({"grid": {"systems.0.temprature": [0.0]}},
         "sweep cell 0 (config 0, systems.0.temprature=0.0): systems.0.temprature: unknown key"),
        ({"grid": {"systems.0.limits.max_steps": ["many", 3]}},
         "sweep cell 0 (config 0, systems.0.limits.max_steps=many): systems.0.limits.max_steps: "),
        ({"grid": {"systems.3.model": ["x"]}},
         "sweep cell 0 (config 0, systems.3.model=x): override 'systems.3.model=x': systems.3: "
         "expected a list index 0..0"),
        ({"zip": {"systems.0.model": ["a", "b"], "systems.0.temperature": [0.0]}},
         "sweep.zip: lists of different lengths (systems.0.model: 2, systems.0.temperature: 1)"),
        ({"grid": {"attempts": []}}, "sweep.grid.attempts: no values"),
        ({"grid": {"attempts": [1]}, "zip": {"attempts": [2]}}, "in both sweep.grid and sweep.zip"),
        ({"grid": {"study": ["hle"]}}, "sweep.grid.study: 'study' cannot be swept"),
        # "=" ends the key of an override: systems.0.name=b swept the name to "b=x", "b=y"
        ({"grid": {"systems.0.name=b": ["x", "y"]}},
         "sweep.grid.systems.0.name=b: not a dotted key (as -p takes: systems.0.model)"),
        ({"zip": {"attempts ": [1, 2]}}, "sweep.zip.attempts : not a dotted key"),
        ({"seeds": [1], "seed_keys": ["seed=1"]}, "sweep.seed_keys: 'seed=1' is not a dotted key"),
        ({"grid": {"seed": [1, 2]}},
         "sweep.grid.seed: a seed key (sweep.seed_keys: seed): list its values in sweep.seeds, "
         "each configuration then runs once per seed"),
        ({"grid": {"seed": [1, 2]}, "seeds": [0, 1]},
         "sweep.grid.seed: also set by sweep.seeds (sweep.seed_keys: seed)"),
        ({}, "sweep: nothing to sweep (no grid, zip or seeds); add one, or drop the sweep block "
             "(-p sweep=null) to run the study once"),
        ({"grid": {}, "zip": {}}, "sweep: nothing to sweep"),
        ({"seeds": [0, 1], "seed_keys": ["seed", "seed"]}, "sweep.seed_keys: seed is listed twice"),
        ({"seeds": [0], "seed_keys": [f"k{i}_seed" for i in range(101)]},
         "sweep.seed_keys: List should have at most 100 items"),
        ({"seeds": [0, 1], "seed_keys": ["seed", "systems.0.sim.accuracy.1"]},
         "sweep.seed_keys: systems.0.sim.accuracy.1 is not a seed field (a seed key names an "
         "integer seed: seed, sample_seed, systems.0.seed)"),
        ({"seeds": [0, 1], "seed_keys": ["systems.0.limits.max_steps"]},
         "sweep.seed_keys: systems.0.limits.max_steps is not a seed field"),
        ({"grid": {"attempts": [1, 1]}}, "sweep.grid.attempts: 1 is listed twice"),
        ({"grid": {"attempts": [1, 2]}, "baseline": {"attempts": 3}},
         'sweep.baseline: {"attempts": 3} is no configuration'),
        ({"grid": {"attempts": [1]}, "baseline": {"seed": 3}}, "sweep.baseline.seed: not a swept key"),
        ({"grid": {"attempts": 2}}, "sweep.grid.attempts: Input should be a valid list"),
        ({"grid": {"attempts": [1]}, "seeds": []}, "sweep.seeds: List should have at least 1 item"),
        ({"grid": {"attempts": [1]}, "gird": {}}, "sweep.gird: unknown key"),
        # 1e300 s overflowed the executor's wait (a failed sweep after every cell ran)
        ({"grid": {"attempts": [1]}, "cell_timeout_s": 1e300},
         "sweep.cell_timeout_s: Input should be less than or equal to 2592000"),
        ({"grid": {"max_error_rate": [0.0, 0.0001]}, "seeds": [1, 1]}, "sweep.seeds: 1 is listed twice"),
    ],
)  # fmt: skip
def test_a_bad_sweep_is_one_line_naming_it(tmp_path: Path, sweep: dict, expected: str) -> None:
    assert expected in refused(sweep_file(tmp_path, sweep))


def test_a_key_nested_deeper_than_a_params_file_may_be_is_refused(tmp_path: Path, capsys) -> None:
    # 5,000 levels: the override built a mapping that deep, and the error message's repr of it
    # raised RecursionError (a traceback); a params file may nest 100 levels at most
    deep = "systems.0.sim.accuracy." + ".".join(["x"] * 5000)
    table = [{"name": "a", "provider": "sim", "sim": {"accuracy": {"1": 0.5}}}]
    path = sweep_file(tmp_path, {"grid": {deep: [0.1, 0.9]}}, systems=table)
    assert "sweep.grid.systems.0.sim.accuracy.x.x.x" in refused(path)
    assert "a key nested deeper than 100 levels" in refused(path)
    plain = sweep_file(tmp_path, {"grid": {"attempts": [1, 2]}}, "plain", systems=table)
    assert main(["run", str(plain), "-p", f"{deep}=1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "a key nested deeper than 100 levels" in err


def test_a_swept_key_a_mapping_does_not_have_is_refused(tmp_path: Path) -> None:
    # a key the table has not written is one the simulator may never read (a level 9, which
    # the params now refuse too: test_params.py), so the configurations may be the same study,
    # ranked as if they differed
    table = [{"name": "a", "provider": "sim", "sim": {"accuracy": {"1": 0.6, "2": 0.4, "3": 0.2}}}]
    path = sweep_file(tmp_path, {"grid": {"systems.0.sim.accuracy.default": [0.1, 0.9]}},
                      systems=table)  # fmt: skip
    assert (
        "sweep.grid.systems.0.sim.accuracy.default: no key 'default' in systems.0.sim.accuracy (it "
        "has: 1, 2, 3); a sweep varies settings that exist: add it to the params file first"
    ) in refused(path)
    # a mapping the file does not write takes its default: the agent's tool mix
    agent = [{"name": "a", "provider": "sim", "sim_agent": {"mean_steps": {"1": 3}}}]
    path = sweep_file(tmp_path, {"zip": {"systems.0.sim_agent.tool_mix.serach": [0.1, 0.9]}},
                      "mix", systems=agent)  # fmt: skip
    assert "sweep.zip.systems.0.sim_agent.tool_mix.serach: no key 'serach' in" in refused(path)
    # a key that exists is swept as before
    path = sweep_file(tmp_path, {"grid": {"systems.0.sim.accuracy.2": [0.1, 0.9]}}, "ok",
                      systems=table)  # fmt: skip
    assert len(load_params(path).cells) == 2


def test_two_cells_that_are_the_same_run_are_refused(tmp_path: Path) -> None:
    path = sweep_file(tmp_path, {"zip": {"systems.0.temperature": [0.0, 0.0],
                                         "systems.0.model": ["", ""]}})  # fmt: skip
    assert "sweep.zip: position 1 repeats" in refused(path)
    # 0 and 0.0 are different YAML values but the same temperature: the same run twice
    path = sweep_file(tmp_path, {"grid": {"systems.0.temperature": [0, 0.0]}}, "same")
    assert (
        "sweep: cells 0 and 1 have the same params (systems.0.temperature=0 | "
        "systems.0.temperature=0.0): a swept value that changes nothing"
    ) in refused(path)


def test_too_many_cells_are_refused_before_anything_is_listed(tmp_path: Path) -> None:
    # 100 x 100 configurations = 10,000 cells; 10^12 would take hours to list: refused at once
    path = sweep_file(
        tmp_path, {"grid": {"attempts": list(range(100)), "sample": list(range(1, 101))}}
    )
    message = refused(path)
    assert (
        f"10,000 cells (100 × 100 configurations × 1 seed); a sweep may have at most {MAX_CELLS:,d}"
        in message
    )
    huge = sweep_file(tmp_path, {"grid": {f"k{i}": list(range(100)) for i in range(6)}}, "huge")
    started = time.process_time()  # CPU time: load from other processes does not change it
    assert "1,000,000,000,000 cells" in refused(huge)
    assert time.process_time() - started < 1.0


def test_a_study_without_per_item_outcomes_cannot_be_swept(tmp_path: Path) -> None:
    path = tmp_path / "jp.yaml"
    path.write_text(yaml.safe_dump({"study": "judge_public", "title": "t",
                                    "sweep": {"grid": {"seed": [1]}}}))  # fmt: skip
    assert "study kind 'judge_public' has no per-item outcomes to compare cells by" in refused(path)


def test_sweep_null_is_the_study_itself(tmp_path: Path) -> None:
    path = sweep_file(tmp_path, {"grid": {"attempts": [1, 2]}})
    assert load_params(path, ["sweep=null"]).study == "gaia"


def test_evalbench_run_refuses_a_bad_sweep_with_exit_2_and_runs_nothing(
    tmp_path: Path, capsys
) -> None:
    path = sweep_file(tmp_path, {"zip": {"attempts": [1, 2], "systems.0.temperature": [1.0]}})
    assert main(["run", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "sweep.zip: lists of different lengths" in err
    assert not (get_settings().outputs_dir / "sw").exists()


# --------------------------------------------------------------------- the ranking metric


def test_a_ranking_metric_the_study_does_not_have_is_refused_before_any_cell(
    tmp_path: Path, capsys
) -> None:
    # GAIA's outcomes have one metric, accuracy: a typo is one line naming the valid ones
    path = sweep_file(tmp_path, {"grid": {"attempts": [1, 2]}, "metric": "acuracy"})
    assert "sweep.metric: 'acuracy' is no metric of study kind gaia (valid: accuracy)" in refused(
        path
    )
    assert main(["run", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "sweep.metric: 'acuracy'" in err
    assert not (get_settings().outputs_dir / "sw").exists()  # no cell ran
    # without sweep.metric: the study's first (its headline's)
    assert load_params(sweep_file(tmp_path, {"grid": {"attempts": [1, 2]}}, "d")).metric == (
        "accuracy"
    )


def test_judge_golden_metrics_follow_its_params_and_must_be_in_every_cell(tmp_path: Path) -> None:
    def golden(sweep: dict, name: str) -> Path:
        path = tmp_path / f"{name}.yaml"
        demo = get_settings().project_root / "params" / "judge_golden_demo.yaml"
        data = {**yaml.safe_load(demo.read_text()), "sweep": sweep}
        path.write_text(yaml.safe_dump(data, sort_keys=False))
        return path

    # the default rubric (fine_grained: accuracy, completeness, clarity), headline accuracy,
    # tolerance 1: "within ±1 (accuracy)" first
    params = load_params(golden({"seeds": [1, 2]}, "g"))
    assert params.metric == "within ±1 (accuracy)"
    ok = golden({"seeds": [1, 2], "metric": "abs error (clarity)"}, "g2")
    assert load_params(ok).metric == "abs error (clarity)"
    # sweeping the tolerance renames that metric per cell: it ranks no two cells alike
    path = golden({"grid": {"tolerance": [1, 2]}, "metric": "within ±1 (accuracy)"}, "g3")
    assert (
        "sweep.metric: 'within ±1 (accuracy)' is not a metric of every cell (cell 1 has: "
        "within ±2 (accuracy), abs error (weighted), abs error (accuracy), "
        "abs error (completeness), abs error (clarity))"
    ) in refused(path)


# --------------------------------------------------------------------- size first, then linear


@pytest.mark.slow  # builds and validates a list of 10^6 values (about 2 s)
def test_a_huge_seed_list_or_grid_is_counted_and_refused_before_any_per_value_check(
    tmp_path: Path, monkeypatch
) -> None:
    from evalbench.sweeps import expand as expand_module
    from evalbench.sweeps.study import load

    def never(*args, **kwargs):
        raise AssertionError("a per-value check ran before the cell count")

    monkeypatch.setattr(expand_module, "_no_repeats", never)
    monkeypatch.setattr(expand_module, "_first_repeat", never, raising=False)
    base = {"study": "gaia", "title": "t", "dataset": "demo", "systems": [dict(SIM)]}
    # 2 configurations × 100,000 seeds = 200,000 cells (the duplicate check was quadratic and
    # ran first: 397 s to this line); a 10^6-value grid: 1,000,000 cells
    for sweep, expected in [
        ({"grid": {"attempts": [1, 2]}, "seeds": list(range(100_000))},
         "200,000 cells (2 configurations × 100,000 seeds)"),
        ({"grid": {"systems.0.sim.accuracy": [i / 10**6 for i in range(10**6)]}},
         "1,000,000 cells (1,000,000 configurations × 1 seed)"),
        ({"zip": {"attempts": list(range(10**5)), "sample": list(range(10**5))}},
         "100,000 cells (zip 100,000 configurations × 1 seed)"),
    ]:  # fmt: skip
        with pytest.raises(ParamsError) as info:
            load({**base, "sweep": sweep}, tmp_path / "big.yaml")
        assert expected in str(info.value) and f"at most {MAX_CELLS:,d}" in str(info.value)


@pytest.mark.slow
def test_more_swept_keys_than_a_sweep_may_vary_are_refused_at_once(tmp_path: Path) -> None:
    # 3,000 one-value keys made one cell, and checking each key against the others took over
    # 300 s; a sweep varies at most 100 keys (with 1,000 cells, only 9 of them can have two
    # values)
    table = {str(i): 0.5 for i in range(3000)}
    systems = [{"name": "a", "provider": "sim", "sim": {"accuracy": table}}]
    sweep = {"grid": {f"systems.0.sim.accuracy.{i}": [0.4] for i in range(2999)},
             "zip": {"systems.0.sim.accuracy.2999": [0.1]}}  # fmt: skip
    path = sweep_file(tmp_path, sweep, systems=systems)
    started = time.process_time()  # CPU time: load from other processes does not change it
    assert "sweep: 3,000 swept keys (2,999 in grid, 1 in zip); a sweep may vary at most 100" in (
        refused(path)
    )
    assert time.process_time() - started < 30.0  # reading the 160 KB file; over 300 s before


@pytest.mark.slow  # 10^6 values (about 1 s)
def test_the_repeat_checks_are_linear() -> None:
    from evalbench.sweeps.expand import _no_repeats

    # 10^6 distinct values, then the first again: a linear check finds it in well under a
    # second (the quadratic one took about 5·10^11 comparisons: hours); the bound is generous
    # for a loaded machine
    values = [*range(10**6), 0]
    started = time.process_time()
    with pytest.raises(ParamsError, match=r"p.yaml: sweep.seeds: 0 is listed twice"):
        _no_repeats(values, "sweep.seeds", Path("p.yaml"))
    assert time.process_time() - started < 5.0
    # the same value as JSON is the same (1.0 is not 1, true is not 1, NaN is NaN)
    for same in ([{"a": 1, "b": 2}, {"b": 2, "a": 1}], [math.nan, math.nan], ["x", "x"]):
        with pytest.raises(ParamsError, match="is listed twice"):
            _no_repeats(same, "sweep.grid.k", Path("p.yaml"))
    _no_repeats([1, 1.0, True, "1", None, [1]], "sweep.grid.k", Path("p.yaml"))


def test_run_from_outside_the_project_is_one_line_saying_what_to_do(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    # the project (params/ and notebooks/) is found from the current folder upward; from
    # elsewhere the study's notebook is not there: one line, exit 2, nothing written
    monkeypatch.delenv("EVALBENCH_HOME")
    monkeypatch.chdir(tmp_path)
    demo = ROOT / "params" / "sweep_demo.yaml"
    assert main(["run", str(demo), "-p", "sweep.seeds=[0]"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0
    assert err == (
        f"evalbench: {tmp_path}/notebooks/sweep.ipynb: no such notebook (the project, a "
        "folder with params/ and notebooks/, is found from the current folder upward); run "
        "from your evalbench checkout, or set EVALBENCH_HOME to it"
    )
    assert not any((get_settings().outputs_dir).glob("*/*"))


@pytest.mark.parametrize(
    ("override", "message"),
    [("systems.0.sim.accuracy.1=0.3",
      "-p systems.0.sim.accuracy.1: the sweep sets it in every cell (sweep.grid); change the "
      "sweep instead (-p 'sweep.grid.systems.0.sim.accuracy.1=[...]')"),
     ("seed=1", "-p seed: the sweep sets it in every cell (sweep.seeds, by sweep.seed_keys)")],
)  # fmt: skip
def test_an_override_of_what_the_sweep_sets_is_refused(tmp_path: Path, override, message) -> None:
    # Before: ignored without a word: a new sweep folder (the override is in its params),
    # the same cells with the grid's values, and history showed a configuration never run
    system = {"name": "s", "provider": "sim", "sim": {"accuracy": {"1": 0.9, "default": 0.5}}}
    path = sweep_file(tmp_path, {"grid": {"systems.0.sim.accuracy.1": [0.85, 0.6]},
                                 "seeds": [0, 1]}, systems=[system])  # fmt: skip
    with pytest.raises(ParamsError) as caught:
        load_params(path, [override])
    assert str(caught.value).startswith(f"{path}: {message}")
    # any other key may be set (the cells set the swept ones on top of it)
    assert load_params(path, ["systems.0.sim.strength=1.0", "tag=x"]).study == "sweep"


def test_an_override_inside_a_swept_value_is_refused(tmp_path: Path) -> None:
    tables = [{"1": 0.9, "default": 0.5}, {"1": 0.6, "default": 0.5}]
    system = {"name": "s", "provider": "sim", "sim": {"accuracy": dict(tables[0])}}
    path = sweep_file(tmp_path, {"grid": {"systems.0.sim.accuracy": tables}}, systems=[system])
    with pytest.raises(ParamsError) as caught:
        load_params(path, ["systems.0.sim.accuracy.1=0.3"])
    assert str(caught.value) == (
        f"{path}: -p systems.0.sim.accuracy.1: the sweep sets systems.0.sim.accuracy in every "
        "cell (sweep.grid); change the sweep instead (-p 'sweep.grid.systems.0.sim.accuracy=[...]')"
    )
