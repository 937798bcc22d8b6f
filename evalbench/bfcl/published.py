"""The published side of a BFCL study: leaderboard scores beside evalbench's, the official
score tables of result sets that name a leaderboard row, and where each system's outputs
come from (pure: params and verdicts in, frames out; published files read through
:mod:`.data`)."""

from __future__ import annotations

import shlex
from collections.abc import Collection

import pandas as pd

from evalbench.agents.types import SystemSpec

from .data import published_aggregates, published_row, published_scores, registered_source
from .leaderboard import comparison, leaderboard_tables, scores_from_verdicts
from .metrics import Summary, compare_with_published
from .records import BfclParams
from .schema import PYTHON


def published_extras(params: BfclParams, scored: Collection[str] = ()) -> pd.DataFrame | None:
    """Published scores of the categories the study does not score (those not studied, or
    without result files) for result sets with a ``leaderboard_model``, ready for
    ``summarize(extra_categories=...)`` so their overall matches the leaderboard's.

    Args:
        params: the study's params.
        scored: categories scored here (never filled in from the published table).
    """
    own = set(PYTHON) | set(scored)
    frames = []
    for rs in params.result_sets:
        if rs.leaderboard_model:
            scores = published_scores(rs.leaderboard_model)
            extra = scores[~scores["test_category"].isin(own) & scores["accuracy"].notna()]
            frames.append(extra.assign(system=rs.name))
    return pd.concat(frames, ignore_index=True) if frames else None


def leaderboard_comparison(summary: Summary, params: BfclParams) -> pd.DataFrame:
    """Our numbers beside the published ones, for result sets with a ``leaderboard_model``.

    Returns:
        Columns ``system, metric, ours, published, difference`` (fractions): every category
        we score, then the published aggregates (:data:`~.data.PUBLISHED_AGGREGATES`).
    """
    published = {}
    for rs in params.result_sets:
        if rs.leaderboard_model:
            scores = published_scores(rs.leaderboard_model).set_index("test_category")
            published[rs.name] = (scores["accuracy"], published_aggregates(rs.leaderboard_model))
    return compare_with_published(summary, published)


def official_tables(params: BfclParams, verdicts: pd.DataFrame) -> pd.DataFrame | None:
    """Each result set with a ``leaderboard_model``: every column of the official score
    tables computed from its verdicts beside the published row
    (:func:`~.leaderboard.comparison`); None when no result set names one."""
    frames = []
    for rs in params.result_sets:
        if rs.leaderboard_model:
            ours = leaderboard_tables(scores_from_verdicts(verdicts[verdicts["system"] == rs.name]))
            published = {t: published_row(t, rs.leaderboard_model) for t in ours}
            frames.append(comparison(ours, published).assign(system=rs.name))
    return pd.concat(frames, ignore_index=True) if frames else None


def result_set_sources(params: BfclParams) -> pd.DataFrame:
    """Where each result set comes from: the registered URL (commit) and licence, or folder."""
    rows = []
    for rs in params.result_sets:
        if rs.model is None:
            rows.append((rs.name, str(rs.folder), "local files", rs.decode_style))
        else:
            rows.append((rs.name, *registered_source(rs.model), rs.decode_style))
    return pd.DataFrame(rows, columns=["system", "source", "license", "decoder"])


def system_sources(params: BfclParams) -> pd.DataFrame:
    """Every system and where its outputs come from: result sets (:func:`result_set_sources`)
    and live systems (provider and model, and the mode they are asked in)."""
    sets = result_set_sources(params).assign(outputs="result files")
    live = pd.DataFrame(
        [(s.name, _provider(s), "—", params.mode_of(s.name), "asked live") for s in params.systems],
        columns=sets.columns,
    )
    parts = [part for part in (sets, live) if len(part)]
    frame = pd.concat(parts, ignore_index=True) if parts else sets
    frame = frame.rename(columns={"decoder": "decoder / mode"})
    return frame[["system", "outputs", "source", "license", "decoder / mode"]]


def _provider(spec: SystemSpec) -> str:
    if spec.provider == "python":
        return f"python agent: {spec.entrypoint}"
    if spec.provider == "command":
        return "command agent: " + shlex.join(spec.argv or [])
    if spec.provider == "agent":
        return f"reference agent over {spec.model}"
    return f"{spec.provider}: {spec.model}" if spec.model else f"{spec.provider} provider"
