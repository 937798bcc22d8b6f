"""Ratings from published data: PRD human votes, Arena-Hard PR #44 battles, AlpacaEval 2.

PRD Vicuna-80 human votes and Arena-Hard PR #44 battles -> Bradley–Terry ratings with
bootstrap intervals, online Elo, win-rate matrices and rank distributions
(:func:`evalbench.ratings.rate_battles`); AlpacaEval 2 -> win rates equal to the
leaderboard's, answer lengths, P(prefer longer) and star ratings
(:func:`alpaca_eval_study`). No model is asked. Notebook: ``arena_public.ipynb``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from evalbench.measured import Measured
from evalbench.params import StudyParams
from evalbench.ratings import by_dataset, rate_battles, ratings_table
from evalbench.runs import Run
from evalbench.stats import DEFAULT_LEVEL, DEFAULT_ROUNDS
from evalbench.studies import Study
from evalbench.tiers import apply_tier

from . import report
from .data import AlpacaInputs, load_alpaca_inputs, public_battles, public_license
from .metrics import AlpacaStudy, alpaca_eval_summary
from .records import ArenaPublicParams, ArenaPublicResult, PublicBattle, PublicRating, RatedDataset


def is_tiered(params: StudyParams | None) -> bool:
    """Whether ``tier`` / ``sample`` asks for a subsample (never without params)."""
    return params is not None and (params.tier != "full" or params.sample is not None)


def tiered_battles(battles: pd.DataFrame, params: StudyParams) -> pd.DataFrame:
    """The battles on the (question, model pair) items the tier keeps, strata by model pair
    (:func:`evalbench.tiers.apply_tier`: seeded by ``sample_seed``, nested)."""
    if not is_tiered(params):
        return battles
    pairs = [tuple(sorted(p)) for p in zip(battles["model_a"], battles["model_b"], strict=True)]
    keys = [(str(q), p) for q, p in zip(battles["question_id"], pairs, strict=True)]
    kept = apply_tier(
        sorted(set(keys)), params, item_id=lambda k: k[0], stratum=lambda k: "|".join(k[1])
    )
    wanted = set(kept)
    return battles[[k in wanted for k in keys]]


def tiered_alpaca(inputs: AlpacaInputs, params: StudyParams | None) -> AlpacaInputs:
    """AlpacaEval inputs on the instructions the tier keeps (strata: AlpacaEval's source
    ``dataset``), the same instructions for every model."""
    if not is_tiered(params):
        return inputs
    first = next(iter(inputs.annotations.values()))
    units = sorted(set(zip(first["instruction"], first["dataset"], strict=True)))
    kept = {i for i, _ in apply_tier(units, params, item_id=lambda u: u[0], stratum=lambda u: u[1])}
    return inputs._replace(
        annotations={m: a[a["instruction"].isin(kept)] for m, a in inputs.annotations.items()},
        lengths={m: x[x.index.isin(kept)] for m, x in inputs.lengths.items()},
        baseline_lengths=inputs.baseline_lengths[inputs.baseline_lengths.index.isin(kept)],
    )


def alpaca_eval_study(
    models: Sequence[str],
    *,
    baseline: str = "gpt4_1106_preview",
    rng: np.random.Generator,
    rounds: int = DEFAULT_ROUNDS,
    level: float = DEFAULT_LEVEL,
    anchor_rating: float = 1000.0,
    tier: StudyParams | None = None,
) -> AlpacaStudy:
    """Win rates, lengths, P(prefer longer) and ratings of AlpacaEval 2 models.

    Reads the registered files (:func:`~evalbench.arena_public.data.load_alpaca_inputs`),
    keeps the instructions of ``tier`` (params with ``tier`` / ``sample``; all when None)
    and summarizes them (:func:`~evalbench.arena_public.metrics.alpaca_eval_summary`).
    """
    inputs = tiered_alpaca(load_alpaca_inputs(models, baseline), tier)
    return alpaca_eval_summary(
        inputs, models, baseline=baseline, rng=rng, rounds=rounds, level=level,
        anchor_rating=anchor_rating,
    )  # fmt: skip


def run(run: Run[ArenaPublicParams]) -> ArenaPublicResult:
    """Rate every public dataset in ``public``; writes ``battles`` and ``ratings`` records."""
    p = run.params
    rated: dict[str, RatedDataset] = {}
    for name in [n for n in p.public if n != "alpaca_eval"]:
        with run.timed("load"):
            published = public_battles(name)
        battles = tiered_battles(published, p)
        rated[name] = RatedDataset(battles, rate_battles(
            battles, rng=run.rng(name), rounds=p.bootstrap_rounds, level=p.confidence_level,
            anchor_rating=p.anchor_rating, elo_k=p.elo_k,
        ))  # fmt: skip
    alpaca, alpaca_ratings = None, None
    if "alpaca_eval" in p.public:
        alpaca = alpaca_eval_study(
            p.alpaca_models, baseline=p.alpaca_baseline, rng=run.rng("alpaca_eval"),
            rounds=p.bootstrap_rounds, level=p.confidence_level, anchor_rating=p.anchor_rating,
            tier=p,
        )  # fmt: skip
        alpaca_ratings = ratings_table(alpaca.boot, level=p.confidence_level)
    licenses: dict[str, str] = {name: public_license(name) for name in p.public}
    result = ArenaPublicResult(p, rated, alpaca, alpaca_ratings, licenses, run.recorded_usage(),
                          run.simulated_names)  # fmt: skip
    _write_records(run, result)
    return result


def _write_records(run: Run[ArenaPublicParams], result: ArenaPublicResult) -> None:
    battles = {name: r.battles for name, r in result.rated.items()}
    tables = {name: r.ratings.table for name, r in result.rated.items()}
    if result.alpaca is not None and result.alpaca_ratings is not None:
        battles["alpaca_eval"], tables["alpaca_eval"] = result.alpaca.battles, result.alpaca_ratings
    run.write_records("battles", by_dataset(battles))
    run.write_records("ratings", by_dataset(tables))


def counts(result: ArenaPublicResult) -> dict[str, int]:
    """Battles per rated dataset and the number of AlpacaEval models."""
    out = {f"battles_{name}": len(r.battles) for name, r in result.rated.items()}
    if result.alpaca is not None:
        out["alpaca_models"] = len(result.alpaca.table)
    return out


def measured(result: ArenaPublicResult) -> list[Measured]:
    """Per published dataset: the battles read (and AlpacaEval's models); published
    verdicts have no failed call, an empty dataset measures nothing."""
    out = [Measured(name, len(r.battles), len(r.battles), unit="battle")
           for name, r in result.rated.items()]  # fmt: skip
    if result.alpaca is not None:
        n = len(result.alpaca.table)
        out.append(Measured("AlpacaEval", n, n, unit="model"))
    return out


STUDY = Study(
    kind="arena_public",
    params=ArenaPublicParams,
    run=run,
    notebook="arena_public.ipynb",
    records={"battles": PublicBattle, "ratings": PublicRating},
    headlines=report.headlines,
    findings=report.findings,
    counts=counts,
    measured=measured,
)
