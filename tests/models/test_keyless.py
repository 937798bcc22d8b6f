"""Keyless endpoints: a loopback endpoint, or one declared ``api_key_env: null``, needs no
key; any other endpoint without its key is one line saying how to declare it keyless."""

from __future__ import annotations

import asyncio

import pytest
from studyfiles import gaia_dataset, gaia_params

from evalbench.cli import check_secrets, main
from evalbench.models import ChatRequest, Job, ModelClient, ModelSpec, agenerate
from evalbench.models.providers import api_key, is_loopback
from evalbench.settings import MissingSecret
from evalbench.studies import load_params

KEY_ENV = "EVALBENCH_KEYLESS_TEST_KEY"
REMOTE = "https://api.example.invalid/v1"  # never contacted: every test here stops before


@pytest.mark.parametrize(
    ("url", "loopback"),
    [
        ("http://127.0.0.1:8000/v1", True),
        ("http://127.45.6.7/v1", True),  # all of 127.0.0.0/8
        ("http://localhost:11434/v1", True),
        ("http://LOCALHOST./v1", True),
        ("http://[::1]:8080/v1", True),
        ("http://[::ffff:127.0.0.1]:8080/v1", True),  # IPv4-mapped loopback
        ("http://127.0.0.1.example.com/v1", False),  # a name, not the address
        ("http://localhost@example.com/v1", False),  # the host is example.com
        ("http://user:pw@127.0.0.1:9/v1", True),  # credentials do not change the host
        ("http://10.0.0.1:8000/v1", False),
        ("http://128.0.0.1/v1", False),
        ("https://api.openai.com/v1", False),
        ("http://[::2]/v1", False),
        ("not a url", False),
        ("http://[::1/v1", False),  # unbalanced bracket: urlsplit refuses it
    ],
)
def test_loopback_hosts_are_recognized_by_address_not_by_prefix(url, loopback):
    assert is_loopback(url) is loopback


def _spec(base_url: str | None, **kw) -> ModelSpec:
    return ModelSpec(name="s", provider="openai", model="m", base_url=base_url, **kw)


def test_a_loopback_endpoint_needs_no_key_but_gets_it_when_set(monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)
    spec = _spec("http://127.0.0.1:8000/v1", api_key_env=KEY_ENV)
    assert api_key(spec) is None
    monkeypatch.setenv(KEY_ENV, "sk-local-proxy")  # e.g. a local proxy that wants one
    assert api_key(spec) == "sk-local-proxy"


def test_a_remote_endpoint_without_its_key_says_how_to_declare_it_keyless(monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)
    with pytest.raises(MissingSecret) as err:
        api_key(_spec(REMOTE, api_key_env=KEY_ENV))
    assert str(err.value) == (
        f"system 's' needs the environment variable {KEY_ENV}; it is not set (an endpoint "
        "that takes no key: set api_key_env: null for this system; endpoints on loopback, "
        "such as http://127.0.0.1:8000/v1, need none)"
    )


def test_api_key_env_null_declares_a_remote_endpoint_keyless(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    system = {"name": "s", "provider": "openai", "model": "m", "base_url": REMOTE,
              "api_key_env": None}  # fmt: skip
    params = load_params(gaia_params(tmp_path, gaia_dataset(tmp_path, ["1"]), [system]))
    assert params.systems[0].api_key_env is None
    check_secrets(params)  # no MissingSecret
    assert api_key(params.systems[0]) is None


def test_an_unset_base_url_variable_is_still_reported_for_a_keyless_system(monkeypatch):
    monkeypatch.delenv("EVALBENCH_KEYLESS_URL", raising=False)
    spec = ModelSpec(name="s", provider="openai", model="m", api_key_env=None,
                     base_url_env="EVALBENCH_KEYLESS_URL")  # fmt: skip
    with pytest.raises(MissingSecret, match="EVALBENCH_KEYLESS_URL"):
        api_key(spec)


def test_evalbench_run_on_a_loopback_endpoint_needs_no_key(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    system = {"name": "s", "provider": "openai", "model": "m",
              "base_url": "http://127.0.0.1:9/v1"}  # fmt: skip
    params = load_params(gaia_params(tmp_path, gaia_dataset(tmp_path, ["1"]), [system]))
    check_secrets(params)  # before: "system 's' needs the environment variable OPENAI_API_KEY"


def test_evalbench_run_of_a_remote_endpoint_without_a_key_is_exit_2_with_the_hint(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    system = {"name": "s", "provider": "openai", "model": "m", "base_url": REMOTE}
    path = gaia_params(tmp_path, gaia_dataset(tmp_path, ["1"]), [system])
    assert main(["run", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("evalbench: system 's' needs the environment variable OPENAI_API_KEY")
    assert "api_key_env: null" in err and err.count("\n") == 0


def _ask(spec: ModelSpec) -> list:
    jobs = [Job("a", ChatRequest(messages=[{"role": "user", "content": "x"}]))]
    return asyncio.run(agenerate(ModelClient(spec), jobs, progress=False))


def test_a_keyless_request_carries_no_authorization_header(loopback, monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)
    (response,) = _ask(_spec(loopback.base_url, api_key_env=KEY_ENV))
    assert response.ok, response.error
    assert "authorization" not in loopback.headers[-1]


def test_a_loopback_request_carries_the_key_when_its_variable_is_set(loopback, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-for-the-local-proxy")
    (response,) = _ask(_spec(loopback.base_url, api_key_env=KEY_ENV))
    assert response.ok, response.error
    assert loopback.headers[-1]["authorization"] == "Bearer sk-for-the-local-proxy"


def test_api_key_env_null_sends_no_key_even_when_openai_api_key_is_set(loopback, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-must-not-leave")
    (response,) = _ask(_spec(loopback.base_url, api_key_env=None))
    assert response.ok, response.error
    assert "authorization" not in loopback.headers[-1]
