"""How reports label systems: the one wording every report uses."""

from __future__ import annotations

from evalbench import display


def test_every_system_is_labelled_simulated_or_real_and_agent_or_model():
    sim = {"a", "b"}
    assert display.system_kind("a", sim) == "simulated"
    assert display.system_kind("b", sim, "sim-agent") == "simulated agent"
    assert display.system_kind("c", sim, "command") == "agent (command)"
    assert display.system_kind("c", sim) == "real model"
