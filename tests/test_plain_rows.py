"""records.plain_rows / none_for_missing: a missing value is None, whatever the column type."""

from __future__ import annotations

import math

import pandas as pd

from evalbench.records import none_for_missing, plain_rows


def frame() -> pd.DataFrame:
    # pandas 3: "text" is a str column with NaN for the missing one, "n" int64, "x" float64
    return pd.DataFrame([{"text": "a", "n": 1, "x": 0.5}, {"n": 2}])


def test_plain_rows_gives_none_for_every_missing_value_and_plain_numbers():
    rows = plain_rows(frame())
    assert rows == [{"text": "a", "n": 1, "x": 0.5}, {"text": None, "n": 2, "x": None}]
    assert [type(v) for v in rows[0].values()] == [str, int, float]  # not numpy scalars


def test_none_for_missing_changes_only_the_columns_named():
    given = frame()
    out = none_for_missing(given, ["text"])
    assert out["text"].tolist() == ["a", None]
    assert math.isnan(out["x"].iloc[1]) and out["x"].dtype == "float64"  # a number stays NaN
    assert isinstance(given["text"].iloc[1], float)  # the input frame is not changed (NaN)
