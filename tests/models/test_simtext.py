"""evalbench.models.simtext.near_text: the near-miss answer browse_suite's and browsecomp's
simulators share (one copy in core; the demo numbers depend on its exact draws)."""

from __future__ import annotations

import numpy as np

from evalbench.models.simtext import near_text


class _Draws:
    """A stand-in rng that returns the given draws in order (random() and integers())."""

    def __init__(self, *draws: float) -> None:
        self.draws = list(draws)

    def random(self) -> float:
        return self.draws.pop(0)

    def integers(self, low: int, high: int | None = None) -> int:
        value = int(self.draws.pop(0))
        assert (0 if high is None else low) <= value < (low if high is None else high)
        return value


def test_a_word_left_out_when_the_coin_says_so() -> None:
    # 0.2 < 0.5: drop word index 1 of three
    assert near_text("Spirit Level Sunday", _Draws(0.2, 1)) == "Spirit Sunday"


def test_else_two_neighbouring_letters_swapped() -> None:
    # 0.7 >= 0.5: letters 1 and 2 swapped ("p", "i"), i drawn in [1, len - 2)
    assert near_text("Spirit Level", _Draws(0.7, 1)) == "Siprit Level"
    assert near_text("Kestrel", _Draws(1)) == "Ksetrel"  # one word: no coin drawn


def test_a_short_answer_gets_an_s() -> None:
    assert near_text("Ox", _Draws()) == "Oxs"


def test_seeded_draws_are_reproducible_and_near() -> None:
    a = near_text("Hillcrest Road", np.random.default_rng(3))
    assert a == near_text("Hillcrest Road", np.random.default_rng(3)) != "Hillcrest Road"
    assert sorted(a.replace(" ", "")) == sorted("HillcrestRoad") or a in {"Hillcrest", "Road"}
