"""Params files, notebooks' parameters, and the packaging files that must agree."""

from __future__ import annotations

import math
import re
from pathlib import Path

import papermill as pm
import pytest
import tomllib
import yaml

from evalbench.params import ParamsError, discover_params, dump_yaml, params_hash, parse_yaml
from evalbench.studies import STUDY_KINDS, get_study, load_params, notebook_for

ROOT = Path(__file__).resolve().parents[1]
PARAMS = discover_params(ROOT / "params")
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_there_are_studies_and_notebooks():
    assert PARAMS, "params/ holds no study"
    assert NOTEBOOKS, "notebooks/ holds no notebook"


@pytest.mark.slow
@pytest.mark.parametrize("path", PARAMS, ids=lambda p: p.name)
def test_every_params_file_validates_and_names_an_existing_notebook(path):
    params = load_params(path)
    assert (ROOT / "notebooks" / notebook_for(params)).is_file()


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_notebook_takes_exactly_params_file_and_overrides(path):
    found = pm.inspect_notebook(str(path))
    assert set(found) == {"params_file", "overrides"}
    default = found["params_file"]["default"].strip("\"'")
    assert (ROOT / default).is_file(), f"{path.name}: default params file {default} is missing"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebooks_are_committed_without_outputs(path):
    import nbformat

    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None, f"{path.name} has outputs"


@pytest.mark.parametrize("kind", sorted(STUDY_KINDS))
def test_every_study_kind_has_a_notebook_and_a_params_model(kind):
    assert (ROOT / "notebooks" / get_study(kind).notebook).is_file()
    assert get_study(kind).params.model_fields["study"].default == kind


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "study.yaml"
    path.write_text(text)
    return path


GOOD = """
study: gaia
title: t
systems:
  - name: s
    provider: sim
"""


def test_a_misspelled_key_is_one_line_naming_file_and_field(tmp_path):
    path = _write(tmp_path, GOOD + "sead: 3\n")
    with pytest.raises(ParamsError) as err:
        load_params(path)
    assert str(err.value) == f"{path}: sead: unknown key"


def test_a_nested_misspelling_names_the_field_path(tmp_path):
    path = _write(tmp_path, GOOD.replace("provider: sim", "provder: sim"))
    with pytest.raises(ParamsError, match=r"systems\.0\.provder: unknown key"):
        load_params(path)


def test_a_wrong_type_says_what_was_expected(tmp_path):
    path = _write(tmp_path, GOOD + "seed: seven\n")
    with pytest.raises(ParamsError) as err:
        load_params(path)
    message = str(err.value)
    assert message.startswith(f"{path}: seed: ") and "integer" in message and "'seven'" in message
    assert "\n" not in message


def test_a_bad_literal_lists_the_choices(tmp_path):
    path = _write(tmp_path, GOOD + "cache: sometimes\n")
    with pytest.raises(
        ParamsError, match=r"cache: expected one of 'use', 'refresh', 'off' or 'replay'"
    ):
        load_params(path)


def test_missing_file_yaml_syntax_and_unknown_study(tmp_path):
    with pytest.raises(ParamsError, match="params file not found"):
        load_params(tmp_path / "nope.yaml")
    with pytest.raises(ParamsError, match=r"study.yaml:2:\d+: YAML syntax error"):
        load_params(_write(tmp_path, "study: gaia\n  title: [unclosed\n"))
    with pytest.raises(ParamsError, match="unknown study kind 'gaai'"):
        load_params(_write(tmp_path, "study: gaai\ntitle: t\n"))


def test_a_missing_data_file_is_named(tmp_path):
    path = _write(tmp_path, GOOD + "dataset: data/missing.jsonl\n")
    with pytest.raises(ParamsError, match=r"dataset: data path not found: .*missing\.jsonl"):
        load_params(path)


def test_overrides_are_parsed_as_yaml_and_validated_like_the_file(tmp_path):
    path = _write(tmp_path, GOOD)
    params = load_params(path, ["seed=7", "systems.0.sim.accuracy=0.25", "levels=[1, 3]"])
    assert (params.seed, params.systems[0].sim.accuracy, params.levels) == (7, 0.25, [1, 3])
    assert params_hash(params) != params_hash(load_params(path))
    with pytest.raises(ParamsError, match="sead: unknown key"):
        load_params(path, ["sead=7"])
    with pytest.raises(ParamsError, match=r"systems\.3: expected a list index 0\.\.0"):
        load_params(path, ["systems.3.name=x"])
    with pytest.raises(ParamsError, match="expected key=value"):
        load_params(path, ["seed"])


def test_secrets_have_no_place_in_params(tmp_path):
    path = _write(tmp_path, GOOD.replace("provider: sim", "provider: sim\n    api_key: sk-123"))
    with pytest.raises(ParamsError, match=r"systems\.0\.api_key: unknown key"):
        load_params(path)


def test_environment_yml_matches_pyproject():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert env["channels"] == ["conda-forge"]
    deps = env["dependencies"]
    python = next(d for d in deps if isinstance(d, str) and d.startswith("python"))
    minimum = project["requires-python"].removeprefix(">=")
    assert tuple(map(int, python.split("=")[1].split("."))) >= tuple(map(int, minimum.split(".")))
    assert "pip" in deps
    pip = next(d["pip"] for d in deps if isinstance(d, dict))
    assert pip == ["-e .[dev,lab]"]
    assert {"dev", "lab"} <= set(project["optional-dependencies"])


def test_off_on_yes_no_are_strings_not_booleans(tmp_path):
    # YAML 1.1 reads `off` as False: `cache: off` (file or -p) was refused as a bool
    path = _write(tmp_path, GOOD + "cache: off\n")
    assert load_params(path).cache == "off"
    assert load_params(_write(tmp_path, GOOD), ["cache=off"]).cache == "off"
    assert load_params(_write(tmp_path, GOOD + "allow_degraded: true\n")).allow_degraded is True


# YAML 1.2 core schema: what each plain scalar is (YAML 1.1, PyYAML's default, differs on
# every row marked "1.1:")
CORE_SCHEMA = [
    ("17", 17),
    ("-17", -17),
    ("+17", 17),
    ("017", "017"),  # 1.1: 15 (octal); the core schema: 17; here text, as in JSON (below)
    ("0800", "0800"),  # PyYAML writes the string "0800" unquoted: it must read back as text
    ("0", 0),
    ("0.5", 0.5),
    ("017.5", "017.5"),
    ("0o17", 15),  # 1.1: a string
    ("0x1F", 31),
    ("1e3", 1000.0),  # 1.1: a string (no dot)
    ("1.5e-3", 0.0015),
    ("-.5", -0.5),  # 1.1: a string
    ("2.", 2.0),
    ("1:20", "1:20"),  # 1.1: 80 (base 60)
    ("1_000", "1_000"),  # 1.1: 1000
    ("0b101", "0b101"),  # 1.1: 5
    ("0x", "0x"),
    ("1e", "1e"),
    ("'017'", "017"),
]


@pytest.mark.parametrize(("text", "value"), CORE_SCHEMA, ids=[t for t, _ in CORE_SCHEMA])
def test_numbers_follow_the_yaml_1_2_core_schema(text, value):
    parsed = parse_yaml(f"x: {text}\n", "t.yaml")["x"]
    assert parsed == value and type(parsed) is type(value)


def test_inf_and_nan_are_numbers_that_params_refuse(tmp_path):
    assert parse_yaml("a: .inf\nb: -.Inf\nc: .NaN\n", "t.yaml") == {
        "a": math.inf, "b": -math.inf, "c": pytest.approx(math.nan, nan_ok=True)
    }  # fmt: skip
    for field, text in [("bootstrap_rounds", ".inf"), ("confidence_level", ".nan"),
                        ("systems.0.sim.strength", ".inf"), ("systems.0.timeout_s", ".inf"),
                        ("systems.0.sim.accuracy", "-.inf")]:  # fmt: skip
        with pytest.raises(ParamsError) as err:
            load_params(_write(tmp_path, GOOD), [f"{field}={text}"])
        assert str(err.value).count("\n") == 0 and field in str(err.value), str(err.value)
        assert "finite" in str(err.value) or "greater" in str(err.value) or "less" in str(err.value)


@pytest.mark.parametrize(
    ("override", "field"),
    [("seed=true", "seed"), ("sample=true", "sample"), ("systems.0.max_retries=false", "systems.0.max_retries"),
     ("systems.0.timeout_s=true", "systems.0.timeout_s"),
     ("systems.0.sim.accuracy=true", "systems.0.sim.accuracy"),
     ("systems.0.sim.accuracy={'1': true}", "systems.0.sim.accuracy.1"),
     # a key the validator rewrites (a level written as a number), a list it folds (levels)
     ("systems.0.sim.accuracy={1: true}", "systems.0.sim.accuracy.1"),
     ("levels=[true, true]", "levels.0"), ("levels=[2, true]", "levels.1")],
)  # fmt: skip
def test_true_or_false_is_not_a_number(tmp_path, override, field):
    """YAML's true/false is a bool: pydantic read it as 1 or 0 (``-p seed=true`` ran seed 1,
    ``sample: true`` studied one item)."""
    path = _write(tmp_path, GOOD)
    with pytest.raises(ParamsError) as err:
        load_params(path, [override])
    value = "false" if "false" in override else "true"
    assert str(err.value) == f"{path}: {field}: expected a number, got {value}"


@pytest.mark.parametrize(
    ("override", "message"),
    [("systems.0.sim.accuracy={level1: 0.3}",
      "systems.0.sim.accuracy: unknown key 'level1' (levels are 1, 2, 3; 'default' is the fallback)"),
     ("systems.0.sim.accuracy={4: 0.3}", "systems.0.sim.accuracy: unknown key '4' (levels are 1, 2, 3;"),
     ("semantic_judge={name: j, provider: sim, sim: {accuracy: {Same: 0.9}}}",
      "semantic_judge.sim.accuracy: unknown key 'Same' (semantic cases are same, variant, different;")],
)  # fmt: skip
def test_a_simulated_accuracy_for_a_key_the_study_never_asks_is_refused(
    tmp_path, override, message
):
    """Unknown keys fell silently back to ``default``: a typo ran a study of other numbers."""
    path = _write(tmp_path, GOOD)
    with pytest.raises(ParamsError) as err:
        load_params(path, [override])
    assert str(err.value).startswith(f"{path}: {message}"), str(err.value)


def test_a_simulated_accuracy_table_takes_levels_as_numbers_or_text(tmp_path):
    params = load_params(
        _write(tmp_path, GOOD), ["systems.0.sim.accuracy={1: 0.2, '2': 0.4, default: 0.5}"]
    )
    knobs = params.systems[0].sim
    assert [knobs.accuracy_for(lv) for lv in (1, 2, 3)] == [0.2, 0.4, 0.5]


def test_true_or_false_stays_a_flag_where_a_flag_is_meant(tmp_path):
    params = load_params(_write(tmp_path, GOOD), ["allow_degraded=true", "seed=1"])
    assert params.allow_degraded is True and params.seed == 1
    served = ["systems.0={name: s, provider: openai, model: m, base_url: 'http://127.0.0.1:9/v1', "
              "extra_body: {thinking: false, top_k: 1, opts: [true, 2]}}"]  # fmt: skip
    body = load_params(_write(tmp_path, GOOD), served).systems[0].extra_body
    assert body == {"thinking": False, "top_k": 1, "opts": [True, 2]}
    assert body["thinking"] is False and body["opts"][0] is True  # any JSON: flags stay flags


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{a: 1}: 2\n", "t.yaml:1:1: a mapping key must be text or a number, not a mapping"),
        ("? [a, b]\n: 2\n", "t.yaml:1:3: a mapping key must be text or a number, not a list"),
        # the mapping is level 1, the k-th "[" level k + 1 at column 3 + k: the 100th is refused
        ("x: " + "[" * 10_000 + "]" * 10_000 + "\n", "t.yaml:1:103: nested deeper than 100"),
        ("x: " + "{a: " * 10_000 + "1" + "}" * 10_000 + "\n", "nested deeper than 100"),
        ("x: !!int abc\n", "t.yaml:1:4: !!int: 'abc' is not an integer"),
    ],
    ids=["mapping_key", "list_key", "deep_lists", "deep_mappings", "bad_int_tag"],
)
@pytest.mark.slow
def test_hostile_yaml_shapes_are_one_line(text, message):
    with pytest.raises(ParamsError) as err:
        parse_yaml(text, "t.yaml")
    assert message in str(err.value) and "\n" not in str(err.value)


ROUND_TRIP = ["09", "0800", "01632960418", "017", "1e3", "1.5e3", "-.5", "0o17", "0x1F", ".inf",
              "1_000", "1:20", "09:00", "yes", "off", "true", "null", "", "2.", "caf\u00e9"]  # fmt: skip


def test_what_evalbench_writes_as_yaml_reads_back_the_same():
    shared = ["the same list", "twice"]  # PyYAML would write an anchor and an alias
    data = {"texts": ROUND_TRIP, "numbers": [17, -0.5, 1e300, 15, True, None],
            "nested": {"a": "1e3"}, "first": shared, "second": shared}  # fmt: skip
    assert parse_yaml(dump_yaml(data), "t.yaml") == data


def test_make_lab_allows_root_only_when_run_as_root():
    """`make lab` in a container (root): Jupyter refuses root without --allow-root. A dry run
    (make -n) shows the command; starting JupyterLab for real takes ~5 s (done by hand: notes)."""
    import os
    import shutil
    import subprocess

    if shutil.which("make") is None:
        pytest.skip("needs make")
    command = subprocess.run(["make", "-s", "-n", "-C", str(ROOT), "-o", ".venv/.installed", "lab",
                              "LAB_ARGS=--no-browser"], capture_output=True, text=True, timeout=30,
                             check=True).stdout.split()  # fmt: skip
    assert command[:3] == [".venv/bin/jupyter", "lab", "--notebook-dir=notebooks"], command
    assert ("--allow-root" in command) == (os.geteuid() == 0)
    assert command[-1] == "--no-browser"


@pytest.mark.slow
def test_a_file_full_of_mistakes_is_still_one_short_line(tmp_path):
    path = _write(tmp_path, GOOD + "".join(f"k{i}: 1\n" for i in range(6_000)))
    with pytest.raises(ParamsError) as err:
        load_params(path)
    message = str(err.value)  # was every unknown key named: 1.2 MB for 60,000 of them
    assert message == f"{path}: k0: unknown key; k1: unknown key; k2: unknown key; and 5,997 more"


@pytest.mark.parametrize(
    ("override", "shown"),
    [
        ("systems.9.base_url=http://alice:s3cr3t@h/v1?key=abc", "systems.9.base_url=…"),
        ("systems.9.base_url=https://h/v1/tok", "systems.9.base_url=…"),  # a token in a path
        ("systems.9.name=" + "x" * 1_000_000, "systems.9.name=…"),
    ],
)
@pytest.mark.slow
def test_an_override_error_never_quotes_a_url_or_a_huge_value(override, shown):
    # Before: the whole override was quoted: a URL's credentials, or 1 MB on one line.
    demo = Path(__file__).resolve().parents[1] / "params" / "gaia_demo.yaml"
    with pytest.raises(ParamsError) as caught:
        load_params(demo, [override])
    assert str(caught.value) == (
        f"{demo}: override {shown!r}: systems.9: expected a list index 0..2"
    )


@pytest.mark.slow
def test_a_yaml_error_in_a_huge_override_is_one_short_line():
    # A 1,000,000-digit integer: YAML's own refusal quoted the whole scalar.
    demo = Path(__file__).resolve().parents[1] / "params" / "gaia_demo.yaml"
    with pytest.raises(ParamsError) as caught:
        load_params(demo, ["seed=" + "7" * 1_000_000])
    message = str(caught.value)
    assert message.startswith(f"{demo}: override 'seed=…':1:1: ") and len(message) < 400


def test_a_webhook_url_in_an_override_is_refused_wherever_params_are_loaded(tmp_path):
    # Before: only the command line refused it; a notebook's parameters cell (JupyterLab)
    # loading the params with the same override kept the URL in its run's manifest.
    from evalbench.params import ParamsError
    from evalbench.studies import load_params

    demo = Path(__file__).resolve().parents[1] / "params" / "gaia_demo.yaml"
    with pytest.raises(ParamsError) as caught:
        load_params(demo, ["alerts.notify=[{webhook: http://127.0.0.1:9/services/SEKRET}]"])
    assert "SEKRET" not in str(caught.value) and "webhook_env" in str(caught.value)


@pytest.mark.parametrize("override", ["seed=-1", f"seed={2**32}", "sample_seed=-5"])
def test_a_seed_the_samplers_cannot_take_is_refused_before_the_run(override):
    # Before: -p seed=-1 (or a seed past 2**32 - 1) ran the whole study, then failed its
    # report at the failure examples ("ValueError: Seed must be between 0 and 2**32 - 1",
    # pandas' DataFrame.sample) in GAIA and BFCL.
    from evalbench.params import ParamsError
    from evalbench.studies import load_params

    demo = Path(__file__).resolve().parents[1] / "params" / "gaia_demo.yaml"
    with pytest.raises(ParamsError, match="seed"):
        load_params(demo, [override])
    assert load_params(demo, [f"seed={2**32 - 1}"]).seed == 2**32 - 1


def test_the_browse_suite_refuses_a_simulated_accuracy_for_a_level_it_has_not():
    path = ROOT / "params" / "browse_suite_demo.yaml"
    with pytest.raises(ParamsError) as err:
        load_params(path, ["systems.0.sim.accuracy={6: 0.5}"])
    assert str(err.value) == (f"{path}: systems.0.sim.accuracy: unknown key '6' "
                              "(levels are 1, 2, 3, 4, 5; 'default' is the fallback)")  # fmt: skip


NOT_A_NAME = ("not the name of an environment variable (up to 64 letters, digits and _); if it "
              "is the key or URL itself, put that in the environment and name the variable here "
              "(the value is not shown)")  # fmt: skip


@pytest.mark.parametrize(
    ("field", "value"),
    [("systems.0.api_key_env", "sk-proj-sekret21abcdef"),
     ("systems.0.api_key_env", "hf_sekretAbCdEfGhIjKlMnOpQrStUvWxYz01"),
     ("systems.0.api_key_env", "AKIASEKRET0EXAMPLE12"),
     ("systems.0.base_url_env", "https://user:sekret@example.com/v1"),
     ("alerts", "{rules: [{error_rate_more_than: 0.5}], notify: [{webhook_env: x-sekret}]}")],
)  # fmt: skip
def test_a_secret_where_its_variables_name_goes_is_refused_and_never_shown(
    tmp_path, capsys, field, value
):
    """A key pasted into ``api_key_env`` was printed: "needs the environment variable
    sk-proj-…; it is not set" (a CI log keeps it); a ``webhook_env`` was echoed "(got …)"."""
    from evalbench.cli import main

    path = _write(tmp_path, GOOD)
    system = ["-p", "systems.0.provider=openai", "-p", "systems.0.model=m"]
    assert main(["run", str(path), *system, "-p", f"{field}={value}"]) == 2
    out, err = capsys.readouterr()
    assert "sekret" not in out + err and "AKIA" not in out + err
    where = "alerts.notify.0.webhook_env" if field == "alerts" else field
    assert err == f"evalbench: {path}: {where}: {NOT_A_NAME}\n"


BIDI = r"a bidirectional control character \(U\+"
CONTROL = r"a control character \(U\+"


@pytest.mark.parametrize(
    ("text", "where", "says"),
    [('systems: [{name: "evil\\u202E", provider: sim}]', "systems.0.name", BIDI),
     ('title: "abc\\u2067def"', "title", BIDI), ('description: "x\\u200fy"', "description", BIDI),
     ('systems: [{name: "red\\e[31mX\\e]0;pwned\\aY", provider: sim}]', "systems.0.name",
      CONTROL + "001B"),
     ('title: "a\\x07b"', "title", CONTROL + "0007"),
     ('description: "x\\x9by"', "description", CONTROL + "009B")],
)  # fmt: skip
def test_a_bidirectional_or_terminal_control_character_is_refused_where_it_is(
    tmp_path, text, where, says
):
    """A system name ending in U+202E (right-to-left override) reversed every number after it
    on the summary and trends pages ("%16 ,%82" for 28% to 61%); one with ESC sequences,
    printed raw by `compare` and `history`, recoloured the terminal and set its title. Params
    are refused with the field; the pages drop bidirectional controls from whatever else they
    show (imported names). Tabs and line breaks (a description's) stay allowed."""
    path = tmp_path / "x.yaml"
    base = "study: gaia\ntitle: t\ndataset: demo\nsystems: [{name: s, provider: sim}]\n"
    key = text.split(":", 1)[0]
    path.write_text("\n".join(row for row in base.splitlines() if not row.startswith(key + ":"))
                    + "\n" + text + "\n")  # fmt: skip
    with pytest.raises(ParamsError, match=rf"x\.yaml: {re.escape(where)}: {says}"):
        load_params(path)
    bad, kind = ("a\u202eb", BIDI) if says == BIDI else ("a\x1bb", CONTROL)
    with pytest.raises(ParamsError, match=rf"systems\.0\.name: {kind}"):
        load_params(_plain(tmp_path), [f"systems.0.name={bad}"])
    ok = tmp_path / "ok.yaml"
    ok.write_text(base.replace("title: t", 'title: t\ndescription: "one\\ttwo\\nthree\\r"'))
    assert load_params(ok).description == "one\ttwo\nthree\r"


def _plain(tmp_path):
    path = tmp_path / "plain.yaml"
    path.write_text("study: gaia\ntitle: t\ndataset: demo\nsystems: [{name: s, provider: sim}]\n")
    return path


def test_pages_drop_bidirectional_controls_from_what_they_show():
    from evalbench.display import escape
    from evalbench.summary.page import e

    for escaped in (escape("evil\u202e: 28%"), e("evil\u202e: 28%")):
        assert escaped == "evil: 28%"


@pytest.mark.parametrize(
    ("override", "says"),
    [("systems.0.sim.accuracy.1=2", "systems.0.sim.accuracy: key '1': a probability (0 to 1), got 2"),
     ("systems.0.sim.accuracy.1=-1", "sim.accuracy: key '1': a probability (0 to 1), got -1"),
     ("systems.0.sim.accuracy=1.5", "systems.0.sim.accuracy: a probability (0 to 1), got 1.5"),
     ("systems.0.sim.strength=1e308", "systems.0.sim.strength: 1e+308 is past 1e300"),
     ("systems.0.sim.noise=-1e301", "systems.0.sim.noise: -1e+301 is past 1e300")],
)  # fmt: skip
def test_a_probability_out_of_range_or_a_number_past_1e300_is_refused(tmp_path, override, says):
    # accuracy 2 or -1 ran as if valid (accuracy 0.719 and 0.375 reported); 1e308 ran, then
    # its own manifest (which refuses numbers past 1e300) could not be read: a traceback, and
    # `make report` stopped there, every later study unrendered
    with pytest.raises(ParamsError) as refused:
        load_params(_plain(tmp_path), [override])
    assert says in str(refused.value) and "\n" not in str(refused.value)
