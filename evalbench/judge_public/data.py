"""The judge_public study's files: PRD, PandaLM and MT-Bench, and where they come from.

The readers live in :mod:`evalbench.published` (shared with the other studies that read the
same files); this module gathers what one study run needs and lists the sources (repository,
commit, license) for the report.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal, NamedTuple

import pandas as pd

from evalbench import sources
from evalbench.published.mtbench import load_mtbench_pairs, load_mtbench_single
from evalbench.published.pandalm import load_pandalm
from evalbench.published.prd import load_prd_lengths, load_prd_ratings

Section = Literal["prd", "pandalm", "mtbench"]
SECTIONS: tuple[Section, ...] = ("prd", "pandalm", "mtbench")
"""The public data sets, in the order the study reads and shows them."""

_RAW_URL = re.compile(r"^https://raw\.githubusercontent\.com/([^/]+/[^/]+)/([0-9a-f]{40})/")
_SOURCE_GROUPS: dict[str, dict[str, str]] = {
    "prd": {
        "PRD Vicuna-80 ratings (human + LLM reviewers)": "prd/ratings/",
        "PRD Vicuna-80 answers": "prd/generations/",
    },
    "pandalm": {"PandaLM test set and judge verdicts": "pandalm/"},
    "mtbench": {
        "MT-Bench GPT-4 single grades": "mtbench/judgment/gpt-4_single",
        "MT-Bench GPT-4 pair judgments": "mtbench/judgment/gpt-4_pair",
        "MT-Bench questions": "mtbench/question",
    },
}

__all__ = [
    "SECTIONS", "PrdFiles", "Section", "load_mtbench_pairs", "load_mtbench_single",
    "load_pandalm", "load_prd", "public_sources",
]  # fmt: skip


def public_sources(sections: Sequence[str]) -> pd.DataFrame:
    """Where the public sections' files come from: repository, commit, license, file count."""
    rows = []
    for section in sections:
        for label, prefix in _SOURCE_GROUPS[section].items():
            found = [sources.get(n) for n in sources.names(prefix)]
            repos = sorted({_repo_commit(s.url) for s in found})
            rows.append(
                {
                    "data": label,
                    "files": len(found),
                    "repository @ commit": "; ".join(f"{r} @ {c}" for r, c in repos),
                    "license": "; ".join(sorted({s.license for s in found})),
                }
            )
    return pd.DataFrame(rows)


def _repo_commit(url: str) -> tuple[str, str]:
    match = _RAW_URL.match(url)
    return (match.group(1), match.group(2)) if match else (url, "?")


class PrdFiles(NamedTuple):
    """PRD's files as frames (readers in :mod:`evalbench.published.prd`)."""

    human: pd.DataFrame
    """Every MTurk vote (:func:`~evalbench.published.prd.load_prd_ratings` of ``human``)."""
    reviews: pd.DataFrame
    """Every verdict of the chosen LLM reviewers, both orders, every run."""
    lengths: pd.DataFrame
    """Answer lengths: ``model, question_id, chars``."""


def load_prd(reviewers: Sequence[str]) -> PrdFiles:
    """The human votes, the ``reviewers``' verdicts (in that order) and the answer lengths."""
    human = load_prd_ratings("human")
    reviews = pd.concat([load_prd_ratings(r) for r in reviewers], ignore_index=True)
    return PrdFiles(human, reviews, load_prd_lengths())
