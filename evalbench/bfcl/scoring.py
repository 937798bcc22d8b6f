"""BFCL prompts, tools and official scoring: item + raw output -> verdict.

- Prompts: prompt mode puts the function docs in the leaderboard's default system prompt and
  expects Python call syntax; tools mode turns the docs into OpenAI ``tools`` (plain message
  lists and tool dicts here; ``study.py`` wraps them in a request).
- Scoring: :func:`score_item` decodes (:mod:`.decode`) and checks one Python, Java or
  JavaScript output (:mod:`.checker`, :mod:`.java_js`); :func:`score_multi_turn_item` replays
  a conversation (:mod:`.multi_turn`), :func:`score_web_search_item` and
  :func:`score_memory_item` check an answer (:mod:`.web_search`, :mod:`.memory`);
  :func:`score_results` scores result lines of any category against
  their items, as the official runner does (:func:`score` also returns the multi-turn
  replay's diagnostics).
- Reference answers: :func:`correct_calls` builds a correct answer from the possible answer;
  :func:`render_calls` writes calls in prompt-mode syntax.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

import pandas as pd

from evalbench.records import ResponseRecord

from .checker import as_options, check, find_doc
from .decode import decode
from .format_sensitivity import DEFAULT_CONFIG, Case, decode_output
from .format_sensitivity import system_prompt as format_system_prompt
from .java_js import check_java_js
from .memory import check_memory, check_memory_corrected
from .multi_turn import Step, check_multi_turn
from .multi_turn_metrics import DETAIL_COLUMNS, multi_turn_detail
from .schema import (
    FORMAT_SENSITIVITY,
    JAVA_JS,
    AnyItem,
    BfclDataError,
    Call,
    Item,
    MemoryItem,
    MultiTurnItem,
    ResultLine,
    WebSearchItem,
)
from .web_search import check_answer, check_web_search

PYTHON_HINT = " Note that the provided function is in Python 3 syntax."
"""Appended to every function description for Python categories, in both modes (official
``func_doc_language_specific_pre_processing``)."""
OPENAI_TYPES = {
    "string": "string",
    "integer": "integer",
    "float": "number",
    "boolean": "boolean",
    "array": "array",
    "tuple": "array",
    "dict": "object",
    "any": "string",
}
"""BFCL type names -> JSON-schema types (the Python subset of gorilla's
``GORILLA_TO_OPENAPI``, ``bfcl_eval/constants/type_mappings.py``); unknown names -> string."""
MODES = ("prompt", "tools")


def hinted(functions: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Function docs with :data:`PYTHON_HINT` appended to each description (copies)."""
    return [
        {**doc, "description": str(doc.get("description", "")) + PYTHON_HINT} for doc in functions
    ]


def system_prompt(functions: Sequence[dict[str, Any]]) -> str:
    """The prompt-mode system prompt: the leaderboard's default format
    (``ret_fmt=python&tool_call_tag=False&func_doc_fmt=json&prompt_fmt=plaintext&style=classic``)
    built as the pinned bfcl-eval builds it (``formulate_system_prompt``), the function docs
    as JSON, each description with :data:`PYTHON_HINT` once. Until this commit evalbench sent
    the older text of gorilla bc64944, which differs in line breaks, spaces and "JSON"."""
    return format_system_prompt(DEFAULT_CONFIG, functions, hints=1)


def question_messages(item: Item) -> list[dict[str, str]]:
    """The item's chat messages (role and content only; single-turn: one turn)."""
    return [{"role": m["role"], "content": m["content"]} for turn in item.question for m in turn]


def prompt_messages(item: Item) -> list[dict[str, str]]:
    """Prompt mode: the system prompt first; a question's own system message is appended to
    it (official ``system_prompt_pre_processing_chat_model``)."""
    messages = question_messages(item)
    prompt = system_prompt(item.functions)
    if messages and messages[0]["role"] == "system":
        messages[0] = {"role": "system", "content": f"{prompt}\n\n{messages[0]['content']}"}
    else:
        messages.insert(0, {"role": "system", "content": prompt})
    return messages


def tool_name(name: str) -> str:
    """The name a tool gets in tools mode: OpenAI forbids dots (``math.sqrt`` -> ``math_sqrt``).

    The checker maps back by comparing with ``underscore_to_dot`` (official behaviour).
    """
    return name.replace(".", "_")


def to_openai_tools(functions: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """BFCL function docs -> OpenAI ``tools`` (official ``convert_to_tool``, OpenAI style).

    Names lose their dots (:func:`tool_name`); ``dict`` becomes ``object``, ``float`` becomes
    ``number`` with ``format: float`` and the official description note, ``tuple`` becomes
    ``array``, ``any`` becomes ``string``, recursively through ``properties`` and ``items``.
    """
    tools = []
    for doc in hinted(functions):
        parameters = {**_openai_schema(doc["parameters"]), "type": "object"}
        function = {"name": tool_name(doc["name"]), "description": doc["description"]}
        tools.append({"type": "function", "function": {**function, "parameters": parameters}})
    return tools


def _openai_schema(spec: Any) -> Any:
    if not isinstance(spec, dict):
        return spec
    out = dict(spec)
    kind = spec.get("type")
    out["type"] = OPENAI_TYPES.get(kind, "string") if isinstance(kind, str) else "string"
    if kind == "float":
        out["format"] = "float"
        out["description"] = str(spec.get("description", "")) + " This is a float type value."
    if isinstance(spec.get("properties"), dict):
        out["properties"] = {k: _openai_schema(v) for k, v in spec["properties"].items()}
    if isinstance(spec.get("items"), dict):
        out["items"] = _openai_schema(spec["items"])
    return out


def request_parts(
    item: Item, mode: str
) -> tuple[list[dict[str, str]], list[dict[str, Any]] | None]:
    """The chat messages and tools for one item.

    Prompt mode: docs in the system prompt, Python call syntax expected, no tools. Tools mode:
    the question's messages and OpenAI ``tools`` (None when the item offers no function:
    OpenAI rejects an empty list).
    """
    if mode == "tools":
        return question_messages(item), to_openai_tools(item.functions) or None
    if mode != "prompt":
        raise ValueError(f"unknown mode {mode!r}; use one of {MODES}")
    return prompt_messages(item), None


def response_result(response: ResponseRecord, mode: str) -> Any:
    """A model response -> the ``result`` of an official result-file line.

    Prompt mode: the text. Tools mode: ``[{name: "<JSON args>"}]`` when the model called
    tools, else its text (the official OpenAI FC handler does the same).
    """
    if mode == "tools" and response.tool_calls:
        return fc_result((c["name"], c["arguments"]) for c in response.tool_calls)
    return response.text or ""


def fc_result(calls: Iterable[tuple[str, Any]]) -> list[dict[str, str]]:
    """Tool calls ``(name, arguments)`` -> the official FC result ``[{name: "<JSON args>"}]``.

    ``arguments`` may be a dict or an already-encoded JSON string (kept as is).
    """
    return [{name: args if isinstance(args, str) else json.dumps(args)} for name, args in calls]


# --------------------------------------------------------------------------- scoring


class Verdict(NamedTuple):
    """One scored item (a row of the verdict frame).

    :class:`~.records.VerdictRecord` is the same row validated at the file boundary; scoring builds
    plain tuples because validating ~10k rows through pydantic doubles its time.
    """

    system: str
    test_category: str
    id: str
    valid: bool
    error_type: str | None
    error: str | None
    decoded: list[dict[str, Any]] | None
    raw: Any
    params: list[dict[str, Any]]
    latency: Any = None
    input_token_count: Any = None
    output_token_count: Any = None
    mode: str = ""
    injected: str | None = None
    valid_corrected: bool | None = None


def score_item(
    item: Item,
    raw: Any,
    *,
    system: str,
    style: str = "auto",
    underscore_to_dot: bool = False,
) -> Verdict:
    """Decode and check one raw output of a Python, Java or JavaScript item; the verdict
    carries the decoded calls and raw output.

    Args:
        item: the test entry.
        raw: the model output as in a result file.
        system: the system name recorded in the verdict.
        style: the decoder (:func:`decode`; Java/JavaScript outputs are read as ``fc``
            unless ``auto``).
        underscore_to_dot: the official model-config flag (see :func:`check`).
    """
    if item.category in JAVA_JS:
        decoded = decode(raw, "fc" if style == "fc" else "auto")
        result = check_java_js(item, decoded, underscore_to_dot=underscore_to_dot)
    else:
        decoded = decode(raw, style)
        result = check(item, decoded, underscore_to_dot=underscore_to_dot)
    return Verdict(
        system=system,
        test_category=item.category,
        id=item.id,
        valid=result.valid,
        error_type=result.error_type,
        error=result.error,
        decoded=None if decoded.calls is None else calls_json(decoded.calls),
        raw=raw,
        params=[p._asdict() for p in result.params],
    )


def score_format_case(case: Case, raw: Any, *, system: str) -> Verdict:
    """Decode one format-sensitivity answer in its case's format and check it
    (``test_category`` ``format_sensitivity``, the official case id; no per-parameter rows)."""
    decoded = decode_output(raw, case.config)
    result = check(case.item, decoded)
    calls = None if decoded.calls is None else calls_json(decoded.calls)
    return Verdict(system, FORMAT_SENSITIVITY, case.id, result.valid, result.error_type,
                   result.error, calls, raw, [])  # fmt: skip


def score_multi_turn_item(
    item: MultiTurnItem, raw: Any, *, system: str, style: str = "fc", model_name: str | None = None
) -> tuple[Verdict, dict[str, Any]]:
    """Replay and check one conversation's result; the verdict and the replay's
    diagnostics (:func:`~.multi_turn_metrics.multi_turn_detail`).

    Args:
        item: the test entry.
        raw: the ``result`` of its result-file line (turns of steps).
        system: the system name recorded in the verdict.
        style: the decoder of each step (``fc``, ``prompt`` or ``auto``).
        model_name: the official model folder name (default ``system``).
    """
    mt = check_multi_turn(item, raw, style=style, model_name=model_name or system)
    verdict = Verdict(system, item.category, item.id, mt.valid, mt.error_type, mt.error,
                      None if mt.decoded is None else _steps_json(mt.decoded), raw, [])  # fmt: skip
    return verdict, multi_turn_detail(system, item, mt)


def score_web_search_item(
    item: WebSearchItem, raw: Any, *, system: str, style: str = "fc"
) -> Verdict:
    """Check the answer of one web-search result (its last message that is not a call);
    ``valid_corrected`` is the corrected rule's verdict (:data:`~.web_search.CORRECTED`)."""
    check = check_web_search(item, raw, style=style).check
    corrected = check_answer(item.answers, raw, style=style, corrected=True).check.valid
    return Verdict(system, item.category, item.id, check.valid, check.error_type, check.error,
                   None, raw, [], valid_corrected=corrected)  # fmt: skip


def score_memory_item(item: MemoryItem, raw: Any, *, system: str, style: str = "fc") -> Verdict:
    """Check the answer of one memory result (as a web-search one: :mod:`.memory`)."""
    check = check_memory(item, raw, style=style)
    corrected = check_memory_corrected(item, raw, style=style)
    return Verdict(system, item.category, item.id, check.valid, check.error_type, check.error,
                   None, raw, [], valid_corrected=corrected)  # fmt: skip


def _steps_json(turns: list[list[Step]]) -> list[dict[str, Any]]:
    """Decoded steps as records: one ``{turn, step, calls}`` per step, calls as the official
    execution strings."""
    return [
        {"turn": t, "step": s, "calls": [call.source for call in step]}
        for t, steps in enumerate(turns)
        for s, step in enumerate(steps)
    ]


class Scores(NamedTuple):
    """Verdicts of result lines, with the multi-turn replay's diagnostics."""

    verdicts: pd.DataFrame
    """One row per scored item (columns of :class:`Verdict`)."""
    multi_turn: pd.DataFrame
    """One row per scored multi-turn item (:data:`~.multi_turn_metrics.DETAIL_COLUMNS`)."""


def score_results(
    items: Sequence[AnyItem],
    results: Iterable[ResultLine],
    *,
    system: str,
    style: str = "auto",
    underscore_to_dot: bool = False,
    allow_missing: bool = False,
    model_name: str | None = None,
) -> pd.DataFrame:
    """The verdict frame of :func:`score` (without the multi-turn diagnostics)."""
    return score(
        items, results, system=system, style=style, underscore_to_dot=underscore_to_dot,
        allow_missing=allow_missing, model_name=model_name,
    ).verdicts  # fmt: skip


def score(
    items: Sequence[AnyItem],
    results: Iterable[ResultLine],
    *,
    system: str,
    style: str = "auto",
    underscore_to_dot: bool = False,
    allow_missing: bool = False,
    model_name: str | None = None,
) -> Scores:
    """Score result lines against their items (matched by id), as the official runner does.

    Every item of a category that has at least one result must have a result, unless
    ``allow_missing`` (the official ``--partial-eval``); items of other categories are
    ignored.

    Args:
        items: the loaded items (any category).
        results: result lines (:func:`~.data.read_results`, :func:`~.data.fetch_results`...).
        system: the system name recorded in the verdicts.
        style: the decoder (:func:`decode`).
        underscore_to_dot: the official model-config flag (see :func:`check`).
        allow_missing: skip items of a covered category that have no result.
        model_name: the official model folder name of multi-turn instances (default
            ``system``).

    Returns:
        The verdicts in item order, and the multi-turn diagnostics.

    Raises:
        BfclDataError: a result id that is not an item (naming file and line), or missing
            results.
        BackendUnavailable: multi-turn results without the official backend classes.
    """
    by_id = _index_results(items, results)
    covered = {line.category for line in by_id.values()}
    rows, details = [], []
    for item in items:
        if item.category not in covered:
            continue
        line = by_id.get(item.id)
        if line is None:
            if allow_missing:
                continue
            raise BfclDataError(f"{system}: no result for {item.id!r} ({item.category})")
        if isinstance(item, MultiTurnItem):
            verdict, detail = score_multi_turn_item(
                item, line.result, system=system, style=style, model_name=model_name
            )
            details.append(detail)
        elif isinstance(item, WebSearchItem):
            verdict = score_web_search_item(item, line.result, system=system, style=style)
        elif isinstance(item, MemoryItem):
            verdict = score_memory_item(item, line.result, system=system, style=style)
        else:
            verdict = score_item(item, line.result, system=system, style=style,
                                 underscore_to_dot=underscore_to_dot)  # fmt: skip
        rows.append(
            verdict._replace(
                latency=line.latency,
                input_token_count=line.input_token_count,
                output_token_count=line.output_token_count,
            )
        )
    return Scores(verdict_frame(rows), pd.DataFrame(details, columns=DETAIL_COLUMNS))


def verdict_frame(verdicts: Iterable[Verdict]) -> pd.DataFrame:
    """Verdicts -> the verdict frame (object columns, so a missing value stays ``None``)."""
    frame = pd.DataFrame(list(verdicts), columns=Verdict._fields, dtype=object)
    return frame.astype({"valid": bool})


def _index_results(
    items: Sequence[AnyItem], results: Iterable[ResultLine]
) -> dict[str, ResultLine]:
    known = {item.id for item in items}
    by_id: dict[str, ResultLine] = {}
    for line in results:
        where = f"{line.source or 'results'}:{line.line}" if line.line else line.source or "results"
        if line.id not in known:
            raise BfclDataError(f"{where}: unknown id {line.id!r} (not among the loaded items)")
        if line.id in by_id:
            raise BfclDataError(f"{where}: duplicate result for {line.id!r}")
        by_id[line.id] = line
    return by_id


def calls_json(calls: Iterable[Call]) -> list[dict[str, Any]]:
    """Calls in the official decoded shape ``[{name: {param: value}}]``, JSON-safe."""
    return [{call.name: _jsonable(call.args)} for call in calls]


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k if isinstance(k, str) else str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)  # bytes, complex: as the official make_json_serializable


# --------------------------------------------------------------------------- reference answers


def correct_calls(item: Item) -> list[Call]:
    """A correct answer built from the possible answer: the first accepted value of each
    parameter, optional ones (accepting ``""``) left out unless the doc requires them."""
    calls = []
    for answer in item.possible_answer or []:
        name, accepted = next(iter(answer.items()))
        doc = find_doc(item.functions, name)
        calls.append(Call(name, _correct_args(doc["parameters"], accepted)))
    return calls


def _correct_args(schema: dict[str, Any], accepted: Mapping[str, Any]) -> dict[str, Any]:
    props, required = schema.get("properties", {}), set(schema.get("required", []))
    args = {}
    for param, values in accepted.items():
        first = _first_option(values, param in required)
        if first is not _OMIT:
            args[param] = _correct_value(first, props.get(param) or {})
    return args


_OMIT = object()


def _first_option(values: Any, required: bool) -> Any:
    """The first accepted value; ``_OMIT`` for an optional one ("" accepted) or none left."""
    options = [v for v in as_options(values) if not (type(v) is str and v == "")]
    if not options or ("" in as_options(values) and not required):
        return _OMIT
    return options[0]


def _correct_value(value: Any, spec: dict[str, Any]) -> Any:
    # A dict answer maps each key to its accepted values; the checker looks one level deep.
    if spec.get("type") == "dict" and isinstance(value, dict):
        return _dict_answer(value)
    items = spec.get("items") or {}
    if spec.get("type") == "array" and items.get("type") == "dict" and isinstance(value, list):
        return [_dict_answer(v) if isinstance(v, dict) else v for v in value]
    return value


def _dict_answer(answer: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key, values in answer.items():
        first = _first_option(values, required=False)
        if first is not _OMIT:
            out[key] = first
    return out


def render_calls(calls: Sequence[Call]) -> str:
    """Calls in the Python syntax prompt mode asks for: ``[f(a=1, b='x'), g()]``."""
    rendered = (
        f"{call.name}({', '.join(f'{k}={v!r}' for k, v in call.args.items())})" for call in calls
    )
    return f"[{', '.join(rendered)}]"
