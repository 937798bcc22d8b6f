"""The params of a judge that grades with its own prompt and output schema."""

from __future__ import annotations

from evalbench.models import ModelSpec


class JudgeModel(ModelSpec):
    """A judge or grader model (a :class:`~evalbench.models.ModelSpec`) that may be asked
    for structured output."""

    structured: bool = False
    """Ask for structured output (``response_format`` with the judge's JSON schema) where the
    endpoint supports it; the reply is parsed either way."""
