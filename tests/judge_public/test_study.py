"""The public study: its params, and a run on the real files (mirror) as the notebook runs it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from evalbench.judge_public import study
from evalbench.params import ParamsError
from evalbench.studies import get_study, load_params

ROOT = Path(__file__).resolve().parents[2]
PUBLIC = ROOT / "params" / "judge_public.yaml"


def _params_file(tmp_path: Path, **changes: object) -> Path:
    data = yaml.safe_load(PUBLIC.read_text())
    data.update(changes)
    path = tmp_path / "public.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_public_params_ask_no_model() -> None:
    public = load_params(PUBLIC)
    assert isinstance(public, study.JudgePublicParams)
    assert public.model_specs() == [] and not public.simulated
    assert get_study("judge_public") is study.STUDY
    assert study.STUDY.notebook == "judge_public.ipynb" and study.STUDY.records == {}


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"sections": ["prd", "prd"]}, "sections: must be a non-empty list without repeats"),
        ({"sections": []}, "sections: must be a non-empty list"),
        ({"prd_reviewers": ["gpt5"]}, "prd_reviewers"),
        ({"pandalm_garbage": "zero"}, "pandalm_garbage"),
    ],
)
def test_params_errors_name_the_field(tmp_path: Path, changes: dict, message: str) -> None:
    with pytest.raises(ParamsError, match=message):
        load_params(_params_file(tmp_path, **changes))


@pytest.mark.mirror
def test_run_one_section_and_finish(tmp_path: Path, mirror: Path) -> None:
    from evalbench.studies import open_run

    run = open_run(_params_file(tmp_path, sections=["mtbench"], bootstrap_rounds=50))
    result = study.run(run)
    assert result.prd is None and result.pandalm is None and result.mtbench is not None
    assert result.usage.empty and result.simulated == frozenset()
    assert result.sources["data"].str.startswith("MT-Bench").all()
    assert study.counts(result) == {"mtbench_regrades": 159}  # 160 regrades, 1 unscored
    run.finish(result)
    manifest = json.loads((run.dir / "manifest.json").read_text())
    # 46 of 73 scored pairs give the same verdict in both orders
    assert manifest["headlines"] == {"MT-Bench GPT-4 position consistency": 46 / 73}
    assert not (run.dir / "records").exists() or not any((run.dir / "records").iterdir())


def test_the_package_exports_what_its_docstring_lists():
    import re

    import evalbench.judge_public as package

    assert sorted(package.__all__) == [
        "JudgePublicParams",
        "JudgePublicResult",
        "load_mtbench_pairs",
        "load_mtbench_single",
        "load_pandalm",
        "load_prd",
        "run",
    ]
    doc = str(package.__doc__)
    assert all(
        re.search(rf"\b{name}\b", doc) and hasattr(package, name) for name in package.__all__
    )
