"""Choosing the executor (no Ray needed): flags and variables, bad values as one line,
addresses without credentials, resource hints as Ray options, the manifest of a local run."""

from __future__ import annotations

import importlib.util
import json
import re

import pytest
import yaml
from pydantic import ValidationError
from studyfiles import gaia_dataset

from evalbench import cli, executors, gaia
from evalbench.executors import ExecutorError, RayHints, check_address, redact_address
from evalbench.executors.reach import TIMEOUT_ENV, connect_timeout_s
from evalbench.params import ParamsError
from evalbench.settings import ENV_EXECUTOR, ENV_RAY_ADDRESS, get_settings
from evalbench.studies import load_params, open_run


@pytest.mark.parametrize(
    ("address", "shown"),
    [
        ("127.0.0.1:6379", "127.0.0.1:6379"),
        ("ray://head.example:10001", "ray://head.example:10001"),
        ("ray://alice:s3cret@head.example:10001", "ray://head.example:10001"),
        ("alice:s3cret@10.0.0.5:6379", "10.0.0.5:6379"),
        ("http://head:8265/?token=abc#frag", "http://head:8265/"),
        (None, None),
        ("", None),
    ],
)
def test_addresses_are_recorded_without_credentials(address, shown):
    assert redact_address(address) == shown


def test_resource_hints_become_ray_options():
    hints = RayHints(num_cpus=0.5, memory_mb=2048, resources={"browser": 1})
    assert hints.options() == {
        "num_cpus": 0.5,
        "memory": 2048 * 1024 * 1024,  # MiB -> bytes: 2,147,483,648
        "resources": {"browser": 1.0},
    }
    assert RayHints().options() == {"num_cpus": 1.0}  # one logical CPU per task, as Ray's default
    with pytest.raises(ValidationError, match="gpus"):
        RayHints.model_validate({"gpus": 1})


def test_a_bad_executor_variable_is_one_line_and_exit_2(monkeypatch, capsys):
    monkeypatch.setenv(ENV_EXECUTOR, "slurm")
    with pytest.raises(
        ExecutorError, match=r"^EVALBENCH_EXECUTOR='slurm': expected one of local, ray, auto$"
    ):
        executors.choice()
    assert cli.main(["run", "params/gaia_demo.yaml"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["evalbench: EVALBENCH_EXECUTOR='slurm': expected one of local, ray, auto"]


@pytest.mark.parametrize("command", ["run", "watch"])
def test_executor_flags_set_the_variables_the_study_kernels_inherit(command, monkeypatch, capsys):
    monkeypatch.setenv(ENV_EXECUTOR, "local")  # restored after the test (the CLI sets both)
    monkeypatch.setenv(ENV_RAY_ADDRESS, "")
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "ray" else object()
    )
    argv = [command, "params/gaia_demo.yaml", "--executor", "ray", "--ray-address", "10.0.0.5:6379"]
    assert cli.main(argv) == 2  # Ray "missing": one line, nothing run
    assert capsys.readouterr().err.strip() == (
        "evalbench: --executor ray needs Ray on this machine: pip install -e '.[ray]'"
    )
    assert executors.choice() == ("ray", "10.0.0.5:6379")
    for bad in (["report", "--executor", "slurm"],
                [command, "params/gaia_demo.yaml", "--executor", "slurm"]):  # fmt: skip
        with pytest.raises(SystemExit):
            cli.main(bad)


def test_auto_without_ray_runs_here(monkeypatch):
    monkeypatch.setenv(ENV_EXECUTOR, "auto")
    monkeypatch.setenv(ENV_RAY_ADDRESS, "")
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    assert executors.current() is None


@pytest.mark.slow
def test_a_local_run_says_so_in_its_manifest(tmp_path, monkeypatch):
    monkeypatch.setenv(ENV_RAY_ADDRESS, "alice:pw@10.0.0.5:6379")  # ignored: the run is local
    data = {"study": "gaia", "title": "t", "dataset": str(gaia_dataset(tmp_path, ["a", "b"])),
            "bootstrap_rounds": 20, "systems": [{"name": "py", "provider": "python",
            "entrypoint": "tests.agents.example_agent:answer"}]}  # fmt: skip
    path = tmp_path / "local_agents.yaml"
    path.write_text(yaml.safe_dump(data))
    run = open_run(path)
    run.finish(gaia.run(run))
    manifest = json.loads((run.dir / "manifest.json").read_text())
    assert manifest["executor"] == {"requested": "local", "address": None, "name": "local"}


def _agents_params(tmp_path, ray: object) -> object:
    system = {"name": "py", "provider": "python", "entrypoint": "tests.agents.example_agent:answer",
              "ray": ray}  # fmt: skip
    data = {"study": "gaia", "title": "t", "dataset": str(gaia_dataset(tmp_path, ["a"])),
            "systems": [system]}  # fmt: skip
    path = tmp_path / "hinted.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_a_systems_ray_hints_load_from_params_as_ray_options(tmp_path):
    path = _agents_params(tmp_path, {"num_cpus": 1, "memory_mb": 512})
    [system] = load_params(path).systems
    assert system.ray.options() == {"num_cpus": 1.0, "memory": 512 * 2**20}  # 536,870,912 B
    (tmp_path / "plain").mkdir()
    unhinted = _agents_params(tmp_path / "plain", None)
    assert "ray" not in load_params(unhinted).systems[0].model_dump()  # hash as before


@pytest.mark.parametrize(
    ("ray", "says"),
    [
        ({"num_cpus": -1}, "systems.0.ray.num_cpus: "),
        ({"gpus": 1}, "systems.0.ray.gpus: unknown key"),
    ],
)
def test_bad_ray_hints_are_one_line_naming_the_field(tmp_path, ray, says):
    path = _agents_params(tmp_path, ray)
    with pytest.raises(ParamsError) as caught:
        load_params(path)
    assert str(caught.value).startswith(f"{path}: {says}") and "\n" not in str(caught.value)


def test_a_refused_connection_says_when_the_cluster_likely_wants_a_token(tmp_path):
    # Ray 2.60's `ray start` turns token authentication on when ~/.ray/auth_token exists;
    # a driver then needs RAY_AUTH_MODE=token, and Ray only says "Failed to connect".
    from evalbench.executors.base import auth_hint

    assert auth_hint({}, tmp_path) == ""  # no token file: nothing to suggest
    (tmp_path / ".ray").mkdir()
    (tmp_path / ".ray" / "auth_token").write_text("secret")
    hint = auth_hint({}, tmp_path)
    assert "RAY_AUTH_MODE=token" in hint and "secret" not in hint
    assert auth_hint({"RAY_AUTH_MODE": "token"}, tmp_path) == ""  # already on


# --------------------------------------------------------------------- the address's format

NOT_AN_ADDRESS = ["garbage", "127.0.0.1", "127.0.0.1:0", "127.0.0.1:65536", "head:port",
                  "http://head:8265", "ray://", "ray://head", "a b:1", "127.0.0.1:1/x",
                  "head:6379\nx", "ray://alice:s3cret@", "-p:1",
                  "alice:s3cret@head:6379?token=abc"]  # fmt: skip


@pytest.mark.parametrize("address", NOT_AN_ADDRESS)
def test_a_malformed_ray_address_is_one_line_and_exit_2_before_anything_runs(
    address, monkeypatch, capsys
):
    monkeypatch.setenv(ENV_EXECUTOR, "local")  # restored after the test (the CLI sets both)
    monkeypatch.setenv(ENV_RAY_ADDRESS, "")
    argv = ["run", "params/gaia_demo.yaml", "--executor", "ray", f"--ray-address={address}"]
    assert cli.main(argv) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("evalbench: --ray-address ")
    assert line.endswith(": expected host:port, auto, or ray://host:port")
    assert "s3cret" not in line and "token" not in line  # credentials are never shown
    assert not (get_settings().outputs_dir / "gaia_demo").exists()  # nothing ran


def test_a_malformed_address_in_the_environment_names_the_variable(monkeypatch):
    monkeypatch.setenv(ENV_EXECUTOR, "ray")
    monkeypatch.setenv(ENV_RAY_ADDRESS, "garbage")
    with pytest.raises(ExecutorError) as caught:
        executors.check(executors.choice())
    assert str(caught.value) == (
        "EVALBENCH_RAY_ADDRESS 'garbage': expected host:port, auto, or ray://host:port"
    )
    monkeypatch.setenv(ENV_EXECUTOR, "local")  # a local run never reads the address
    executors.check(executors.choice())


@pytest.mark.parametrize(
    "address",
    ["127.0.0.1:6379", "head.internal:6379", "[::1]:6379", "auto", "ray://head:10001",
     "ray://10.0.0.5:10001", "10.0.0.5:65535"],
)  # fmt: skip
def test_the_three_forms_of_address_ray_init_takes_are_accepted(address):
    check_address(address, "--ray-address")  # no error


@pytest.mark.parametrize("value", ["abc", "0", "-1", "nan", "inf", "3601"])
def test_a_bad_connect_timeout_is_one_line_and_exit_2(value, monkeypatch, capsys):
    monkeypatch.setenv(ENV_EXECUTOR, "local")  # restored after the test (the CLI sets both)
    monkeypatch.setenv(ENV_RAY_ADDRESS, "")
    monkeypatch.setenv(TIMEOUT_ENV, value)
    assert cli.main(["run", "params/gaia_demo.yaml", "--executor", "auto"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"evalbench: EVALBENCH_RAY_CONNECT_TIMEOUT_S={value!r}: expected seconds, more than 0 "
        "and at most 3600"
    ]
    monkeypatch.setenv(TIMEOUT_ENV, "12.5")
    assert connect_timeout_s() == 12.5
    monkeypatch.delenv(TIMEOUT_ENV)
    assert connect_timeout_s() == 30.0  # the documented default: at most 30 s


@pytest.mark.parametrize(
    ("address", "shown"),
    [
        ("ray://alice:s3c@r3t@head:10001", "ray://head:10001"),  # '@' in the password
        ("ray://alice:s3c/r3t@head:10001", "ray://head:10001"),  # '/' in the password
        ("ray://alice:s3c?r3t@head:10001", "ray://head:10001"),  # '?' in the password
        ("ray://alice:s3c#r3t@head:10001", "ray://head:10001"),  # '#' in the password
        ("ray:/alice:s3cr3t@head:10001", "head:10001"),  # one slash: no scheme seen
        ("ray:\\\\alice:s3cr3t@head:10001", "head:10001"),
        ("alice:s3c@r3t@head:6379", "head:6379"),
    ],
)
def test_no_part_of_a_password_is_ever_shown(address, shown):
    # Before: the first '@' (or a '/', '?', '#' before the last '@') ended the credentials:
    # 'ray://r3t@head:10001' was shown, or the whole address with its password; an address
    # with '?' in its password was accepted and recorded as 'ray://alice:s3c'.
    assert redact_address(address) == shown
    try:
        check_address(address, "--ray-address")
    except ExecutorError as exc:
        message = str(exc)
    else:
        message = ""
    assert not any(part in message for part in ("alice", "s3c", "r3t"))


def test_a_refused_address_with_credentials_says_they_were_left_out(capsys):
    with pytest.raises(ExecutorError) as caught:
        check_address("alice:s3cret@head:6379?token=abc", "--ray-address")
    assert str(caught.value) == (
        "--ray-address 'head:6379' (shown without its credentials or query): "
        "expected host:port, auto, or ray://host:port"
    )


@pytest.mark.parametrize(
    "error",
    [
        "ConnectionError: ray client connection timeout for ray://alice:s3cr3t@head:10001",
        "ConnectionError: could not reach alice:s3cr3t@head:10001",  # the address sans scheme
        "RuntimeError: authentication failed: token 's3cr3t' rejected",  # the password alone
    ],
)
def test_a_refused_connection_never_shows_the_addresss_credentials(monkeypatch, error):
    # Before: only the address exactly as given was replaced in Ray's error; the same
    # credentials in another form were shown.
    from evalbench.executors import reach

    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: object())
    monkeypatch.setattr(reach, "_probe", lambda address, timeout: {"error": error})
    address = "ray://alice:s3cr3t@head:10001"
    with pytest.raises(ExecutorError) as caught:
        reach.reach(executors.Choice("ray", address))
    message = str(caught.value)
    assert message.startswith("cannot connect to the Ray cluster at ray://head:10001: ")
    assert "s3cr3t" not in message and "alice" not in message


def test_a_very_long_refused_address_is_shown_cut_to_a_line():
    # Before: a 1,000,000-character address made a 1 MB "one-line" message.
    with pytest.raises(ExecutorError) as caught:
        check_address("a" * 1_000_000 + ":x", "--ray-address")
    assert str(caught.value) == (
        f"--ray-address '{'a' * 60}…' (1,000,002 characters): expected host:port, auto, or "
        "ray://host:port"
    )


@pytest.mark.parametrize(
    ("hints", "why"),
    [
        ({"num_cpus": 0.00005}, "num_cpus: 5e-05 is finer than Ray's unit, 0.0001"),
        ({"num_cpus": float("inf")}, "num_cpus"),
        ({"resources": {"browser": 0.00001}}, "resources.browser: 1e-05 is finer than Ray's unit"),
        ({"resources": {"browser": -1}}, "resources.browser: -1.0 is negative"),
        ({"resources": {"browser": float("nan")}}, "resources.browser"),
    ],
)
def test_hints_ray_would_refuse_are_refused_with_the_params(hints, why):
    # Before: num_cpus 0.000001 passed the params check, then failed inside Ray once the run
    # had started ("The precision of the fractional quantity of resource num_cpus cannot go
    # beyond 0.0001", Ray's _validate_resource_quantity: a non-zero amount under 1/10,000).
    with pytest.raises(ValidationError, match=re.escape(why)):
        RayHints.model_validate(hints)
    assert RayHints(num_cpus=0.0001, resources={"browser": 0.00015}).num_cpus == 0.0001
    assert RayHints(num_cpus=0).options() == {"num_cpus": 0.0}
