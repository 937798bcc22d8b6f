"""What an agent under test is (params), what it receives (a task), what it returns, and
the records its runs leave (``records/agent_runs.jsonl``, ``records/steps.jsonl``).

A system in params is a :class:`SystemSpec`: a chat model (``openai``, ``sim``) or an agent:

- ``python``: the user's function ``entrypoint: "package.module:function"`` (sync or async),
  called with the task as a dict; returns an answer (str) or an :class:`AgentReply` dict (a
  sync function runs in a fresh process per task, killed at ``max_time_s``);
- ``command``: the user's program ``argv: [...]``, one process per task, the task as JSON
  on stdin, the reply as JSON on stdout;
- ``agent``: evalbench's reference ReAct agent over an OpenAI-compatible model with native
  function calling and the ``tools`` listed;
- ``sim`` with ``sim_agent:`` knobs: a seeded simulated agent (the offline default).

Every agent runs under :class:`AgentLimits`; a task that exceeds them ends ``timeout`` or
``step_limit`` (its partial trajectory kept), never as a silently wrong answer.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, model_validator

from evalbench.executors import RayHints
from evalbench.models import ModelSpec
from evalbench.models.types import TableKey
from evalbench.records import Record

from .tools.sandbox import SandboxLimits

AgentProvider = Literal["openai", "local", "sim", "python", "command", "agent"]
EndState = Literal["answered", "timeout", "step_limit", "error"]
END_STATES: tuple[EndState, ...] = ("answered", "timeout", "step_limit", "error")
DEFAULT_TOOLS = ("read_file", "python", "final_answer")
_ENTRYPOINT = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")


def _is_default_limits(value: Any) -> bool:
    return value == AgentLimits()


class AgentLimits(BaseModel):
    """Per-task limits every agent runs under."""

    model_config = ConfigDict(extra="forbid")

    max_steps: int = Field(default=20, ge=1, le=1000)
    """Model calls (reference agent) or reported steps (others) before ``step_limit``."""
    max_time_s: float = Field(default=300.0, gt=0, le=86_400)
    """Wall time per task before ``timeout`` (a command's whole process group is killed)."""
    max_tokens: int | None = Field(default=None, ge=1)
    """Prompt + completion tokens over the task before ``step_limit`` (None: no budget)."""


class SimAgentKnobs(BaseModel):
    """How a simulated agent behaves; per-level values are keyed by level (``"1"``, ...)
    with ``default`` as fallback. Its answers are correct with the system's
    ``sim.accuracy``."""

    model_config = ConfigDict(extra="forbid")

    mean_steps: dict[TableKey, float] = Field(default_factory=lambda: {"default": 5.0})
    """Mean tool calls per task (Poisson) before the final answer."""
    timeout_rate: dict[TableKey, float] = Field(default_factory=lambda: {"default": 0.0})
    """P(the task runs out of time)."""
    tool_error_rate: float = Field(default=0.05, ge=0, le=1)
    """P(a tool call fails: bad arguments, a crash in the model's code)."""
    tool_mix: dict[str, float] = Field(
        default_factory=lambda: {"read_file": 0.4, "python": 0.4, "search": 0.2}
    )
    """Relative frequency of each tool."""
    seconds_per_step: float = Field(default=4.0, gt=0)
    """Mean simulated wall time of one step (model call + tool)."""

    def per_level(self, table: dict[str, float], level: Any) -> float:
        """The value of a per-level table for ``level``."""
        return float(table.get(str(level), table.get("default", 0.0)))


_OWN_PROVIDER = {"entrypoint": "python", "argv": "command", "tools": "agent", "documents": "agent",
                 "tool_mode": "agent"}  # fmt: skip
"""Fields that only one provider reads."""


class SystemSpec(ModelSpec):
    """A system under test: a chat model or an agent (see the module docstring)."""

    provider: AgentProvider = "sim"  # type: ignore[assignment]
    """``sim`` | ``openai`` | ``local`` (chat models), ``python`` | ``command`` | ``agent``
    (agents)."""
    entrypoint: str | None = Field(default=None, exclude_if=lambda v: v is None)
    """``python``: ``package.module:function`` (importable from the project root)."""
    argv: list[str] | None = Field(default=None, exclude_if=lambda v: v is None)
    """``command``: the program and its arguments (no shell). It runs in the task's private
    folder, so relative paths are found from the project root: an argument naming an
    existing file or folder there (the program too, when it has a ``/``) becomes its
    absolute path, as ``my_agents/cli_agent.py`` in ``[python3, my_agents/cli_agent.py]``."""
    tools: list[str] = Field(default_factory=lambda: list(DEFAULT_TOOLS),
                             exclude_if=lambda v: v == list(DEFAULT_TOOLS))  # fmt: skip
    """``agent``: the reference agent's tools, from ``read_file``, ``python``, ``search``,
    ``open_page`` (these two over ``documents``), ``open_url``, ``search_site``,
    ``submit_form``, ``browser`` (a local web, see BrowseComp); ``final_answer`` is always
    added."""
    documents: str | None = Field(default=None, exclude_if=lambda v: v is None)
    """``agent``: a folder (.txt/.md/.html) or JSONL of documents for search/open_page,
    relative to the project root."""
    tool_mode: Literal["native", "prompt"] = Field(default="native",
                                                   exclude_if=lambda v: v == "native")  # fmt: skip
    """``agent``: how its model calls tools: ``native`` (OpenAI ``tools``; ``tool_choice``
    as the system sets it) or ``prompt`` (the tools described in the system prompt, calls
    read from the reply's text, results sent back as text: for servers that ignore
    ``tools``, as llama-cpp-python's default chat format does; see
    ``evalbench.agents.prompt_tools``)."""
    limits: AgentLimits = Field(default_factory=AgentLimits, exclude_if=_is_default_limits)
    """Per-task limits of an agent."""
    sandbox: SandboxLimits = Field(default_factory=SandboxLimits,
                                   exclude_if=lambda v: v == SandboxLimits())  # fmt: skip
    """``agent``: limits of each ``python`` tool call: ``cpu_s``, ``wall_s``, ``memory_mb``,
    ``processes``, ``file_mb``, ``output_chars`` and ``disk_mb``, the disk budget (default
    1024: the task's work dir with its attachments, plus a call's temporary files)."""
    sim_agent: SimAgentKnobs | None = Field(default=None, exclude_if=lambda v: v is None)
    """``sim`` only: simulate an agent (steps, tools, timeouts) instead of a chat model."""
    ray: RayHints | None = Field(default=None, exclude_if=lambda v: v is None)
    """Agents on a Ray cluster (``--executor ray``): what one task needs, e.g.
    ``{num_cpus: 1, memory_mb: 2048, resources: {browser: 1}}`` (ignored locally)."""

    @model_validator(mode="after")
    def _check_agent_fields(self) -> SystemSpec:
        needs = {"python": ("entrypoint", self.entrypoint), "command": ("argv", self.argv)}
        if self.provider in needs and not needs[self.provider][1]:
            raise ValueError(f"provider {self.provider!r} needs {needs[self.provider][0]!r}")
        for field, provider in _OWN_PROVIDER.items():
            # else ignored: a forgotten `provider: python` would run a simulated model
            if field in self.model_fields_set and self.provider != provider:
                raise ValueError(f"{field} applies to provider {provider!r} only "
                                 f"(this system's provider is {self.provider!r})")  # fmt: skip
        if self.provider == "agent" and not self.model:
            raise ValueError("provider 'agent' needs 'model' (the function-calling model)")
        if self.provider == "agent":  # an unknown tool: refused before anything runs
            from .tools.registry import get_tools

            get_tools(self.tools)
        if self.entrypoint and not _ENTRYPOINT.match(self.entrypoint):
            raise ValueError(f"entrypoint {self.entrypoint!r}: expected 'package.module:function'")
        if self.sim_agent is not None and self.provider != "sim":
            raise ValueError("sim_agent applies to provider 'sim' only")
        if self.sandbox != SandboxLimits() and self.provider != "agent":
            raise ValueError("sandbox applies to provider 'agent' only (its python tool)")
        return self

    @property
    def is_agent(self) -> bool:
        """Whether this system is an agent (runs tasks, leaves trajectories)."""
        return self.provider in ("python", "command", "agent") or self.sim_agent is not None

    def chat_spec(self) -> ModelSpec:
        """The chat model the reference agent calls (its cache, retries and prices): a model
        evalbench serves when the agent names a ``local`` one."""
        fields = self.model_dump(include=set(ModelSpec.model_fields) - {"provider"})
        return ModelSpec(**fields, provider="local" if self.local else "openai")


class AgentTask(BaseModel):
    """What an agent receives for one task (a dict for ``python``, JSON for ``command``)."""

    id: str
    question: str
    attachments: list[str] = []
    """Absolute paths of COPIES of the task's files, in a private working dir."""
    limits: AgentLimits = AgentLimits()
    metadata: dict[str, JsonValue] = {}
    """Benchmark fields an agent may use (e.g. ``level``); never the expected answer."""


class ReportedStep(BaseModel):
    """One step of a trajectory as a user's agent reports it."""

    model_config = ConfigDict(extra="ignore")

    kind: Literal["model", "tool"] = "tool"
    tool: str | None = None
    arguments: JsonValue = None
    result: JsonValue = None
    prompt_tokens: int | None = Field(default=None, ge=0)
    completion_tokens: int | None = Field(default=None, ge=0)
    latency_s: float | None = None
    error: str | None = None


class AgentReply(BaseModel):
    """What a ``python`` or ``command`` agent returns (a bare string is ``answer``): token
    counts are never negative (-1,000,000 was recorded, and passed the ``max_tokens``
    budget), a cost is finite (``inf`` was recorded as an unknown cost)."""

    model_config = ConfigDict(extra="ignore")

    answer: str | None = None
    steps: list[ReportedStep] = []
    prompt_tokens: int | None = Field(default=None, ge=0)
    completion_tokens: int | None = Field(default=None, ge=0)
    cost_usd: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    error: str | None = None
    """The agent's own failure (the task ends ``error`` with this reason)."""


class StepRecord(Record):
    """One step of a trajectory (``records/steps.jsonl``)."""

    system: str
    task_id: str
    attempt: int = 0
    step: int
    """0-based position in the task's trajectory."""
    kind: Literal["model", "tool"]
    tool: str | None = None
    """The tool called (tool steps), or the tools the model asked for (model steps)."""
    arguments: str | None = None
    """The call's arguments as sent (clipped)."""
    result: str | None = None
    """An excerpt of the tool result or the model's text (clipped)."""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_s: float | None = None
    error: str | None = None
    cached: bool = False
    """Model step answered from the response cache."""
    finish_reason: str | None = None
    """Model step: why the model stopped (``length``: cut at ``max_tokens``)."""


class AgentRunRecord(Record):
    """How one task ended for one agent (``records/agent_runs.jsonl``).

    It has the fields of a model call (``key``, ``request_key``, tokens, ``error``,
    ``cached``) so usage, cost and the error-rate gate count agent tasks like calls; only
    ``state == "error"`` sets ``error`` (a timeout is a result of the agent, not a failure of
    the harness).
    """

    system: str
    key: str
    """``<task id>#<attempt>``."""
    task_id: str
    attempt: int = 0
    request_key: str = ""
    state: EndState
    answer: str | None = None
    error: str | None = None
    detail: str | None = None
    """Why a task ended ``timeout`` or ``step_limit``."""
    steps: int = 0
    tool_calls: int = 0
    tool_counts: dict[str, int] = Field(default_factory=dict)
    tool_errors: int = 0
    truncated_steps: int = 0
    """Model steps cut at ``max_tokens`` (``finish_reason`` ``length``)."""
    wall_s: float = 0.0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None
    """Reported by a ``python``/``command`` agent; else computed from tokens and prices."""
    cached: bool = False
    simulated: bool = False
