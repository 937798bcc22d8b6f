"""Text helpers of the offline simulators: plausible wrong answers that benchmarks share."""

from __future__ import annotations

import numpy as np


def near_text(text: str, rng: np.random.Generator) -> str:
    """A near miss of a Latin-script answer: one word left out (of several, half the time),
    else two neighbouring letters swapped (``"Kestrel"`` -> ``"Ksetrel"``), else an ``s``
    added to a text of up to 3 characters."""
    words = text.split()
    if len(words) > 1 and rng.random() < 0.5:
        del words[int(rng.integers(len(words)))]
        return " ".join(words)
    if len(text) > 3:
        i = int(rng.integers(1, len(text) - 2))
        return text[:i] + text[i + 1] + text[i] + text[i + 2 :]
    return text + "s"
