"""Fixtures shared by the inspect_ai log tests."""

from __future__ import annotations

import pytest

EXTRA = "needs the optional extra `importers` (pip install 'evalbench[importers]'; .ci/run does)"


@pytest.fixture
def inspect_ai(tmp_path, monkeypatch):
    """inspect_ai, kept out of the user's home (its data/cache folders under tmp_path)."""
    module = pytest.importorskip("inspect_ai", reason=EXTRA)
    for name in ("XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    monkeypatch.setenv("INSPECT_LOG_DIR", str(tmp_path / "logs"))
    return module


@pytest.fixture
def hand_log(inspect_ai):
    """``hand_log(path, {sample id: score value})`` -> a one-scorer log (``.eval`` or
    ``.json`` by the suffix) written by inspect's own writer (``write_eval_log``)."""
    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalLog,
        EvalSample,
        EvalSpec,
        EvalStats,
        write_eval_log,
    )
    from inspect_ai.scorer import Score

    def write(path, values):
        samples = [EvalSample(id=sid, epoch=1, input="?", target="x",
                              scores={"grade": Score(value=v)}) for sid, v in values.items()]  # fmt: skip
        log = EvalLog(
            status="success",
            eval=EvalSpec(created="2026-01-01T00:00:00+00:00", task="hand", model="openai/gpt-x",
                          dataset=EvalDataset(name="hand", samples=len(values),
                                              sample_ids=list(values)),
                          config=EvalConfig(epochs=1)),
            stats=EvalStats(started_at="2026-01-01T00:00:00+00:00"),
            samples=samples,
        )  # fmt: skip
        write_eval_log(log, str(path))
        return path

    return write
