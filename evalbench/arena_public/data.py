"""The published data the study rates: PRD human votes, Arena-Hard PR #44, AlpacaEval 2.

Each public dataset (:data:`PUBLIC_DATASETS`) names the paper, the pinned files and what
its battles are; :func:`public_battles` reads one as battles (the I/O edge: the readers
themselves live in :mod:`evalbench.published`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import pandas as pd

from evalbench import sources
from evalbench.published.alpaca_eval import (
    answer_lengths,
    load_alpaca_eval_annotations,
    load_alpaca_eval_leaderboard,
    load_alpaca_eval_outputs,
)
from evalbench.published.arena_hard import load_fastchat_battles
from evalbench.published.prd import PRD_SCORE, load_prd_answers, load_prd_ratings
from evalbench.ratings import ArenaError, fail_first_row, require_columns, validate_battles


class PublicDataset(NamedTuple):
    """A public source of battles, with what a report must cite."""

    title: str
    reference: str
    """The paper."""
    data: str
    """Repository and pinned commit of the files."""
    sources: tuple[str, ...]
    """Prefixes of the registered source names it reads."""
    note: str
    """What the battles are."""
    answers: str
    """Where the compared answers come from, or why there are none (style control needs
    both answers of a battle)."""


PUBLIC_DATASETS: dict[str, PublicDataset] = {
    "prd_human": PublicDataset(
        title="PRD Vicuna-80: human pairwise votes",
        reference="Li, Patel & Du (2023), PRD: Peer Rank and Discussion Improve Large "
        "Language Model based Evaluations, arXiv:2307.02762",
        data="github.com/bcdnlp/PRD @ 35fb99e5 (data/vicuna80/ratings-human)",
        sources=("prd/ratings/human/",),
        note="7,040 MTurk votes on answers of 9 models to the 80 Vicuna questions (3 raters "
        "per pair and question); the answer shown first is model A; score 3 = tie.",
        answers="PRD publishes the Vicuna-80 answers of five of the nine models (bard, claude, "
        "gpt35, gpt4, vicuna-13b; data/vicuna80/generations), not those of the four Guanaco "
        "models, so style control covers the votes between those five.",
    ),
    "arena_hard_pr44": PublicDataset(
        title="Arena-Hard PR #44: LLM-judge battles",
        reference="Li et al. (2024), From Crowdsourced Data to High-Quality Benchmarks: "
        "Arena-Hard and BenchBuilder Pipeline, arXiv:2406.11939",
        data="github.com/lmarena/arena-hard-auto @ 57a9881c (refs/pull/44, unmerged; "
        "data/arena_hard_battles.jsonl)",
        sources=("arena_hard/pr44_battles",),
        note="1,348 battles of three models against the baseline claude-3-haiku-20240307 on "
        "100 questions, as produced by Arena-Hard's get_battles_from_judgment (both "
        "presentation orders, strong verdicts already repeated 3 times); the judge is not "
        "documented in the PR.",
        answers="No style control: the battle file carries no answers, answer lengths or "
        "markdown counts, and no Arena-Hard model answer file of these four models (where "
        "Arena-Hard's own style control reads token_len and the markdown counts) is in the "
        "data mirror.",
    ),
    "alpaca_eval": PublicDataset(
        title="AlpacaEval 2: win rates against GPT-4 Turbo",
        reference="Dubois et al. (2024), Length-Controlled AlpacaEval: A Simple Way to "
        "Debias Automatic Evaluators, arXiv:2404.04475; Li et al. (2023), AlpacaEval",
        data="github.com/tatsu-lab/alpaca_eval @ cd543a14 (results/<model>/"
        "weighted_alpaca_eval_gpt4_turbo, model_outputs.json, the AlpacaEval 2 leaderboard)",
        sources=(
            "alpaca_eval/annotations/",
            "alpaca_eval/model_outputs/",
            "alpaca_eval/leaderboard",
        ),
        note="805 instructions; the weighted GPT-4 Turbo annotator's preference in [1, 2] for "
        "each model's answer over gpt4_1106_preview's.",
        answers="Every annotation carries both answers (output_1, the baseline's; output_2, "
        "the model's).",
    ),
}
"""The public datasets the ``arena_public`` study can rate (``public:`` in params)."""


def public_license(name: str) -> str:
    """The licenses of the registered files a public dataset reads (from ``sources.tsv``)."""
    info = PUBLIC_DATASETS[name]
    texts = [sources.get(n).license for p in info.sources for n in sources.names(p)]
    parts = [part.strip() for text in texts for part in text.split(";") if part.strip()]
    return "; ".join(dict.fromkeys(parts)) or "unknown (no registered file)"


def public_battles(name: str) -> pd.DataFrame:
    """The battles of a public dataset (``prd_human`` or ``arena_hard_pr44``), in file order.

    Raises:
        ArenaError: an unknown name (AlpacaEval has its own :func:`alpaca_eval_study`).
        evalbench.sources.DataUnavailable: a file is neither in the mirror nor downloadable.
    """
    if name == "prd_human":
        return battles_from_prd_votes(load_prd_votes("human"))
    if name == "arena_hard_pr44":
        return load_fastchat_battles("arena_hard/pr44_battles")
    raise ArenaError(f"public_battles: unknown dataset {name!r} (prd_human, arena_hard_pr44)")


def public_answers(name: str) -> pd.DataFrame | None:
    """The published answers a dataset's battles compare (``model, question_id, text``), or
    ``None`` when they are not published (``arena_hard_pr44``; AlpacaEval's are in its
    annotations)."""
    if name == "prd_human":
        return load_prd_answers()
    if name in PUBLIC_DATASETS:
        return None
    raise ArenaError(f"public_answers: unknown dataset {name!r}")


def battles_from_prd_votes(votes: pd.DataFrame, *, source: str = "PRD votes") -> pd.DataFrame:
    """Battles from PRD Vicuna-80 votes (``question_id, model_1, model_2, score``).

    ``model_1`` was shown first and becomes ``model_a``; ``score`` 1 -> a, 2 -> b, 3 -> tie
    (:data:`evalbench.published.prd.PRD_SCORE`).
    """
    require_columns(votes, ["question_id", "model_1", "model_2", "score"], source)
    known = votes["score"].isin(list(PRD_SCORE))
    fail_first_row(votes, ~known, source, lambda r: f"score {r['score']!r} not in 1, 2, 3")
    out = pd.DataFrame(
        {
            "model_a": votes["model_1"],
            "model_b": votes["model_2"],
            "winner": votes["score"].map(PRD_SCORE),
            "question_id": votes["question_id"],
        }
    )
    return validate_battles(out, source=source)


def load_prd_votes(reviewer: str = "human") -> pd.DataFrame:
    """All registered PRD Vicuna-80 votes of one reviewer, in registry (file-name) order:
    ``question_id, model_1`` (shown first), ``model_2, rating_seq`` (the vote's position among
    the question's votes) and ``score`` (:func:`evalbench.published.prd.load_prd_ratings`;
    ValueError without a registered file or on a malformed vote)."""
    ratings = load_prd_ratings(reviewer).rename(
        columns={"first": "model_1", "second": "model_2", "rater": "rating_seq"}
    )
    return ratings[["question_id", "model_1", "model_2", "rating_seq", "score"]]


class AlpacaInputs(NamedTuple):
    """The AlpacaEval 2 files one study reads."""

    leaderboard: pd.DataFrame
    """The official leaderboard, by model."""
    baseline_lengths: pd.Series
    """Answer lengths (characters) of the baseline's outputs, by instruction."""
    annotations: dict[str, pd.DataFrame]
    """Each model's annotations against the baseline."""
    lengths: dict[str, pd.Series]
    """Each model's answer lengths, by instruction."""


def load_alpaca_inputs(models: Sequence[str], baseline: str) -> AlpacaInputs:
    """The leaderboard, and the annotations and answer lengths of ``models`` and ``baseline``."""
    return AlpacaInputs(
        leaderboard=load_alpaca_eval_leaderboard(),
        baseline_lengths=answer_lengths(load_alpaca_eval_outputs(baseline)),
        annotations={m: load_alpaca_eval_annotations(m) for m in models},
        lengths={m: answer_lengths(load_alpaca_eval_outputs(m)) for m in models},
    )
