"""Tiers: seeded, stratified, nested subsamples of a study's items.

``tier: quick | standard | full`` (or ``sample: N``) in params picks a subsample whose
results stay comparable across tiers and runs:

- every item gets a fixed pseudo-random rank from ``sha256(sample_seed, stratum, item id)``
  (not the study seed: two runs with different seeds study the same items);
- each stratum (level, category, test category ...) keeps its lowest-ranked
  ``ceil(fraction × size)`` items, so a larger fraction keeps a superset:
  quick ⊂ standard ⊂ full, and each stratum keeps its share (at least one item).

:func:`expected_half_width` states how precise an accuracy is at that size,
:func:`subset_label` how reports name the subsample and :func:`size_sentence` both in one
sentence.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Hashable, Sequence
from typing import Literal, TypeVar

from scipy.special import ndtri

T = TypeVar("T")
Tier = Literal["quick", "standard", "full"]
TIER_FRACTIONS: dict[str, float] = {"quick": 0.1, "standard": 0.3, "full": 1.0}
"""Share of every stratum each tier keeps."""


def rank_key(item_id: str, stratum: Hashable, seed: int = 0) -> str:
    """The item's fixed position in its stratum's sampling order (a hex digest)."""
    return hashlib.sha256(f"{seed}\x1f{stratum}\x1f{item_id}".encode()).hexdigest()


def fraction_for(tier: Tier = "full", sample: int | None = None, total: int = 0) -> float:
    """The share of each stratum to keep: the tier's, or ``sample / total`` (at most 1)."""
    if sample is not None:
        return min(1.0, sample / total) if total else 1.0
    return TIER_FRACTIONS[tier]


def subsample(
    items: Sequence[T],
    *,
    item_id: Callable[[T], str],
    stratum: Callable[[T], Hashable],
    fraction: float,
    seed: int = 0,
) -> list[T]:
    """The items a tier keeps, in their original order.

    Args:
        items: every item of the study (after its own filters).
        item_id: a stable id per item (unique within its stratum).
        stratum: the item's stratum (level, category ...).
        fraction: share of each stratum to keep, in (0, 1]; each keeps ``ceil(f × n)``.
        seed: the sampling seed (``sample_seed`` in params).
    """
    if not 0 < fraction <= 1:
        raise ValueError(f"fraction must be in (0, 1], got {fraction}")
    groups: dict[Hashable, list[int]] = {}
    for index, item in enumerate(items):
        groups.setdefault(stratum(item), []).append(index)
    keep: set[int] = set()
    for key, group in groups.items():
        ordered = sorted(group, key=lambda i: rank_key(item_id(items[i]), key, seed))
        keep.update(ordered[: math.ceil(fraction * len(group))])
    return [item for index, item in enumerate(items) if index in keep]


def subset_label(tier: str, sample: int | None) -> str:
    """How reports name a study's items: ``sample of about N`` (each stratum rounds its
    share up) or ``tier quick|standard|full``."""
    return f"sample of about {sample}" if sample is not None else f"tier {tier}"


def expected_half_width(n: int, level: float = 0.95, p: float = 0.5) -> float:
    """Half-width of a normal-approximation interval of an accuracy near ``p`` at ``n`` items
    (``p = 0.5`` is the widest): ``z * sqrt(p (1 - p) / n)``; ``nan`` for ``n = 0``."""
    if n <= 0:
        return math.nan
    z = float(ndtri(0.5 + level / 2))
    return z * math.sqrt(p * (1 - p) / n)


def size_sentence(
    n: int,
    unit: str,
    params: object,
    *,
    quantity: str = "a share",
    detail: str = "",
    caveat: str = "",
) -> str:
    """What a study's size resolves, in plain text (reports escape it), e.g. ``"40 prompts
    (tier quick). At this size a share near 50% is known to about ±15.5% (95%, normal
    approximation)."``

    Args:
        n: items studied; unit: what they are (``"prompts"``).
        params: the study's params (``tier``, ``sample``, ``confidence_level``).
        quantity: what is near 50% (``"a win rate between two systems"``).
        detail: added inside the parentheses after the subset label.
        caveat: added inside the last parentheses.
    """
    level = float(getattr(params, "confidence_level", 0.95))
    how = subset_label(getattr(params, "tier", "full"), getattr(params, "sample", None))
    return (
        f"{n} {unit} ({how}{detail}). At this size {quantity} near 50% is known to about "
        f"±{expected_half_width(n, level):.1%} ({level:.0%}, normal approximation{caveat})."
    )  # fmt: skip


def apply_tier(
    items: Sequence[T],
    params: object,
    *,
    item_id: Callable[[T], str],
    stratum: Callable[[T], Hashable],
) -> list[T]:
    """``items`` subsampled by the study's ``tier`` / ``sample`` / ``sample_seed`` params
    (every item when the tier is ``full`` and no ``sample`` is set)."""
    tier: Tier = getattr(params, "tier", "full")
    sample = getattr(params, "sample", None)
    fraction = fraction_for(tier, sample, len(items))
    if fraction >= 1:
        return list(items)
    seed = getattr(params, "sample_seed", 0)
    return subsample(items, item_id=item_id, stratum=stratum, fraction=fraction, seed=seed)
