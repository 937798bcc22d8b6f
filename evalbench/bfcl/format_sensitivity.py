"""BFCL format sensitivity: the same items asked in the official prompt-format variants.

The leaderboard's ``format_sensitivity`` category asks 200 single-turn Python items (the ids
of ``BFCL_v4_format_sensitivity.json``) of a prompting model in 26 system-prompt formats:
the return format (Python calls, JSON, verbose or concise XML) × with or without
``<TOOLCALL>`` tags × the function docs as Python, XML or JSON (24), plus a markdown prompt
and an "experimental" wording of the default. Each answer is decoded in its own format and
checked by the AST checker; the leaderboard reports the accuracy per format, the largest
difference between two formats and their standard deviation.

Reimplements (does not import or copy the code of) ``get_all_format_sensitivity_configs``,
``load_format_sensitivity_test_cases``, ``formulate_system_prompt``, ``format_function_doc``,
``default_decode_ast_prompting``/``ast_parse`` and the JSON and XML parsers of ``bfcl-eval``
2026.3.23 (gorilla commit 6ea5797); the prompt texts are the official ones
(``bfcl_eval/constants/default_prompts.py``, Apache-2.0). Official quirks kept: every function
description carries the Python hint twice (the entries are hinted when their category is
loaded and again as format-sensitivity entries); a JSON list that does not parse is *no*
call; an XML value is read by its ``type`` attribute (``int``, ``float``, ``literal_eval``).
"""

from __future__ import annotations

import ast
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from .decode import (
    DECODER_FAILED,
    MAX_OUTPUT_CHARS,
    WRONG_FORMAT,
    WRONG_FORMAT_MESSAGE,
    Decoded,
    parse_python_calls,
)
from .schema import Call, Item

RETURN_FORMATS = ("python", "json", "verbose_xml", "concise_xml")
DOC_FORMATS = ("python", "xml", "json")
DEFAULT_CONFIG = (
    "ret_fmt=python&tool_call_tag=False&func_doc_fmt=json&prompt_fmt=plaintext&style=classic"
)
"""The leaderboard's default prompt (what prompt mode asks everywhere else)."""
CONFIGS = (
    *(
        f"ret_fmt={ret}&tool_call_tag={tag}&func_doc_fmt={doc}&prompt_fmt=plaintext&style=classic"
        for ret in RETURN_FORMATS
        for tag in ("True", "False")
        for doc in DOC_FORMATS
    ),
    "ret_fmt=python&tool_call_tag=False&func_doc_fmt=json&prompt_fmt=markdown&style=classic",
    "ret_fmt=python&tool_call_tag=False&func_doc_fmt=json&prompt_fmt=plaintext&style=experimental",
)
"""The 26 formats, in the official order (``get_all_format_sensitivity_configs``)."""
_CONFIG = re.compile(
    r"ret_fmt=(?P<ret>python|json|verbose_xml|concise_xml)&tool_call_tag=(?P<tag>True|False)"
    r"&func_doc_fmt=(?P<doc>python|xml|json)&prompt_fmt=(?P<prompt>plaintext|markdown)"
    r"&style=(?P<style>classic|experimental)"
)
HINT = " Note that the provided function is in Python 3 syntax."

OUTPUT_FORMATS = {
    "python": "[func_name1(params_name1=params_value1, params_name2=params_value2...), "
    "func_name2(params)]",
    "json": '```json\n[{"function":"func_name1","parameters":{"param1":"value1","param2":'
    '"value2"...}},{"function":"func_name2","parameters":{"param":"value"}}]\n```',
    "verbose_xml": '<functions><function name="func_name1"><params><param name="param1" '
    'value="value1" type="type1"/><param name="param2" value="value2" type="type2"/>...'
    '</params></function><function name="func_name2"><params><param name="param3" '
    'value="value3" type="type3"/></params></function></functions>',
    "concise_xml": '<functions><function name="func_name1"><param name="param1" type="type1">'
    'value1</param><param name="param2" type="type2">value2</param>...</function><function '
    'name="func_name2"><param name="param3" type="type3">value</param></function></functions>',
}
_XML_TYPES = (
    "The type fields of the parameters in your function calls must be one of: string, "
    "integer, float, boolean, array, dict, or tuple."
)
PARAM_TYPES = {"python": "", "json": "", "verbose_xml": _XML_TYPES, "concise_xml": _XML_TYPES}
STYLES = {
    "classic": {
        "persona": "You are an expert in composing functions.",
        "task": "You are given a question and a set of possible functions. Based on the "
        "question, you will need to make one or more function/tool calls to achieve the "
        "purpose. If none of the functions can be used, point it out. If the given question "
        "lacks the parameters required by the function, also point it out.",
        "no_tag": "You should only return the function calls in your response.\n\nIf you "
        "decide to invoke any of the function(s), you MUST put it in the format of "
        "{output_format}. {param_types} You SHOULD NOT include any other text in the response.",
        "tag": "You should only return the function calls in the <TOOLCALL> section. If you "
        "decide to invoke any of the function(s), you MUST put it in the format of "
        "<TOOLCALL>{output_format}</TOOLCALL>. {param_types} You SHOULD NOT include any other "
        "text in the response.",
        "multiturn": "At each turn, you should try your best to complete the tasks requested "
        "by the user within the current turn. Continue to output functions to call until you "
        "have fulfilled the user's request to the best of your ability. Once you have no more "
        "functions to call, the system will consider the current turn complete and proceed to "
        "the next turn or task.",
        "tools": "Here is a list of functions in {format} format that you can invoke.\n"
        "{functions}\n",
    },
    "experimental": {
        "persona": "You are an expert in generating structured function calls.",
        "task": "You are given a user query and a set of available functions. Your task is to "
        "produce one or more function/tool calls to fulfill the user's request. If no "
        "suitable function exists, or required parameters are missing, clearly indicate this.",
        "no_tag": "Respond with only the function calls.\n\nYou MUST format it exactly as "
        "{output_format}. {param_types} Do NOT include any other text.",
        "tag": "Return only the function calls enclosed in <TOOLCALL> tags.\n\nYou MUST format "
        "it exactly as <TOOLCALL>{output_format}</TOOLCALL>. {param_types} Do NOT include any "
        "other text.",
        "multiturn": "At every turn, aim to complete the user's tasks within that turn. "
        "Continue emitting function calls until the request is satisfied to the best of your "
        "ability. Once no more calls are needed, the system will proceed to the next turn.",
        "tools": "Below is a list of callable functions in the {format} style:\n{functions}\n",
    },
}
TEMPLATES = {
    "plaintext": "{persona}{task}\n\n{tool_call_format}\n\n{multiturn_behavior}\n\n"
    "{available_tools}",
    "markdown": "{persona}\n\n## Task\n{task}\n\n## Tool Call Format\n{tool_call_format}\n\n"
    "## Multi-turn Behavior\n{multiturn_behavior}\n\n## Available Tools\n{available_tools}",
}


class Config(NamedTuple):
    """One prompt format (``ret_fmt=...&tool_call_tag=...&...``, parsed)."""

    return_format: str
    tool_call_tag: bool
    doc_format: str
    prompt_format: str
    style: str


class Case(NamedTuple):
    """One item asked in one format."""

    id: str
    """``format_sensitivity_<index>:<config>:<item id>`` (official)."""
    config: str
    item: Item


def parse_config(config: str) -> Config:
    """The parts of a format string.

    Raises:
        ValueError: not one of the official formats' shape.
    """
    match = _CONFIG.fullmatch(config)
    if match is None:
        raise ValueError(f"not a format-sensitivity config: {config!r}")
    return Config(match["ret"], match["tag"] == "True", match["doc"], match["prompt"],
                  match["style"])  # fmt: skip


def label(config: str) -> str:
    """A short name of a format: ``json · tags · docs xml``; the two variants of the default
    are ``markdown prompt`` and ``experimental wording``."""
    fmt = parse_config(config)
    if fmt.prompt_format == "markdown":
        return "markdown prompt"
    if fmt.style == "experimental":
        return "experimental wording"
    tags = "tags" if fmt.tool_call_tag else "no tags"
    return f"{fmt.return_format} · {tags} · docs {fmt.doc_format}"


def cases(items: Sequence[Item], configs: Sequence[str] = CONFIGS) -> list[Case]:
    """Every item in every format, in the official order and with the official ids (the
    index counts items × formats)."""
    pairs = [(item, config) for item in items for config in configs]
    return [Case(f"format_sensitivity_{i}:{config}:{item.id}", config, item)
            for i, (item, config) in enumerate(pairs)]  # fmt: skip


# --------------------------------------------------------------------------- prompts


def system_prompt(config: str, functions: Sequence[dict[str, Any]], *, hints: int = 2) -> str:
    """The system prompt of one format (official ``formulate_system_prompt``) for the
    function docs as the data has them, each description followed by the Python hint
    ``hints`` times (format-sensitivity entries: twice; an ordinary prompt-mode item at the
    pinned commit: once)."""
    fmt = parse_config(config)
    style = STYLES[fmt.style]
    call_format = style["tag" if fmt.tool_call_tag else "no_tag"].format(
        output_format=OUTPUT_FORMATS[fmt.return_format],
        param_types=PARAM_TYPES[fmt.return_format],
    )
    docs = [{**doc, "description": str(doc.get("description", "")) + HINT * hints}
            for doc in functions]  # fmt: skip
    tools = style["tools"].format(format=fmt.doc_format, functions=function_doc(docs, fmt))
    return TEMPLATES[fmt.prompt_format].format(
        persona=style["persona"], task=style["task"], tool_call_format=call_format,
        multiturn_behavior=style["multiturn"], available_tools=tools,
    )  # fmt: skip


def function_doc(docs: Sequence[dict[str, Any]], fmt: Config) -> str:
    """The function docs in the format's doc format (official ``format_function_doc``)."""
    if fmt.doc_format == "xml":
        return "\n".join(_xml_function(doc) for doc in docs)
    if fmt.doc_format == "python":
        return "\n\n".join(part for doc in docs for part in (_python_function(doc), "\n"))
    return json.dumps(list(docs), indent=4)


def messages(case: Case) -> list[dict[str, str]]:
    """The chat messages of one case: its format's system prompt first (a question's own
    system message is appended to it, as in prompt mode)."""
    asked = [{"role": m["role"], "content": m["content"]} for t in case.item.question for m in t]
    prompt = system_prompt(case.config, case.item.functions)
    if asked and asked[0]["role"] == "system":
        return [{"role": "system", "content": f"{prompt}\n\n{asked[0]['content']}"}, *asked[1:]]
    return [{"role": "system", "content": prompt}, *asked]


def _xml_param(name: str, meta: dict[str, Any], required: list[str] | None, level: int) -> str:
    indent = " " * level * 2
    kind, desc = meta.get("type", "string"), meta.get("description", "")
    needed = "true" if required is None or name in required else "false"
    if "enum" in meta:
        desc += f" Enum values: {meta['enum']}."
    if "items" in meta and "type" in meta["items"]:
        kind = f"{kind}[{meta['items']['type']}]"
    elif "additionalProperties" in meta:
        kind = f"{kind}[{meta['additionalProperties'].get('type', 'string')}]"
    attrs = [f'name="{name}", type="{kind}", required="{needed}"']
    if "default" in meta:
        attrs.append(f'default="{meta["default"]!r}"')
    # sic: the official code drops every comma of the attributes, defaults included
    parts = [f"{indent}<param " + " ".join(attrs).replace(",", "") + ">\n",
             f"{indent}  <desc>{desc}</desc>\n"]  # fmt: skip
    if "properties" in meta:
        parts.append(f"{indent}  <params>\n")
        parts += [_xml_param(child, child_meta, meta.get("required"), level + 2)
                  for child, child_meta in meta["properties"].items()]  # fmt: skip
        parts.append(f"{indent}  </params>\n")
    return "".join([*parts, f"{indent}</param>\n"])


def _xml_function(doc: dict[str, Any]) -> str:
    schema = doc["parameters"]
    params = [_xml_param(name, meta, schema.get("required"), 2)
              for name, meta in schema.get("properties", {}).items()]  # fmt: skip
    return (f'<function name="{doc["name"]}">\n  <desc>{doc.get("description", "")}</desc>\n'
            f"  <params>\n{''.join(params)}  </params>\n</function>\n")  # fmt: skip


_PY_TYPES = {"string": "str", "number": "float", "integer": "int", "boolean": "bool"}


def _py_type(meta: dict[str, Any]) -> str:
    kind = meta.get("type", "string")
    if kind in _PY_TYPES:
        return _PY_TYPES[kind]
    if kind in ("array", "list", "tuple") and "items" in meta:
        return f"list[{_py_type(meta['items'])}]"
    if kind in ("object", "dict"):
        extra = meta.get("additionalProperties")
        return f"dict[str, {_py_type(extra)}]" if extra is not None else "dict"
    return str(kind)


def _py_param(name: str, meta: dict[str, Any], depth: int) -> list[str]:
    desc = meta.get("description", "")
    if "enum" in meta:
        desc += f" Enum values: {meta['enum']}."
    default = f", default={meta['default']!r}" if "default" in meta else ""
    lines = [f"{' ' * (8 + 4 * depth)}{name} ({_py_type(meta)}{default}): {desc}\n"]
    for child, child_meta in meta.get("properties", {}).items():
        lines += _py_param(child, child_meta, depth + 1)
    return lines


def _python_function(doc: dict[str, Any]) -> str:
    lines = [f"# Function: {doc['name']}\n", '    """\n', f"    {doc.get('description', '')}\n\n"]
    props = doc.get("parameters", {}).get("properties", {})
    if props:
        lines.append("    Args:\n")
        for name, meta in props.items():
            lines += _py_param(name, meta, 0)
    return "".join([*lines, '    """\n'])


# --------------------------------------------------------------------------- decoding

_TAG = re.compile(r"<TOOLCALL>(.*?)</TOOLCALL>", re.DOTALL)
_BRACKETS = re.compile(r"\[.*\]", re.DOTALL)
_JSON_CALLS = re.compile(r"\[\s*{.*?}\s*(?:,\s*{.*?}\s*)*\]", re.DOTALL)
_FUNCTIONS = re.compile(r"<functions>(.*?)</functions>", re.DOTALL)


class _Failed(Exception):
    """The official decoder raised: a decode failure with this message."""


def decode_output(raw: Any, config: str) -> Decoded:
    """Decode one answer in its format (official ``default_decode_ast_prompting``: strip
    backticks, new lines and spaces, wrap in ``[...]``, take the ``<TOOLCALL>`` section when
    the format has tags, parse the return format), never evaluating it."""
    fmt = parse_config(config)
    if not isinstance(raw, str):
        kind = type(raw).__name__
        return Decoded(None, DECODER_FAILED, f"'{kind}' object has no attribute 'strip'")
    if len(raw) > MAX_OUTPUT_CHARS:
        return Decoded(None, DECODER_FAILED, f"output longer than {MAX_OUTPUT_CHARS} characters")
    text = raw.strip("`\n ")
    text = text if text.startswith("[") else "[" + text
    text = text if text.endswith("]") else text + "]"
    try:
        calls = _PARSERS[fmt.return_format](_tagged(text) if fmt.tool_call_tag else text)
    except (_Failed, RecursionError, MemoryError) as exc:
        return Decoded(None, DECODER_FAILED, str(exc))
    if any(type(call.args) is not dict for call in calls):
        return Decoded(None, WRONG_FORMAT, WRONG_FORMAT_MESSAGE)
    return Decoded(tuple(calls))


def _tagged(text: str) -> str:
    match = _TAG.search(text)
    if match is None:
        raise _Failed(f"No tool call tag found in input string: {text}")
    return match.group(1).strip()


def _python(text: str) -> list[Call]:
    try:
        return list(parse_python_calls(text.strip().strip("'")))
    except ValueError as exc:
        raise _Failed(str(exc)) from exc


def _json(text: str) -> list[Call]:
    found = _BRACKETS.search(text)
    text = found.group(0) if found else text
    found = _JSON_CALLS.search(text)
    try:
        listed = json.loads(found.group(0) if found else text)
    except json.JSONDecodeError:
        return []  # official: an unparsable list is no call
    except ValueError as exc:  # e.g. an integer past Python's digit limit
        raise _Failed(str(exc)) from exc
    if listed is None or isinstance(listed, (bool, int, float)):
        raise _Failed(f"'{type(listed).__name__}' object is not iterable")
    calls = []
    for entry in listed if isinstance(listed, list) else []:  # a dict or string: no call
        if isinstance(entry, dict):
            if "function" not in entry or "parameters" not in entry:
                raise _Failed(repr("function" if "function" not in entry else "parameters"))
            calls.append(Call(_name(entry["function"]), entry["parameters"]))
    return calls


def _name(value: Any) -> str:
    if isinstance(value, (dict, list)):
        raise _Failed(f"unhashable type: '{type(value).__name__}'")
    return str(value)


def _xml_root(text: str) -> ET.Element:
    found = _FUNCTIONS.search(text)
    if found is None:
        raise _Failed(f"No XML function call found in input string: {text}. Missing "
                      "<functions> tag.")  # fmt: skip
    try:
        return ET.fromstring(found.group(0))
    except ET.ParseError as exc:
        raise _Failed(str(exc)) from exc


def _xml_value(raw: str, kind: str) -> Any:
    """Official ``convert_value_by_type``."""
    try:
        if kind == "integer":
            return int(raw)
        if kind == "float":
            return float(raw)
        if kind in ("array", "tuple", "object", "dict"):
            return ast.literal_eval(raw)
    except (ValueError, SyntaxError, TypeError) as exc:
        raise _Failed(str(exc)) from exc
    if kind == "boolean":
        return raw.lower() == "true"
    return None if kind == "null" else raw


def _verbose_xml(text: str) -> list[Call]:
    calls = []
    for function in _xml_root(text).findall("function"):
        name = _attribute(function, "name")
        holder = function.find("params")
        params = (holder if holder is not None else function).findall("param")
        args = {p.attrib.get("name"): _xml_value(p.attrib.get("value", ""),
                                                 p.attrib.get("type", "string"))
                for p in params}  # fmt: skip
        calls.append(Call(name, args))
    return calls


def _concise_xml(text: str) -> list[Call]:
    calls = []
    for function in _xml_root(text).findall("function"):
        name = _attribute(function, "name")
        args = {_attribute(p, "name"): _xml_value((p.text or "").strip(),
                                                  p.attrib.get("type", "string"))
                for p in function.findall("param")}  # fmt: skip
        calls.append(Call(name, args))
    return calls


def _attribute(element: ET.Element, name: str) -> str:
    if name not in element.attrib:
        raise _Failed(repr(name))
    return element.attrib[name]


_PARSERS: dict[str, Callable[[str], list[Call]]] = {
    "python": _python,
    "json": _json,
    "verbose_xml": _verbose_xml,
    "concise_xml": _concise_xml,
}


# --------------------------------------------------------------------------- answers


def render(calls: Sequence[Call], config: str) -> str:
    """Calls written as the format asks (for simulated systems and tests)."""
    fmt = parse_config(config)
    text = _RENDER[fmt.return_format](calls)
    return f"<TOOLCALL>{text}</TOOLCALL>" if fmt.tool_call_tag else text


def _render_python(calls: Sequence[Call]) -> str:
    args = [", ".join(f"{k}={v!r}" for k, v in c.args.items()) for c in calls]
    return "[" + ", ".join(f"{c.name}({a})" for c, a in zip(calls, args, strict=True)) + "]"


def _render_json(calls: Sequence[Call]) -> str:
    body = json.dumps([{"function": c.name, "parameters": c.args} for c in calls])
    return f"```json\n{body}\n```"


_XML_KIND = {bool: "boolean", int: "integer", float: "float", str: "string", list: "array",
             tuple: "tuple", dict: "dict"}  # fmt: skip


def _xml_text(value: Any) -> tuple[str, str]:
    kind = _XML_KIND.get(type(value), "string")
    text = str(value).lower() if kind == "boolean" else value if kind == "string" else repr(value)
    return kind, str(text)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace('"', "&quot;")


def _render_verbose_xml(calls: Sequence[Call]) -> str:
    out = []
    for call in calls:
        params = "".join(
            f'<param name="{k}" value="{_escape(_xml_text(v)[1])}" type="{_xml_text(v)[0]}"/>'
            for k, v in call.args.items()
        )
        out.append(f'<function name="{call.name}"><params>{params}</params></function>')
    return f"<functions>{''.join(out)}</functions>"


def _render_concise_xml(calls: Sequence[Call]) -> str:
    out = []
    for call in calls:
        params = "".join(
            f'<param name="{k}" type="{_xml_text(v)[0]}">{_escape(_xml_text(v)[1])}</param>'
            for k, v in call.args.items()
        )
        out.append(f'<function name="{call.name}">{params}</function>')
    return f"<functions>{''.join(out)}</functions>"


_RENDER: dict[str, Callable[[Sequence[Call]], str]] = {
    "python": _render_python,
    "json": _render_json,
    "verbose_xml": _render_verbose_xml,
    "concise_xml": _render_concise_xml,
}
