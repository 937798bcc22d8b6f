"""A ``sweep:`` block -> cells: expansion order, overrides, baseline, and every mistake as one
line naming it, before anything runs (load_params and ``evalbench run``: exit 2)."""

from __future__ import annotations

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


def sweep_file(tmp_path: Path, sweep: dict, name: str = "sw", **extra) -> Path:
    """A GAIA demo params file with ``sweep``."""
    data = {"study": "gaia", "title": "t", "dataset": "demo", "systems": [dict(SIM)],
            "sweep": sweep, **extra}  # fmt: skip
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
        ({"grid": {"seed": [1, 2]}}, "sweep.grid.seed: also in sweep.seed_keys"),
        ({"grid": {"attempts": [1, 1]}}, "sweep.grid.attempts: 1 is listed twice"),
        ({"grid": {"attempts": [1, 2]}, "baseline": {"attempts": 3}},
         'sweep.baseline: {"attempts": 3} is no configuration'),
        ({"grid": {"attempts": [1]}, "baseline": {"seed": 3}}, "sweep.baseline.seed: not a swept key"),
        ({"grid": {"attempts": 2}}, "sweep.grid.attempts: Input should be a valid list"),
        ({"grid": {"attempts": [1]}, "seeds": []}, "sweep.seeds: List should have at least 1 item"),
        ({"grid": {"attempts": [1]}, "gird": {}}, "sweep.gird: unknown key"),
        ({"grid": {"max_error_rate": [0.0, 0.0001]}, "seeds": [1, 1]}, "sweep.seeds: 1 is listed twice"),
    ],
)  # fmt: skip
def test_a_bad_sweep_is_one_line_naming_it(tmp_path: Path, sweep: dict, expected: str) -> None:
    assert expected in refused(sweep_file(tmp_path, sweep))


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
