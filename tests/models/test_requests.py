"""Requests as real OpenAI-compatible servers take them (issue 34, item 3), against the
loopback server: ``tool_choice`` with tools, ``content: ""`` on tool-call turns, string
content for all-text parts, ``n`` asked again one by one where a server ignores it, and a
5xx that is the server refusing the request itself is not retried six times."""

from __future__ import annotations

import pytest
from loopback import Fault, Reply

from evalbench.models import ChatRequest, ModelClient, ModelSpec, ResponseCache, run_sync

KEY_ENV = "EVALBENCH_TEST_KEY"
TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}
]
# llama-cpp-python 0.3.x's answer to an assistant message with content null (default chat
# format): a 500 whose message is the pydantic validation error of its request model
VALIDATION_500 = (
    "1 validation error for ChatCompletionRequestAssistantMessage\ncontent\n"
    "  Input should be a valid string [type=string_type, input_value=None, input_type=NoneType]"
)


@pytest.fixture(autouse=True)
def _api_key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-test-not-a-real-key")


def client_for(server, tmp_path=None, **kw) -> ModelClient:
    spec = ModelSpec(**{"name": "req", "provider": "openai", "model": "m",
                        "base_url": server.base_url, "api_key_env": KEY_ENV, "max_retries": 6,
                        "timeout_s": 5, **kw})  # fmt: skip
    cache = ResponseCache(tmp_path / "c.sqlite") if tmp_path is not None else None
    return ModelClient(spec, cache=cache, backoff_base_s=0.01)


def ask(client: ModelClient, messages=None, **kw):
    request = ChatRequest(messages=messages or [{"role": "user", "content": "hi"}], **kw)

    async def once():
        try:
            return await client.chat(request)
        finally:
            await client.aclose()

    return run_sync(once())


@pytest.mark.parametrize(
    ("setting", "sent"),
    [(None, "auto"), ("auto", "auto"), ("none", "none"), ("required", "required"),
     ("get_weather", {"type": "function", "function": {"name": "get_weather"}})],
)  # fmt: skip
def test_tools_go_out_with_tool_choice_auto_or_as_the_system_sets_it(loopback, setting, sent):
    extra = {} if setting is None else {"tool_choice": setting}
    assert ask(client_for(loopback, **extra), tools=TOOLS).ok
    assert loopback.requests[0]["tool_choice"] == sent


def test_a_request_without_tools_sends_no_tool_choice_and_its_own_choice_wins(loopback):
    client = client_for(loopback, tool_choice="required")
    assert ask(client).ok and ask(client, tools=TOOLS, tool_choice="none").ok
    assert "tool_choice" not in loopback.requests[0]
    assert loopback.requests[1]["tool_choice"] == "none"


def test_tool_choice_enters_the_cache_key_and_an_unset_one_leaves_dumps_alone(loopback):
    request = ChatRequest(messages=[{"role": "user", "content": "q"}], tools=TOOLS)
    keys = {client_for(loopback, **kw).key_for(request)
            for kw in ({}, {"tool_choice": "auto"}, {"tool_choice": "required"})}  # fmt: skip
    assert len(keys) == 2  # unset means auto: the same request on the wire
    assert "tool_choice" not in client_for(loopback).spec.model_dump(mode="json")


@pytest.mark.parametrize("bad", ["call me", "", "x" * 65, "a/b"])
def test_a_tool_choice_that_cannot_be_a_function_name_is_refused(bad):
    with pytest.raises(ValueError, match="tool_choice: expected auto, none, required or a "):
        ModelSpec(name="s", provider="openai", model="m", tool_choice=bad)


def test_an_assistant_tool_call_turn_goes_out_with_empty_string_content(loopback):
    call = {"id": "call_0", "type": "function",
            "function": {"name": "get_weather", "arguments": "{}"}}  # fmt: skip
    messages = [
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_0", "content": "sunny"},
    ]
    assert ask(client_for(loopback), messages, tools=TOOLS).ok
    sent = loopback.requests[0]["messages"]
    assert sent[1] == {"role": "assistant", "content": "", "tool_calls": [call]}
    assert messages[1]["content"] is None  # the caller's conversation is left as it was


def test_text_parts_go_out_as_one_string_and_images_keep_their_parts(loopback):
    text = [{"type": "text", "text": "Question?"}, {"type": "text", "text": "Answer briefly."}]
    image = [text[0], {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA=="}}]
    assert ask(client_for(loopback), [{"role": "user", "content": text}]).ok
    assert ask(client_for(loopback), [{"role": "user", "content": image}]).ok
    # text parts joined by a newline, as vLLM and llama.cpp's server render them
    assert loopback.requests[0]["messages"][0]["content"] == "Question?\nAnswer briefly."
    assert loopback.requests[1]["messages"][0]["content"] == image


def test_the_same_validation_500_twice_is_not_retried_again(loopback):
    loopback.enqueue(*[Fault("500", message=VALIDATION_500)] * 6, Reply(text="never"))
    response = ask(client_for(loopback))
    # first try, one retry, the same refusal: stop (6 retries with backoff before)
    assert (loopback.count, response.attempts) == (2, 2)
    assert response.error.startswith("http_500: Error code: 500 - 1 validation error")
    assert "the same refusal twice" in response.error


def test_the_same_broadcast_500_twice_is_not_retried_again(loopback):
    # llama-cpp-python at a small n_ctx answers a prompt that fits but leaves max_tokens no
    # room with this numpy ValueError, every time: before, 7 attempts (~50 s) per item
    broadcast = "could not broadcast input array from shape (62,) into shape (0,)"
    loopback.enqueue(*[Fault("500", message=broadcast)] * 6, Reply(text="never"))
    response = ask(client_for(loopback))
    assert (loopback.count, response.attempts) == (2, 2)
    assert "could not broadcast" in response.error and "the same refusal twice" in response.error


def test_generic_or_changing_500s_are_still_retried(loopback):
    # OpenAI's own transient 500 repeats word for word: it reads as no refusal of the request
    generic = "The server had an error while processing your request. Sorry about that!"
    loopback.enqueue(Fault("500", message=generic), Fault("500", message=generic),
                     Fault("500", message=VALIDATION_500), Fault("500", message="KeyError: 'x'"),
                     Reply(text="ok"))  # fmt: skip
    response = ask(client_for(loopback))
    assert (response.text, response.attempts, loopback.count) == ("ok", 5, 5)


def test_n_is_asked_again_one_by_one_where_the_server_ignores_it(loopback, tmp_path, capsys):
    loopback.ignore_n = True
    client = client_for(loopback, tmp_path, temperature=1.0)
    response = ask(client, n=3)
    # 1 request with n=3 answered with 1 choice, then 2 more without n
    assert [r.get("n") for r in loopback.requests] == [3, None, None]
    assert (len(response.choices), response.attempts) == (3, 3)
    assert "ignores n" in response.note
    assert "ignores n" in capsys.readouterr().err
    again = ask(client, [{"role": "user", "content": "other"}], n=2)
    assert [r.get("n") for r in loopback.requests[3:]] == [None, None]  # remembered
    assert len(again.choices) == 2
    assert ask(client, n=3).cached and loopback.count == 5  # the rerun: from the cache


def test_n_choices_come_back_in_one_request_where_the_server_honours_n(loopback):
    response = ask(client_for(loopback), n=3)
    assert [r.get("n") for r in loopback.requests] == [3]
    assert (len(response.choices), response.attempts, response.note) == (3, 1, None)
    assert [c.text for c in response.choices] == [response.text] * 3
