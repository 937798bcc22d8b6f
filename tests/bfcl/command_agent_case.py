"""A tiny command agent for tests/bfcl/test_command_agents.py (JSON lines on stdin/stdout).

    python command_agent_case.py MODE [PID_FILE]

``scripted`` makes the calls of python_agent_cases.SCRIPT for its item and turn, then
answers (with the last result it got; each turn's item id appended to PID_FILE, when given); ``busy`` lists the folder until stopped; ``hang`` starts a child that sleeps, writes
both process ids to PID_FILE and waits forever; ``daemon MARK`` starts a child in a session of
its own (setsid) sleeping with MARK on its command line, then waits forever; ``malformed`` prints a line that is not JSON; ``long`` a line of 1.1 MB;
``exit`` exits with status 3 before answering.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from python_agent_cases import SCRIPT


def send(message: dict) -> dict:
    """Write one line; read the next one (the result of a call)."""
    print(json.dumps(message), flush=True)
    return json.loads(sys.stdin.readline())


def play(mode: str, turn: dict) -> None:
    if mode == "long":  # one line past evalbench's limit
        print(json.dumps({"answer": "x" * 1_100_000}), flush=True)
        return
    if mode == "malformed":
        print("calling mkdir now!", flush=True)
        return
    if mode == "exit":
        print("giving up", file=sys.stderr, flush=True)
        sys.exit(3)
    if mode == "busy":
        for _ in range(100):
            if "result" not in send({"call": "ls", "arguments": {}}):
                return
    if mode == "daemon":  # a descendant that leaves the agent's process group
        code = "import sys, time; time.sleep(60)"
        subprocess.Popen([sys.executable, "-c", code, sys.argv[2]], start_new_session=True)
        time.sleep(60)
    if mode == "hang":
        code = "import sys, time; time.sleep(60)"  # PID_FILE on its command line: findable
        child = subprocess.Popen([sys.executable, "-c", code, sys.argv[2]])
        Path(sys.argv[2]).write_text(f"{child.pid} {os.getpid()}")
        time.sleep(60)
    if len(sys.argv) > 2:
        with open(sys.argv[2], "a") as log:
            log.write(turn["id"] + "\n")
    calls, text = SCRIPT.get((turn["id"], turn["turn"]), ([], "I cannot do that."))
    results = [send({"call": name, "arguments": arguments})["result"] for name, arguments in calls]
    answer = f"{text} (last result: {results[-1]})" if results else text
    print(json.dumps({"answer": answer}), flush=True)


def main() -> None:
    mode = sys.argv[1]
    for line in sys.stdin:  # one {"turn": ...} per turn, until evalbench closes stdin
        play(mode, json.loads(line)["turn"])


if __name__ == "__main__":
    main()
