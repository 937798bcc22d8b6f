"""Benchmark: decode and check every item of the three public BFCL result sets, side by side
with the official checker on the same items in the same run.

Loads the eleven categories from the pinned files, reads the registered result files of
glyphh-ada-1.1 (FC format), gemma4-e4b-toolcall-v02 and AIREV-Agent-0.8B (Python call
strings) and measures, best of ``BENCH_REPEATS`` passes (default 5) with the first pass
shown too:

- ``decode + AST check``: evalbench's :func:`bfcl.decode` + :func:`bfcl.check` per item, on
  all 9,317 items and on the 7,053 items of the AST categories (target: ≥ 25,000 items/s
  and faster than the official checker);
- ``score_results``: the whole scoring path (verdict records, the verdict frame);
- the **official checker** (``bfcl-eval`` 2026.3.23): its own per-entry functions
  ``eval_runner._evaluate_single_ast_entry`` / ``_evaluate_single_relevance_entry`` with
  the official handlers' ``decode_ast`` (the OpenAI handler's, FC or prompting), run by the
  Python of a bench-only virtualenv (``tests/bench_peers.py`` creates it from PyPI; or set
  ``EVALBENCH_BFCL_PEER_PYTHON``). Without it the row is skipped with the set-up command.
  Its verdicts are compared with evalbench's, item by item;
- **multi-turn** (issue 27): glyphh-ada-1.1's 800 multi-turn results decoded, replayed in
  the official backends and checked by evalbench (``check_multi_turn``) and by the official
  ``_evaluate_single_multi_turn_entry`` (OpenAI FC handler's ``decode_execute``) in the
  same run, verdicts compared (target: evalbench ≥ 2× faster); needs the backends
  (``make setup``);
- **Java/JavaScript**: glyphh-ada-1.1's 150 results, decode + ``check_java_js``, beside
  the Python AST path's rate (target: as fast).

Writes ``outputs/bench/bfcl.json`` (or ``$EVALBENCH_OUTPUTS/bench/bfcl.json``); needs the data
(``EVALBENCH_DATA_MIRROR`` or the download cache).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_peers import PEERS

ROOT = Path(__file__).resolve().parents[1]
REPEATS = int(os.environ.get("BENCH_REPEATS", 5))
TARGET_ITEMS_PER_S = 25_000
PEER_ENV = "EVALBENCH_BFCL_PEER_PYTHON"
OUTPUTS = Path(os.environ.get("EVALBENCH_OUTPUTS") or ROOT / "outputs")
DEFAULT_PEER = PEERS / "bfcl-venv" / "bin" / "python"

# Runs in the peer virtualenv: the official per-entry evaluation, timed on the same entries.
OFFICIAL = r"""
import gc, json, sys, time
from bfcl_eval.constants.enums import Language, ReturnFormat
from bfcl_eval.eval_checker import eval_runner as runner
from bfcl_eval.model_handler.api_inference.openai_completion import OpenAICompletionsHandler

entries = json.load(open(sys.argv[1]))
repeats = int(sys.argv[2])

def handler(fc):
    # decode_ast needs only is_fc_model; the constructor would open an API client
    h = object.__new__(OpenAICompletionsHandler)
    h.is_fc_model = fc
    return h

HANDLERS = {True: handler(True), False: handler(False)}
# the checker reads only the model's underscore_to_dot flag: off, as for the three result sets
from bfcl_eval.constants.model_config import MODEL_CONFIG_MAPPING
MODEL = next(k for k, v in MODEL_CONFIG_MAPPING.items()
             if not v.underscore_to_dot and "_" not in k).replace("/", "_")

def one(e):
    h = HANDLERS[e["fc"]]
    if e["relevance"]:
        return runner._evaluate_single_relevance_entry(
            h, e["id"], e["result"], e["prompt"], MODEL, e["category"])
    return runner._evaluate_single_ast_entry(
        h, e["id"], e["result"], e["ground_truth"], e["prompt"], MODEL, e["category"],
        Language.PYTHON, ReturnFormat.PYTHON, False)

def timed(subset):
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        verdicts = [one(e) for e in subset]
        seconds.append(time.perf_counter() - start)
    return seconds, verdicts

import bfcl_eval
from importlib.metadata import version
all_s, verdicts = timed(entries)
ast_s, _ = timed([e for e in entries if not e["relevance"]])
print(json.dumps({"version": version("bfcl-eval"), "all_s": all_s, "ast_s": ast_s,
                  "valid": [bool(v["valid"]) for v in verdicts],
                  "error_type": [v.get("error_type") for v in verdicts]}))
"""


# Runs in the peer virtualenv: the official multi-turn evaluation of the same entries. The
# official instances live in module globals keyed by model name and id: a fresh model name
# per pass, or a second pass would replay on the first pass's state.
OFFICIAL_MULTI_TURN = r"""
import json, sys, time
from bfcl_eval.eval_checker import eval_runner as runner
from bfcl_eval.model_handler.api_inference.openai_completion import OpenAICompletionsHandler

entries = json.load(open(sys.argv[1]))
repeats = int(sys.argv[2])
handler = object.__new__(OpenAICompletionsHandler)
handler.is_fc_model = True
seconds, verdicts = [], []
for rep in range(repeats):
    start = time.perf_counter()
    verdicts = [runner._evaluate_single_multi_turn_entry(
        handler, e["id"], e["result"], e["ground_truth"], dict(e["prompt"]), f"bench{rep}",
        e["category"]) for e in entries]
    seconds.append(time.perf_counter() - start)
from importlib.metadata import version
print(json.dumps({"version": version("bfcl-eval"), "seconds": seconds,
                  "valid": [bool(v["valid"]) for v in verdicts],
                  "error_type": [v.get("error", {}).get("error_type") if not v["valid"] else None
                                 for v in verdicts]}))
"""


def main() -> None:
    from evalbench import bfcl
    from evalbench.records import to_json, write_atomic

    start = time.perf_counter()
    items, load_s = _timed(lambda: bfcl.load("python"))
    results, read_s = _timed(
        lambda: {
            model: [r for r in bfcl.fetch_results(model) if r.category in bfcl.schema.PYTHON]
            for model in bfcl.PUBLIC_SYSTEMS
        }
    )
    work = _work(bfcl, items, results)
    ast_work = [w for w in work if w[0].category not in bfcl.RELEVANCE_CATEGORIES]
    ours_all, ours_ast = _ours(bfcl, work), _ours(bfcl, ast_work)
    passes = [_timed(lambda: _score_all(bfcl, items, results)) for _ in range(REPEATS)]
    verdicts, score_s = passes[0][0], min(seconds for _, seconds in passes)
    summary, summarize_s = _timed(lambda: bfcl.summarize(verdicts))
    official = _official(work)
    report = {
        "items_checked": len(verdicts),
        "ast_items": len(ast_work),
        "per_system": verdicts.groupby("system").size().to_dict(),
        "accuracy": verdicts.groupby("system")["valid"].mean().round(4).to_dict(),
        "decode_plus_check": {"all_items": ours_all, "ast_items": ours_ast},
        "official_checker": official,
        "score_results": {
            "items_per_s_best": round(len(verdicts) / score_s, 1),
            "items_per_s_first_pass": round(len(verdicts) / passes[0][1], 1),
            "note": "the whole scoring path: decode, check, verdict records, verdict frame",
        },
        "target_items_per_s": TARGET_ITEMS_PER_S,
        "meets_target": ours_all["items_per_s_best"] >= TARGET_ITEMS_PER_S,
        "faster_than_official": _faster(ours_all, ours_ast, official),
        "load_s": round(load_s, 3),
        "read_results_s": round(read_s, 3),
        "summarize_s": round(summarize_s, 3),
        "wall_s_load_to_summary": round(load_s + read_s + passes[0][1] + summarize_s, 3),
        "total_script_s": round(time.perf_counter() - start, 3),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "repeats": REPEATS,
        "machine": f"{os.cpu_count()} cores, python {sys.version.split()[0]}",
    }
    if isinstance(official.get("valid"), list):
        report["official_checker"] = _agreement(official, verdicts_of(bfcl, work))
    report["multi_turn"] = _multi_turn()
    report["java_javascript"] = _java_js(ours_ast)
    out = write_atomic(OUTPUTS / "bench" / "bfcl.json", to_json(report, indent=2) + "\n")
    print(to_json(report, indent=2))
    print(f"summary tables: {', '.join(summary._fields)}; wrote {out}")


def _work(bfcl: Any, items: list, results: dict) -> list[tuple[Any, Any, str, str]]:
    """(item, raw output, decode style, system) in the order score_results checks them."""
    work = []
    for model, lines in results.items():
        by_id = {line.id: line for line in lines}
        style = bfcl.PUBLIC_SYSTEMS[model]
        work += [(item, by_id[item.id].result, style, model) for item in items
                 if item.id in by_id]  # fmt: skip
    return work


def _ours(bfcl: Any, work: list) -> dict:
    """decode + check per item, best and first of REPEATS passes."""
    decode, check = bfcl.decode, bfcl.check
    seconds = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        for item, raw, style, _model in work:
            check(item, decode(raw, style))
        seconds.append(time.perf_counter() - started)
    return _rates(len(work), seconds)


def verdicts_of(bfcl: Any, work: list) -> list[tuple[bool, str | None]]:
    """evalbench's (valid, error type) per work item."""
    out = []
    for item, raw, style, _model in work:
        result = bfcl.check(item, bfcl.decode(raw, style))
        out.append((result.valid, None if result.valid else result.error_type))
    return out


def _rates(n: int, seconds: list[float]) -> dict:
    return {"items": n, "items_per_s_best": round(n / min(seconds), 1),
            "items_per_s_first_pass": round(n / seconds[0], 1),
            "seconds": [round(s, 4) for s in seconds]}  # fmt: skip


def _official(work: list) -> dict:
    entries = [
        {"id": item.id, "category": item.category, "fc": style == "fc", "result": raw,
         "relevance": item.possible_answer is None, "ground_truth": item.possible_answer,
         "prompt": {"id": item.id, "function": item.functions}}
        for item, raw, style, _model in work
    ]  # fmt: skip
    peer = _peer(OFFICIAL, entries)
    if "skipped" in peer:
        return peer
    python = Path(os.environ.get(PEER_ENV) or DEFAULT_PEER)
    ast_n = sum(not e["relevance"] for e in entries)
    return {"package": f"bfcl-eval {peer['version']}", "python": str(python),
            "all_items": _rates(len(entries), peer["all_s"]),
            "ast_items": _rates(ast_n, peer["ast_s"]),
            "valid": peer["valid"], "error_type": peer["error_type"]}  # fmt: skip


def _agreement(official: dict, ours: list[tuple[bool, str | None]]) -> dict:
    valid, types = official.pop("valid"), official.pop("error_type")
    same_valid = sum(v == o[0] for v, o in zip(valid, ours, strict=True))
    same_type = sum(
        v == o[0] and (v or t == o[1]) for v, t, o in zip(valid, types, ours, strict=True)
    )
    official["same_verdict_as_evalbench"] = f"{same_valid} of {len(ours)}"
    official["same_error_type_as_evalbench"] = f"{same_type} of {len(ours)}"
    return official


def _faster(ours_all: dict, ours_ast: dict, official: dict) -> bool | None:
    if "all_items" not in official:
        return None
    return (ours_all["items_per_s_best"] > official["all_items"]["items_per_s_best"]
            and ours_ast["items_per_s_best"] > official["ast_items"]["items_per_s_best"])  # fmt: skip


def _multi_turn() -> dict:
    """800 multi-turn items: evalbench's check beside the official one, same entries."""
    from evalbench import bfcl
    from evalbench.bfcl import backends
    from evalbench.bfcl.multi_turn import check_multi_turn

    if not backends.available():
        return {"skipped": f"no official backends: {backends.INSTALL_HINT}"}
    items = bfcl.load("multi_turn")
    lines = {line.id: line.result for line in bfcl.fetch_results("glyphh-ada-1.1", "multi_turn")}
    seconds, ours = [], []
    for rep in range(REPEATS):
        started = time.perf_counter()
        ours = [check_multi_turn(it, lines[it.id], style="fc", model_name=f"bench{rep}")
                for it in items]  # fmt: skip
        seconds.append(time.perf_counter() - started)
    out = {"items": len(items), "evalbench": _rates(len(items), seconds)}
    entries = [
        {"id": it.id, "category": it.category, "result": lines[it.id],
         "ground_truth": it.ground_truth,
         "prompt": {"id": it.id, "initial_config": it.initial_config,
                    "involved_classes": it.involved_classes}}
        for it in items
    ]  # fmt: skip
    peer = _peer(OFFICIAL_MULTI_TURN, entries)
    if "skipped" in peer:
        return {**out, "official_checker": peer}
    official = _rates(len(items), peer["seconds"])
    same = sum(
        v == c.valid and (v or t == c.error_type)
        for v, t, c in zip(peer["valid"], peer["error_type"], ours, strict=True)
    )
    speedup = (
        official["items_per_s_best"]
        and out["evalbench"]["items_per_s_best"] / official["items_per_s_best"]
    )
    return {**out, "official_checker": {"package": f"bfcl-eval {peer['version']}", **official},
            "same_verdict_and_error_type": f"{same} of {len(items)}",
            "speedup_best": round(speedup, 2), "meets_2x_target": speedup >= 2}  # fmt: skip


def _java_js(python_ast: dict) -> dict:
    """decode + check of glyphh-ada-1.1's 150 Java/JavaScript results vs the Python AST rate."""
    from evalbench import bfcl
    from evalbench.bfcl.decode import decode
    from evalbench.bfcl.java_js import check_java_js

    items = bfcl.load("java_js")
    lines = {line.id: line.result for line in bfcl.fetch_results("glyphh-ada-1.1", "java_js")}
    seconds = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        for item in items:
            check_java_js(item, decode(lines[item.id], "fc"))
        seconds.append(time.perf_counter() - started)
    rates = _rates(len(items), seconds)
    return {**rates, "python_ast_items_per_s_best": python_ast["items_per_s_best"],
            "as_fast_as_python_ast": rates["items_per_s_best"] >= python_ast["items_per_s_best"]}  # fmt: skip


def _peer(program: str, entries: list) -> dict:
    """Run ``program`` in the bfcl-eval virtualenv on ``entries``; its last stdout line."""
    python = Path(os.environ.get(PEER_ENV) or DEFAULT_PEER)
    if not python.exists():
        how = (f"not run: no bfcl-eval virtualenv at {python}; create it with "
               f"`python tests/bench_peers.py bfcl` (PyPI) or set {PEER_ENV}")  # fmt: skip
        print(f"bench_bfcl: official checker {how}", file=sys.stderr)
        return {"skipped": how}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "entries.json"
        path.write_text(json.dumps(entries))
        done = subprocess.run([str(python), "-c", program, str(path), str(REPEATS)],
                              capture_output=True, text=True, timeout=1800, cwd=tmp)  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"the official checker failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _score_all(bfcl: Any, items: list, results: dict) -> Any:
    import pandas as pd

    frames = [
        bfcl.score_results(items, lines, system=model, style=bfcl.PUBLIC_SYSTEMS[model])
        for model, lines in results.items()
    ]
    return pd.concat(frames, ignore_index=True)


def _timed(fn: Any) -> tuple[Any, float]:
    t0 = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - t0


if __name__ == "__main__":
    from evalbench.sources import DataUnavailable

    try:
        main()
    except DataUnavailable as exc:  # the public result files are not reachable here
        print(f"bench_bfcl skipped: {exc}", file=sys.stderr)
