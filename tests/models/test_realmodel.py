"""The model client against a real model on 127.0.0.1 (issue 34, items 3 and 6): plain chat
and a rerun from the cache with no request, tool results that reach the model as sent, a
context overflow as a clear error record, and the requests this server refuses or ignores.

llama-cpp-python's server with SmolLM2-135M-Instruct (tests/realmodel.py), one request at a
time; every request asks for a few tokens at most (a busy 2-core machine reads ~10-200
prompt tokens per second), and the server caches the prompt prefix it read last.
"""

from __future__ import annotations

import json

import pytest
import realmodel
from realmodel import MODEL_ALIAS, RealServer

from evalbench.agents.prompt_tools import results_message
from evalbench.models import (
    ChatRequest,
    ChatResponse,
    Job,
    ModelClient,
    ModelSpec,
    ResponseCache,
    UsageLedger,
    generate,
    run_sync,
)
from evalbench.runs import response_record

pytestmark = [pytest.mark.slow, pytest.mark.realmodel, pytest.mark.xdist_group("realmodel")]
real_server = realmodel.real_server  # the fixture: one server for this module's tests

KEY_ENV = "EVALBENCH_REALMODEL_KEY"
CAPITAL = [{"role": "user", "content": "What is the capital of France? Answer in one word."}]
# a tool result with what HTML-escaping would change (' & < > ") and a non-ASCII sign
RESULT = 'It\'s 21 °C & <b>sunny</b> in "Paris"'
CALL = {"id": "call_0", "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}  # fmt: skip


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    # the server has no auth; until keyless endpoints land the client reads a key anyway
    monkeypatch.setenv(KEY_ENV, "loopback-server-without-auth")


def spec_for(server: RealServer, **kw) -> ModelSpec:
    fields = {"name": "smollm2", "provider": "openai", "model": MODEL_ALIAS,
              "base_url": server.base_url, "api_key_env": KEY_ENV, "temperature": 0.0,
              "max_tokens": 8, "max_retries": 2, "timeout_s": 300, **kw}  # fmt: skip
    return ModelSpec(**fields)


def ask(client: ModelClient, request: ChatRequest) -> ChatResponse:
    async def once() -> ChatResponse:
        try:
            return await client.chat(request)
        finally:
            await client.aclose()

    return run_sync(once())


def test_plain_chat_then_a_rerun_from_the_cache_makes_no_request(real_server, tmp_path):
    cache = ResponseCache(tmp_path / "cache.sqlite")
    jobs = [Job("capital", ChatRequest(messages=CAPITAL))]
    (first,) = generate(ModelClient(spec_for(real_server), cache=cache), jobs, progress=False)
    assert first.ok, first.error
    assert first.text and "paris" in first.text.lower()  # temperature 0: the same every time
    assert first.usage.prompt_tokens and 1 <= (first.usage.completion_tokens or 0) <= 8
    assert first.finish_reason in ("stop", "length") and first.attempts == 1
    ledger = UsageLedger()
    client = ModelClient(spec_for(real_server), cache=cache, ledger=ledger)
    (again,) = generate(client, jobs, progress=False)
    assert (again.cached, again.text, again.attempts) == (True, first.text, 0)
    row = ledger.summary()["smollm2"]
    assert (row["calls"], row["requests"], row["cache_hits"]) == (1, 0, 1)


def prompt_tokens(server: RealServer, messages: list[dict]) -> int:
    response = ask(ModelClient(spec_for(server, max_tokens=1)), ChatRequest(messages=messages))
    assert response.ok, response.error
    assert response.usage.prompt_tokens is not None
    return response.usage.prompt_tokens


def test_tool_results_reach_the_model_as_sent_in_both_tool_modes(real_server):
    # Two conversations that differ only in the tool result: the prompt grows by exactly the
    # result's own tokens. Escaped, it would grow by more (&#39; &amp; &lt; ...); dropped,
    # by nothing.
    def native(result: str) -> list[dict]:  # as the reference agent and BFCL send them
        return [{"role": "user", "content": "Weather in Paris?"},
                {"role": "assistant", "content": None, "tool_calls": [CALL]},  # "" on the wire
                {"role": "tool", "tool_call_id": "call_0", "content": result}]  # fmt: skip

    grown = prompt_tokens(real_server, native(RESULT)) - prompt_tokens(real_server, native("ok"))
    assert grown == real_server.tokens(RESULT) - real_server.tokens("ok") > 0

    def prompted(result: str) -> list[dict]:  # tool_mode: prompt (its tools prompt aside)
        call = '<tool_call>[{"name": "get_weather", "arguments": {"city": "Paris"}}]</tool_call>'
        return [{"role": "user", "content": "Weather in Paris?"},
                {"role": "assistant", "content": call},
                results_message([("get_weather", result)])]  # fmt: skip

    sent = [prompted(text)[-1]["content"] for text in (RESULT, "ok")]
    grown = prompt_tokens(real_server, prompted(RESULT)) - prompt_tokens(
        real_server, prompted("ok")
    )
    assert grown == real_server.tokens(sent[0]) - real_server.tokens(sent[1]) > 0
    assert json.loads(sent[0].split("\n")[1])["content"] == RESULT


def test_a_context_overflow_is_a_clear_error_record_asked_once(real_server):
    words = [{"role": "user", "content": "word " * 3000}]  # > 2,048 tokens of context
    spec = spec_for(real_server, max_retries=6)
    response = ask(ModelClient(spec), ChatRequest(messages=words))
    assert response.attempts == 1  # a 400: the same request cannot fit later
    record = response_record(spec, Job("long", ChatRequest(messages=words)), response)
    assert record.error is not None and record.text is None
    assert record.error.startswith("http_400: Error code: 400 - This model's maximum context "
                                   "length is 2048 tokens. However, you requested")  # fmt: skip


def test_what_this_server_refuses_or_ignores(real_server, capsys):
    client = ModelClient(spec_for(real_server, max_retries=6), backoff_base_s=0.05)
    # list content with an image part goes out as a list, which its default chat format
    # refuses with a 500 naming a Python error, every time: asked twice, not seven times
    image = [{"type": "text", "text": "What is this?"},
             {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA=="}}]  # fmt: skip
    refused = ask(client, ChatRequest(messages=[{"role": "user", "content": image}]))
    assert refused.attempts == 2 and "the same refusal twice" in (refused.error or "")
    assert refused.error.startswith("http_500: Error code: 500 - can only concatenate str")
    # text parts go out as one string: answered
    text = [{"type": "text", "text": "What is the capital of France?"},
            {"type": "text", "text": "Answer in one word."}]  # fmt: skip
    assert ask(client, ChatRequest(messages=[{"role": "user", "content": text}])).ok
    # n = 2 comes back with 1 choice: the second is asked on its own
    pair = ask(client, ChatRequest(messages=CAPITAL, n=2))
    assert pair.ok and len(pair.choices) == 2 and pair.attempts == 2
    assert "the endpoint ignores n" in (pair.note or "") and "ignores n" in capsys.readouterr().err
