"""Ratings from published data: PRD human votes, Arena-Hard PR #44 battles, AlpacaEval 2.

PRD Vicuna-80 human votes and Arena-Hard PR #44 battles -> Bradley–Terry ratings with
bootstrap intervals, online Elo, win-rate matrices and rank distributions
(:func:`evalbench.ratings.rate_battles`); AlpacaEval 2 -> win rates equal to the
leaderboard's, answer lengths, P(prefer longer) and star ratings
(:func:`alpaca_eval_study`). Where the compared answers are published (PRD's five answered
models, every AlpacaEval annotation) style-controlled ratings beside the raw ones
(:func:`public_style_control`, :func:`alpaca_style_control`); AlpacaEval's length-controlled win
rates beside the leaderboard's. No model is asked. Notebook: ``arena_public.ipynb``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from evalbench.measured import Measured
from evalbench.params import StudyParams
from evalbench.ratings import ArenaError, by_dataset, fit_bt, rate_battles, ratings_table
from evalbench.ratings_style import (
    STYLE_COLUMNS,
    answer_style_counts,
    battles_with_style,
    style_control,
)
from evalbench.records import StyleCoefficient
from evalbench.runs import Run
from evalbench.stats import DEFAULT_LEVEL, DEFAULT_ROUNDS
from evalbench.studies import Study
from evalbench.tiers import apply_tier, subset_label

from . import metrics, report
from .data import (
    PUBLIC_DATASETS,
    AlpacaInputs,
    load_alpaca_inputs,
    public_answers,
    public_battles,
    public_license,
)
from .metrics import (
    AlpacaStudy,
    alpaca_answers,
    alpaca_eval_summary,
    alpaca_length_controlled,
    answered_battles,
)
from .records import (
    ArenaPublicParams,
    ArenaPublicResult,
    PublicBattle,
    PublicRating,
    PublicStyle,
    PublicStyleRating,
    RatedDataset,
)


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
    """Rate every public dataset in ``public``, with style control where the answers are
    published and AlpacaEval's length-controlled win rates; writes ``battles``, ``ratings``,
    ``style_ratings`` and ``style_coefficients`` records."""
    p = run.params
    rated: dict[str, RatedDataset] = {
        name: rate_public(run, name) for name in p.public if name != "alpaca_eval"
    }
    alpaca = alpaca_ratings = alpaca_style = alpaca_lc = None
    if "alpaca_eval" in p.public:
        with run.timed("load"):
            inputs = tiered_alpaca(load_alpaca_inputs(p.alpaca_models, p.alpaca_baseline), p)
        alpaca = alpaca_eval_summary(
            inputs, p.alpaca_models, baseline=p.alpaca_baseline, rng=run.rng("alpaca_eval"),
            rounds=p.bootstrap_rounds, level=p.confidence_level, anchor_rating=p.anchor_rating,
        )  # fmt: skip
        alpaca_ratings = ratings_table(alpaca.boot, level=p.confidence_level)
        with run.timed("style control"):
            alpaca_style = alpaca_style_control(run, alpaca, inputs)
        with run.timed("length control"):
            alpaca_lc = alpaca_length_controlled(
                inputs.annotations, inputs.leaderboard, p.alpaca_baseline
            )
    licenses: dict[str, str] = {name: public_license(name) for name in p.public}
    result = ArenaPublicResult(p, rated, alpaca, alpaca_ratings, licenses, run.recorded_usage(),
                               run.simulated_names, alpaca_style, alpaca_lc)  # fmt: skip
    _write_records(run, result)
    return result


def rate_public(run: Run[ArenaPublicParams], name: str) -> RatedDataset:
    """One published battle set (the ``tier``'s part): ratings, and style control on the
    battles whose answers are published."""
    p = run.params
    with run.timed("load"):
        battles = tiered_battles(public_battles(name), p)
    try:
        rated = rate_battles(
            battles, rng=run.rng(name), rounds=p.bootstrap_rounds, level=p.confidence_level,
            anchor_rating=p.anchor_rating, elo_k=p.elo_k,
        )  # fmt: skip
    except ArenaError as exc:  # no MLE on a small subsample (every whole set has one)
        if exc.why == str(exc):  # not that: malformed battles
            raise
        raise ArenaError(_unratable(name, len(battles), exc.why, p)) from None
    with run.timed("style control"):
        style = public_style_control(run, name, battles)
    return RatedDataset(battles, rated, style)


def _unratable(name: str, n: int, why: str, p: ArenaPublicParams) -> str:
    """Why ``name``'s battles have no ratings, and what to do (this study has no ``prior``:
    published ratings are maximum-likelihood fits)."""
    kept = f" ({subset_label(p.tier, p.sample)})" if is_tiered(p) else ""
    return (
        f"{name}: its {n:,} battles{kept} cannot be rated: {why}; rate more battles (a larger "
        f"sample, or tier: standard or full), or leave {name} out of public"
    )


def public_style_control(
    run: Run[ArenaPublicParams], name: str, battles: pd.DataFrame
) -> PublicStyle:
    """Raw (refitted on the same battles) and style-controlled ratings of the battles whose
    two answers are published, mean-centred at ``anchor_rating``; why not, if none."""
    answers = public_answers(name)
    if answers is None:
        return PublicStyle(None, battles.iloc[:0], PUBLIC_DATASETS[name].answers)
    styled = answered_battles(battles, answers)
    p = run.params
    try:
        raw = fit_bt(styled, anchor_rating=p.anchor_rating, init_rating=p.anchor_rating)
        control = style_control(
            styled, raw, rng=run.rng(name, "style"), rounds=p.bootstrap_rounds,
            level=p.confidence_level, anchor_rating=p.anchor_rating,
        )  # fmt: skip
    except ArenaError as exc:
        why = f"No style control on the {len(styled):,} battles whose answers are published: {exc}"
        return PublicStyle(None, styled, why)
    return PublicStyle(control, styled, "")


def alpaca_style_control(
    run: Run[ArenaPublicParams], alpaca: AlpacaStudy, inputs: AlpacaInputs
) -> PublicStyle:
    """Style control of AlpacaEval's soft battles against the star ratings, the baseline at
    ``anchor_rating``; the two halves of one annotation are resampled together."""
    p = run.params
    styled = battles_with_style(
        alpaca.battles, answer_style_counts(alpaca_answers(inputs.annotations))
    )
    raw = pd.Series(alpaca.boot.ratings, index=alpaca.boot.models)
    control = style_control(
        styled, raw, rng=run.rng("alpaca_eval", "style"), rounds=p.bootstrap_rounds,
        level=p.confidence_level, anchor=p.alpaca_baseline, anchor_rating=p.anchor_rating,
        clusters=list(zip(styled["model_b"], styled["question_id"], strict=True)),
    )  # fmt: skip
    return PublicStyle(control, styled, "")


def _write_records(run: Run[ArenaPublicParams], result: ArenaPublicResult) -> None:
    battles = {name: _with_counts(r.battles, r.style) for name, r in result.rated.items()}
    tables = {name: r.ratings.table for name, r in result.rated.items()}
    styles = {name: r.style for name, r in result.rated.items()}
    if result.alpaca is not None and result.alpaca_ratings is not None:
        battles["alpaca_eval"] = _with_counts(result.alpaca.battles, result.alpaca_style)
        tables["alpaca_eval"] = _with_lc(result.alpaca_ratings, result.alpaca_lc)
        styles["alpaca_eval"] = result.alpaca_style
    run.write_records("battles", by_dataset(battles))
    run.write_records("ratings", by_dataset(tables))
    controls = {n: s.control for n, s in styles.items() if s is not None and s.control}
    run.write_records("style_ratings", by_dataset({n: metrics.style_records(c)
                                                   for n, c in controls.items()}))  # fmt: skip
    run.write_records("style_coefficients", by_dataset({n: c.coefficients
                                                        for n, c in controls.items()}))  # fmt: skip


def _with_counts(battles: pd.DataFrame, style: PublicStyle | None) -> pd.DataFrame:
    """The battles with both answers' style counts where they are known (NaN elsewhere)."""
    if style is None or style.battles.empty:
        return battles
    return battles.join(style.battles[STYLE_COLUMNS])


def _with_lc(ratings: pd.DataFrame, lc: pd.DataFrame | None) -> pd.DataFrame:
    if lc is None:
        return ratings
    columns = ["model", "win_rate", "lc_win_rate", "lc_standard_error", "leaderboard_lc_win_rate"]
    return ratings.merge(lc[columns], on="model", how="left")


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
    records={
        "battles": PublicBattle,
        "ratings": PublicRating,
        "style_ratings": PublicStyleRating,
        "style_coefficients": StyleCoefficient,
    },
    headlines=report.headlines,
    findings=report.findings,
    counts=counts,
    measured=measured,
)
