"""SystemSpec: a field of one provider on a system of another is refused, naming the field
(a forgotten `provider: python` line ran a simulated model instead of the user's agent)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from studyfiles import gaia_dataset, gaia_params

from evalbench.agents.types import SystemSpec
from evalbench.params import ParamsError
from evalbench.studies import load_params

MISPLACED = [
    ({"entrypoint": "my_agents.agent:answer"}, "sim", "entrypoint applies to provider 'python'"),
    (
        {"entrypoint": "my_agents.agent:answer"},
        "command",
        "entrypoint applies to provider 'python'",
    ),
    ({"argv": ["python3", "agent.py"]}, "openai", "argv applies to provider 'command'"),
    ({"argv": ["python3", "agent.py"]}, "python", "argv applies to provider 'command'"),
    ({"tools": ["read_file"]}, "sim", "tools applies to provider 'agent'"),
    ({"documents": "docs/"}, "python", "documents applies to provider 'agent'"),
]


def _spec(provider: str, **fields) -> SystemSpec:
    needs = {"python": {"entrypoint": "m.a:f"}, "command": {"argv": ["x"]},
             "agent": {"model": "m"}, "openai": {"model": "m"}}  # fmt: skip
    return SystemSpec(name="s", provider=provider, **(needs.get(provider, {}) | fields))


@pytest.mark.parametrize(("fields", "provider", "message"), MISPLACED)
def test_a_field_of_another_provider_is_refused(fields, provider, message):
    with pytest.raises(ValidationError, match=message):
        _spec(provider, **fields)


def test_each_field_is_accepted_by_its_own_provider():
    assert _spec("python").entrypoint == "m.a:f" and _spec("command").argv == ["x"]
    agent = _spec("agent", tools=["read_file"], documents="docs/")
    assert agent.tools == ["read_file"] and agent.documents == "docs/"


def test_the_params_file_error_is_one_line_naming_the_system_and_field(tmp_path):
    systems = [{"name": "mine", "entrypoint": "my_agents.agent:answer"}]  # no provider line
    path = gaia_params(tmp_path, gaia_dataset(tmp_path, ["1"]), systems)
    with pytest.raises(ParamsError) as err:
        load_params(path)
    line = str(err.value)
    assert "\n" not in line and "systems.0" in line
    assert "entrypoint applies to provider 'python' only (this system's provider is 'sim')" in line
