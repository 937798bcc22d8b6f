"""Fixtures of the BFCL tests."""

from __future__ import annotations

import os

import pytest

from evalbench import bfcl
from evalbench.bfcl.schema import Item


@pytest.fixture(scope="session")
def public_items() -> list[Item]:
    """All eleven categories from the pinned files, parsed once for the session."""
    if not os.environ.get("EVALBENCH_DATA_MIRROR"):
        pytest.skip("needs the public-data mirror: set EVALBENCH_DATA_MIRROR (.ci/run does)")
    return bfcl.load("python")  # type: ignore[return-value]  # Python items only
