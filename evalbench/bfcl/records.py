"""The BFCL study's types: its params, the verdict record it writes and its result.

``records/bfcl.jsonl`` holds one :class:`VerdictRecord` per system and item;
:class:`BfclResult` is what :func:`~.study.run` returns and the notebook shows.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Annotated, Any, Literal, NamedTuple

import pandas as pd
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationInfo,
    model_validator,
)

from evalbench import sources
from evalbench.agents.types import SystemSpec
from evalbench.models import ModelSpec
from evalbench.params import StudyParams, data_path
from evalbench.records import Record

from .backends import VECTOR_REFUSAL
from .files import DEMO, demo_categories
from .metrics import Summary
from .schema import (
    FORMAT_SENSITIVITY,
    PUBLIC_SYSTEMS,
    PYTHON,
    AnyItem,
    BfclDataError,
    resolve_categories,
)


class VerdictRecord(Record):
    """A verdict as written to a run's ``records/`` folder."""

    system: str
    """The system (model) that produced the output."""
    test_category: str
    """BFCL category, e.g. ``live_multiple``."""
    id: str
    """BFCL item id."""
    valid: bool
    """The official checker's verdict."""
    error_type: str | None
    """Official error type of a failure (a valid simple/multiple verdict may keep the
    official checker's ``simple_function_checker:unclear``)."""
    error: str | None
    """First error message of a failure."""
    decoded: list[dict[str, Any]] | None
    """Decoded calls ``[{name: {param: value}}]``; ``None`` when decoding failed."""
    raw: Any
    """The raw model output as in the result file."""
    params: list[dict[str, Any]]
    """Per expected parameter: function, param, type, called, correct."""
    latency: Any = None
    """Seconds, when the result file has it."""
    input_token_count: Any = None
    """Prompt tokens, when known."""
    output_token_count: Any = None
    """Completion tokens, when known."""
    mode: str = ""
    """How the output was produced: ``prompt`` / ``tools`` (asked live) or ``results`` (a
    result file)."""
    injected: str | None = None
    """Simulated systems only: the mistake the simulator injected (``none`` = answered
    correctly); the checker never sees it."""
    valid_corrected: bool | None = None
    """Web search and memory only: the verdict with the official whole-word rule's bug
    fixed (:data:`~.web_search.CORRECTED`); the official ``valid`` is the score."""


class FormatVerdictRecord(VerdictRecord):
    """A format-sensitivity verdict (``records/format_sensitivity.jsonl``): ``id`` is the
    official case id, ``test_category`` ``format_sensitivity``."""

    config: str
    """The prompt format (``ret_fmt=...&tool_call_tag=...&func_doc_fmt=...&...``)."""
    item_id: str
    """The item asked."""
    item_category: str
    """Its category."""


class AgentConversationRecord(Record):
    """A user's Python agent's finished conversation on one multi-turn item
    (``records/agent_conversations.jsonl``; a rerun keeps those without ``error``)."""

    system: str
    id: str
    result: list[list[Any]]
    """Per turn, each step's output (the official result-file ``result``)."""
    events: list[dict[str, Any]]
    """Its steps (:class:`TurnStepRecord` rows without ``system``)."""
    error: str | None = None
    """The agent raised: the conversation is an error record (not written, not kept)."""
    state: dict[str, Any] | None = None
    """A memory conversation's memory at its end (the next one starts from it)."""


class MemoryPrereqRecord(Record):
    """One prerequisite conversation a live system held before the memory questions
    (``records/memory_prereqs.jsonl``)."""

    system: str
    test_category: str
    """The memory category it fills (``memory_kv`` or ``memory_rec_sum``)."""
    scenario: str
    id: str
    """Official id, e.g. ``memory_kv_prereq_0-customer-0``."""
    turns: int
    """Turns played (fewer than the conversation's when it was force-quit)."""
    steps: int
    """Model replies over all turns."""
    error: str | None = None
    """The conversation failed: the memory it would have left is not kept (the next one
    starts from the memory before it, as officially)."""


class TurnStepRecord(Record):
    """One step of a live multi-turn conversation (``records/steps.jsonl``)."""

    system: str
    id: str
    """The multi-turn item."""
    turn: int
    step: int
    """0-based step within the turn."""
    kind: Literal["model", "tool"]
    tool: str | None = None
    """The function called (tool rows), or those the model asked for (model rows)."""
    arguments: str | None = None
    """The call as executed (official execution string)."""
    result: str | None = None
    """The model's text, or the call's result (clipped)."""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_s: float | None = None


def _categories_valid(value: str | list[str]) -> list[str]:
    try:
        return list(resolve_categories(value))
    except BfclDataError as exc:
        raise ValueError(str(exc)) from None


def _data_source(value: str, info: ValidationInfo) -> str:
    if value in ("registry", "package", DEMO):
        return value
    return str(data_path(value, info))


def _as_list(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


def _folder(value: str | None, info: ValidationInfo) -> str | None:
    return None if value is None else str(data_path(value, info))


class ResultSet(BaseModel):
    """Outputs a system already produced, in the official result-file format."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    """Label in tables and records (unique within the study)."""
    model: str | None = None
    """A registered public result set (``bfcl/result/<model>/...`` in ``sources.tsv``)."""
    folder: Annotated[str | None, AfterValidator(_folder)] = None
    """Or a local folder of ``BFCL_v4_<category>_result.json`` files (searched recursively;
    relative to the params file)."""
    style: Literal["auto", "prompt", "fc"] | None = None
    """Decoder: ``prompt`` (Python call strings), ``fc`` (``[{name: "<JSON args>"}]``) or
    ``auto`` (lenient); default: the registered style of a public model, else ``auto``."""
    underscore_to_dot: bool = False
    """Compare function names with dots replaced by underscores (the official flag for
    models whose API forbids dots in names)."""
    categories: Annotated[list[str] | None, BeforeValidator(_as_list)] = None
    """Categories this set must cover (a missing file is an error); default: every study
    category the set has (the others are reported as not submitted)."""
    leaderboard_model: str | None = None
    """The ``Model`` column of the registered published score tables
    (``bfcl/leaderboard/data_*``) for this system, to compare with our numbers."""

    @model_validator(mode="after")
    def _check_source(self) -> ResultSet:
        if (self.model is None) == (self.folder is None):
            raise ValueError(f"result set {self.name!r}: give exactly one of 'model', 'folder'")
        if self.model is not None and not sources.names(f"bfcl/result/{self.model}/"):
            known = ", ".join(PUBLIC_SYSTEMS)
            raise ValueError(f"no registered BFCL results for {self.model!r}; known: {known}")
        if self.categories is not None:
            self.categories = _categories_valid(self.categories)
        return self

    @property
    def decode_style(self) -> str:
        """The decoder used for this set."""
        if self.style is not None:
            return self.style
        return PUBLIC_SYSTEMS.get(self.model or "", "auto")


class BfclParams(StudyParams):
    """Parameters of a BFCL study (``study: bfcl``): result sets and/or live systems."""

    study: Literal["bfcl"] = "bfcl"
    data: Annotated[str, AfterValidator(_data_source)] = "registry"
    """Questions and answers: ``registry`` (pinned files, gorilla@6ea5797), ``package`` (an
    installed ``bfcl-eval``) or the path of a gorilla checkout (these three for the Python
    categories; the others come from the pinned files), or ``demo``: every category from
    evalbench's own demo suite in BFCL's format (``evalbench/demo/bfcl``, written for
    evalbench, not BFCL data; offline)."""
    categories: Annotated[
        list[str], BeforeValidator(_as_list), AfterValidator(_categories_valid)
    ] = Field(default_factory=lambda: list(PYTHON))
    """Category names and groups: ``all`` (every category evalbench scores), ``python`` (the
    eleven single-turn Python ones), ``single_turn``, ``non_live``, ``live``, ``java_js``,
    ``multi_turn``, ``web_search``, ``memory``, ``agentic`` (:data:`~.schema.GROUPS`).
    Result sets are scored on those they have; live systems are asked the Python,
    multi-turn and memory ones except ``memory_vector`` (the backends need ``make setup``).
    ``data:`` applies to the Python categories; the others always come from the pinned
    files."""
    limit_per_category: int | None = Field(default=None, ge=1)
    """Keep the first N items of each category (demos); ``None`` keeps all."""
    format_limit_per_category: int | None = Field(default=None, ge=1)
    """For ``format_sensitivity``: keep the first N of its items of each category (each is
    asked in 26 formats); ``None``: as ``limit_per_category``."""
    result_sets: list[ResultSet] = Field(default_factory=list)
    """Systems scored from result files (public or local)."""
    systems: list[SystemSpec] = Field(default_factory=list)
    """Systems asked live: chat models (``sim``, ``openai``; through the response cache,
    resumable), evalbench's reference agent (``agent``: its model in tools mode, its
    ``limits.max_steps`` calling steps per turn, ``limits.max_tokens`` per conversation) and
    users' agents (the multi-turn items only: ``python``, see :mod:`~.python_agents`;
    ``command``, see :mod:`~.command_agents`)."""
    mode: Literal["prompt", "tools"] = "prompt"
    """How live systems are asked: ``prompt`` (function docs in the system prompt, Python call
    syntax) or ``tools`` (OpenAI native tools)."""
    system_modes: dict[str, Literal["prompt", "tools"]] = Field(default_factory=dict)
    """Per-system override of ``mode`` (system name -> mode)."""
    examples_per_system: int = Field(default=3, ge=0, le=50)
    """Failure examples shown per system (one per most frequent error type)."""

    @model_validator(mode="before")
    @classmethod
    def _merged_key(cls, data: Any) -> Any:
        if (isinstance(data, dict) and data.get("systems") and not data.get("result_sets")
                and "memory_vector" in _as_list(data.get("categories") or [])):  # fmt: skip
            # named (a group such as `all` brings it too: then live systems just skip it)
            example = "[python, multi_turn, memory_kv, memory_rec_sum]"
            raise ValueError(f"{VECTOR_REFUSAL}; list the categories without it, e.g. "
                             f"categories: {example}")  # fmt: skip
        if isinstance(data, dict) and "more_categories" in data:
            raise ValueError(
                "'more_categories' is no longer a key: list every category and group in "
                f"'categories', e.g. categories: {_merged_suggestion(data)}"
            )
        return data

    @model_validator(mode="after")
    def _check_names(self) -> BfclParams:
        names = [r.name for r in self.result_sets] + [s.name for s in self.systems]
        if not names:
            raise ValueError("give at least one entry in 'result_sets' or 'systems'")
        if len(set(names)) != len(names):
            raise ValueError(f"system names must be unique across result_sets and systems: {names}")
        live = {s.name for s in self.systems}
        for name in self.system_modes:
            if name not in live:
                raise ValueError(
                    f"system_modes: unknown system {name!r} (live systems: {sorted(live)})"
                )
        for spec in self.systems:
            _check_agent(spec, self.system_modes)
        if self.format_limit_per_category is not None and FORMAT_SENSITIVITY not in self.categories:
            raise ValueError("format_limit_per_category: 'format_sensitivity' is not in categories")
        if self.data == DEMO:
            _check_demo(self)
        for rs in self.result_sets:
            outside = set(rs.categories or ()) - set(self.categories)
            if outside:
                raise ValueError(
                    f"result set {rs.name!r}: categories {sorted(outside)} are not studied"
                )
        return self

    def model_specs(self) -> list[ModelSpec]:
        """The live systems (result sets call no model)."""
        return list(self.systems)

    def mode_of(self, name: str) -> str:
        """How the live system ``name`` is asked: ``prompt`` or ``tools`` (the reference
        agent always converses with native tools), ``python`` or ``command`` (a user's
        agent)."""
        provider = next((s.provider for s in self.systems if s.name == name), None)
        if provider in AGENT_MODES:
            return AGENT_MODES[provider]
        return self.system_modes.get(name, self.mode)


def _check_demo(params: BfclParams) -> None:
    """``data: demo`` holds some categories only, and no public result set answers it."""
    held = demo_categories()
    missing = [c for c in params.categories if c not in held]
    if missing:
        raise ValueError(f"data: demo: the demo suite has no {', '.join(missing)} (it holds "
                         f"{', '.join(held)}); list only those, or use data: registry")  # fmt: skip
    public = [rs.name for rs in params.result_sets if rs.model is not None]
    if public:
        raise ValueError(f"data: demo: result sets {public} answer BFCL's items, not the demo "
                         "suite's; use data: registry")  # fmt: skip


AGENT_MODES = {"agent": "tools", "python": "python", "command": "command"}
"""How each agent provider converses (a chat model's mode comes from ``mode``)."""


def _check_agent(spec: SystemSpec, modes: Collection[str]) -> None:
    """What an agent system can be in a BFCL study (one line naming what to change)."""
    where = f"system {spec.name!r}"
    if spec.sim_agent is not None:
        raise ValueError(f"{where}: sim_agent does not apply to BFCL (its simulated systems "
                         "are provider 'sim' with 'sim:' knobs)")  # fmt: skip
    if spec.provider == "agent" and {"tools", "documents"} & spec.model_fields_set:
        raise ValueError(f"{where}: the reference agent's tools in BFCL are each item's "
                         "functions; remove 'tools' / 'documents'")  # fmt: skip
    if spec.provider == "agent" and spec.tool_mode == "prompt":
        raise ValueError(f"{where}: tool_mode: prompt does not apply to BFCL: it asks the "
                         "reference agent with native tools; for a model without them, list "
                         "it as a chat system (provider 'openai') with mode: prompt, BFCL's "
                         "own prompt format")  # fmt: skip
    if spec.provider in AGENT_MODES and spec.name in modes:
        raise ValueError(f"system_modes: {spec.name!r} is an agent ({spec.provider}); it "
                         f"converses as {AGENT_MODES[spec.provider]!r}")  # fmt: skip


def _merged_suggestion(data: dict[str, Any]) -> str:
    """An old file's ``categories`` + ``more_categories`` as one list (the old ``all`` was
    the eleven Python categories; the old ``more`` every other scored one)."""
    old = {"all": ["python"], "more": ["java_js", "multi_turn", "web_search"]}
    names = [*_as_list(data.get("categories", ["all"])), *_as_list(data["more_categories"])]
    out = [new for name in names for new in old.get(str(name), [str(name)])]
    return "[" + ", ".join(dict.fromkeys(out)) + "]"


class BfclResult(NamedTuple):
    """Everything the notebook shows (see :func:`~.study.run`)."""

    params: BfclParams
    items: list[AnyItem]
    """The studied items of every category (each cut to ``limit_per_category``)."""
    verdicts: pd.DataFrame
    """One row per system and item (columns of :class:`VerdictRecord`)."""
    summary: Summary
    order: list[str]
    """Systems in the order they were scored (result sets, then live systems)."""
    sources: pd.DataFrame
    """:func:`~.published.system_sources`."""
    comparison: pd.DataFrame
    """:func:`~.published.leaderboard_comparison` (empty when no result set names a
    leaderboard row)."""
    truth: pd.DataFrame | None
    """:func:`~.metrics.injected_vs_detected`; None without a simulated system."""
    examples: list[dict[str, Any]]
    """:func:`~.metrics.failure_examples`."""
    result_files: pd.DataFrame | None
    """Official result files written per live system; None without a live system."""
    usage: pd.DataFrame
    """``run.recorded_usage()`` after every call."""
    simulated: frozenset[str]
    """Names of the simulated systems."""
    multi_turn: pd.DataFrame | None = None
    """Per system and multi-turn item, the replay's diagnostics
    (:data:`~.multi_turn_metrics.DETAIL_COLUMNS`); None when no multi-turn item was scored."""
    formats: pd.DataFrame | None = None
    """One row per live system and format-sensitivity case (columns of
    :class:`FormatVerdictRecord`); None when ``format_sensitivity`` is not studied."""
    tables: pd.DataFrame | None = None
    """The official score tables column by column beside the published row
    (:func:`~.leaderboard.comparison`, with a ``system`` column); None without a result set
    naming its ``leaderboard_model``."""
    memory_prereqs: pd.DataFrame | None = None
    """One row per live system and prerequisite conversation held (columns of
    :class:`MemoryPrereqRecord`); None when no live system was asked a memory question."""
