"""JSON nested past the parser's recursion limit, from a model or a file, is the reader's own
one-line error (never a RecursionError traceback): tool-call arguments, an endpoint's reply,
arena prompt files. The rest of the readers are covered where they live (records, importers)."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from evalbench.agents.tools.base import ToolError, parse_arguments
from evalbench.arena.data import ArenaError, load_prompts
from evalbench.models import ChatRequest, ModelClient, ModelSpec, run_sync

DEEP = "[" * 200_000 + "]" * 200_000


def test_deep_tool_arguments_are_a_tool_error_the_model_sees():
    with pytest.raises(ToolError, match="not valid JSON"):
        parse_arguments('{"a": ' + DEEP + "}")


def test_a_deep_prompts_line_names_file_and_line(tmp_path):
    path = tmp_path / "prompts.jsonl"
    path.write_text('{"id": 1, "question": "q"}\n' + DEEP + "\n")
    with pytest.raises(ArenaError, match=r"prompts.jsonl line 2: not JSON"):
        load_prompts(path)


class _DeepReply(BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        body = ('{"id": "x", "choices": ' + DEEP + "}").encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_a_deep_reply_from_an_endpoint_is_a_malformed_response(monkeypatch):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _DeepReply)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        spec = ModelSpec(name="m", provider="openai", model="m", max_retries=0,
                         base_url=f"http://127.0.0.1:{server.server_port}/v1")  # fmt: skip
        request = ChatRequest(messages=[{"role": "user", "content": "hi"}])
        response = run_sync(ModelClient(spec).chat(request))
    finally:
        server.shutdown()
        thread.join(5)
    assert response.error is not None and response.error.startswith("malformed_response")
