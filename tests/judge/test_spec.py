"""JudgeModel: the one judge params model with ``structured`` (browse_suite's CriteriaJudge,
browsecomp's Grader and hle's HleJudge each declared the same field)."""

from __future__ import annotations

import pydantic
import pytest

from evalbench.judge import JudgeModel
from evalbench.models import ModelSpec


class _OneFieldCopy(ModelSpec):
    """What each benchmark declared before (the oracle for the params dump)."""

    structured: bool = False


def test_structured_defaults_off_and_dumps_as_the_copies_did() -> None:
    judge = JudgeModel(name="j", provider="sim")
    assert judge.structured is False
    # the same dump, so params hashes (and run ids) of existing studies do not change
    assert judge.model_dump() == _OneFieldCopy(name="j", provider="sim").model_dump()
    on = {"name": "j", "provider": "sim", "structured": True}
    assert (
        JudgeModel.model_validate(on).model_dump() == _OneFieldCopy.model_validate(on).model_dump()
    )


def test_a_typo_is_refused_as_for_any_model_spec() -> None:
    with pytest.raises(pydantic.ValidationError, match="structure"):
        JudgeModel.model_validate({"name": "j", "provider": "sim", "structure": True})
