"""Make tests/bfcl/format_sensitivity_oracle.json: the official format-sensitivity prompts and
verdicts, for tests/bfcl/test_format_sensitivity.py.

Two steps, two Python environments (bfcl-eval's model handlers need tree-sitter, which
evalbench's environment does not install):

    EVALBENCH_DATA_MIRROR=... .venv/bin/python tests/bfcl/make_format_oracle.py answers /tmp/fs.json
    ~/.cache/evalbench/bench-peers/bfcl-venv/bin/python tests/bfcl/make_format_oracle.py official /tmp/fs.json

``answers`` writes model answers in every format (simulated answers to every 7th case, with
planned mistakes, and hand-written tricky ones); ``official`` adds, from the installed
bfcl-eval 2026.3.23, each answer's official verdict, the digest of the official prompts of
each format over the 200 items, and the default prompt of prompt mode, and writes the oracle.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

ORACLE = Path(__file__).with_name("format_sensitivity_oracle.json")
TRICKY = [
    "",
    "I cannot help with that.",
    "```json\n[]\n```",
    '[{"function": "f", "parameters": {"a": 1}}',
    '{"function": "f", "parameters": {"a": 1}}',
    '[{"function": "f"}]',
    '[{"name": "f", "parameters": {}}]',
    '[{"function": "f", "parameters": [1, 2]}]',
    "[1, 2]",
    "7",
    '"just text"',
    '<TOOLCALL>[{"function": "f", "parameters": {"a": 1}}]</TOOLCALL> extra',
    "<TOOLCALL>f(a=1)</TOOLCALL>",
    "<TOOLCALL>[f(a=1), g(b='x')]</TOOLCALL>",
    "<toolcall>f(a=1)</toolcall>",
    "f(a=1)",
    "Here: [f(a=1)]",
    "'[f(a=1)]'",
    '<functions><function name="f"><params><param name="a" value="1" type="integer"/>'
    "</params></function></functions>",
    '<functions><function name="f"><param name="a" value="x"/></function></functions>',
    '<functions><function name="f"><params><param name="a" value="1.5" type="integer"/>'
    "</params></function></functions>",
    '<functions><function name="f"><params><param name="a" value="[1, 2" type="array"/>'
    "</params></function></functions>",
    "<functions><function><params/></function></functions>",
    '<functions><function name="f"><param name="a" type="boolean"> True </param>'
    '<param name="b" type="dict">{\'k\': [1, 2]}</param><param name="c" type="null">x'
    "</param></function></functions>",
    '<functions><function name="f"><param type="string">v</param></function></functions>',
    '<functions><function name="f"><param name="a">unclosed</function></functions>',
    'Sure. <functions><function name="f"></function></functions> Done.',
    '```xml\n<functions><function name="g"><param name="b" type="float">2</param>'
    "</function></functions>\n```",
]


def answers(path: Path) -> None:
    """Our environment: simulated answers in every format, plus the tricky ones."""
    import numpy as np

    from evalbench.bfcl.data import load_format_items
    from evalbench.bfcl.format_sensitivity import CONFIGS, cases
    from evalbench.bfcl.sim import plan_mistake, sim_format_respond
    from evalbench.models import SimSpec

    knobs = SimSpec(accuracy=0.6, malformed_rate=0.1)
    rows = []
    for number, case in enumerate(cases(load_format_items())):
        if number % 7:
            continue
        rng = np.random.default_rng(number)
        mistake = plan_mistake(case.item, knobs, "prompt", rng)
        reply = sim_format_respond(None, knobs, rng, item=case.item, config=case.config,  # type: ignore[arg-type]
                                   mistake=mistake)  # fmt: skip
        rows.append({"id": case.id, "raw": reply.text})
    first = cases(load_format_items()[:1])
    for text in TRICKY:
        rows += [{"id": case.id, "raw": text} for case in first]
    path.write_text(json.dumps({"configs": list(CONFIGS), "answers": rows}))


def official(path: Path) -> None:
    """bfcl-eval's environment: the official verdicts and prompts."""
    from bfcl_eval.constants.enums import Language, ReturnFormat
    from bfcl_eval.constants.model_config import MODEL_CONFIG_MAPPING
    from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker
    from bfcl_eval.model_handler.utils import (
        default_decode_ast_prompting,
        parse_prompt_variation_params,
        system_prompt_pre_processing_chat_model,
    )
    from bfcl_eval.utils import (
        get_all_format_sensitivity_configs,
        is_function_calling_format_output,
        load_dataset_entry,
        load_format_sensitivity_ground_truth_entry,
    )

    data = json.loads(path.read_text())
    model = next(k for k, v in MODEL_CONFIG_MAPPING.items() if not v.underscore_to_dot)
    assert data["configs"] == get_all_format_sensitivity_configs()
    entries = load_dataset_entry("format_sensitivity")
    truths = load_format_sensitivity_ground_truth_entry()
    by_id = {e["id"]: (e, t["ground_truth"]) for e, t in zip(entries, truths, strict=True)}

    def verdict(case_id: str, raw: str) -> dict:
        entry, truth = by_id[case_id]
        ret, tag, *_ = parse_prompt_variation_params(case_id.split(":")[1])
        try:
            decoded = default_decode_ast_prompting(raw, ReturnFormat(ret), tag)
        except Exception:
            return {"valid": False, "error_type": "ast_decoder:decoder_failed"}
        if not is_function_calling_format_output(decoded):
            return {"valid": False, "error_type": "ast_decoder:decoder_wrong_output_format"}
        out = ast_checker(entry["function"], decoded, truth, Language.PYTHON,
                          case_id.split(":")[-1], model)  # fmt: skip
        return {"valid": out["valid"], "error_type": None if out["valid"] else out["error_type"]}

    def digest(texts: list) -> str:
        return hashlib.sha256(json.dumps(texts, sort_keys=True).encode()).hexdigest()

    prompts: dict[str, list] = {}
    for entry in entries:
        messages = system_prompt_pre_processing_chat_model(
            [dict(m) for m in entry["question"][0]], entry["function"], entry["id"]
        )
        prompts.setdefault(entry["id"].split(":")[1], []).append(messages)
    plain = []
    for category in dict.fromkeys(e["id"].split(":")[2].rsplit("_", 1)[0] for e in entries):
        for entry in load_dataset_entry(category)[:5]:
            plain.append(system_prompt_pre_processing_chat_model(
                [dict(m) for m in entry["question"][0]], entry["function"], entry["id"]))  # fmt: skip
    oracle = {
        "ids": digest([e["id"] for e in entries]),
        "prompts": {config: digest(rows) for config, rows in prompts.items()},
        "prompt_example": prompts[data["configs"][1]][0][0]["content"],
        "prompt_mode": digest(plain),
        "answers": [{**row, **verdict(row["id"], row["raw"])} for row in data["answers"]],
    }
    ORACLE.write_text(json.dumps(oracle, indent=0, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    {"answers": answers, "official": official}[sys.argv[1]](Path(sys.argv[2]))
