"""``evalbench --help`` teaches: every subcommand listed in plain text, a version, and each
subcommand's help with an example and the defaults of its options."""

from __future__ import annotations

import re

import pytest

from evalbench import cli

COMMANDS = ("run", "report", "publish", "compare", "history", "watch", "label", "fetch", "sources",
            "cache")  # fmt: skip


def _help(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    with pytest.raises(SystemExit) as stop:
        cli.main([*argv, "--help"])
    assert stop.value.code == 0
    return capsys.readouterr().out


def test_the_overview_lists_every_subcommand_in_plain_text(capsys):
    text = _help(capsys)
    listed = re.findall(r"^  (\w+) ", text.split("commands:")[1], flags=re.M)
    assert tuple(listed[: len(COMMANDS)]) == COMMANDS
    assert "``" not in text and ":data:" not in text  # no raw RST
    assert "evalbench run params/gaia_demo.yaml" in text  # an example


def test_version(capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(["--version"])
    assert stop.value.code == 0
    assert re.fullmatch(r"evalbench \d+\.\d+\.\d+\S*\n", capsys.readouterr().out)


@pytest.mark.parametrize("command", COMMANDS)
def test_each_subcommand_shows_an_example(capsys, command):
    text = _help(capsys, command)
    assert text.startswith(f"usage: evalbench {command} ")
    assert "examples:" in text
    assert f"evalbench {command} " in text.split("examples:")[1]


def test_defaults_are_stated(capsys):
    def flat(command: str) -> str:  # argparse wraps lines at the terminal's width
        return " ".join(_help(capsys, command).split())

    assert "bootstrap rounds (default: 1000)" in flat("compare")
    assert "(default: 2, one kernel each)" in flat("report")
    assert "delete them (default: stats)" in flat("cache")


def test_compare_says_what_a_run_can_be(capsys):
    text = _help(capsys, "compare")
    for kind in ("a run folder", "a study name", "a params file", "inspect_ai log",
                 "lm-evaluation-harness"):  # fmt: skip
        assert kind in text


@pytest.mark.parametrize("command", ["run", "publish", "report"])
def test_a_path_too_long_for_any_file_is_one_line(tmp_path, capsys, command):
    # Before: OSError [Errno 36] File name too long, with a traceback
    from evalbench.cli import main

    path = tmp_path / ("b" * 300 + ".yaml")
    assert main([command, str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("evalbench: ") and "file name too long" in err and err.count("\n") == 1


@pytest.mark.parametrize(
    ("argv", "says"),
    [(["compare", "a", "b", "--alpha", "abc"], "argument --alpha: invalid float value: 'abc'"),
     (["compare", "a", "b", "--rounds", "1e3"], "argument --rounds: invalid int value: '1e3'"),
     (["run"], "the following arguments are required: params"),
     (["nope"], "argument COMMAND: invalid choice: 'nope'"),
     (["cache", "wipe"], "argument action: invalid choice: 'wipe'"),
     (["report", "-j", "0"], "argument -j/--jobs: 0: studies at once must be 1 or more"),
     (["report", "-j", "-1"], "argument -j/--jobs: -1: studies at once must be 1 or more")],
)  # fmt: skip
def test_a_bad_option_is_one_line_naming_the_help(capsys, argv, says):
    # argparse printed its whole usage block (six lines) above the error
    with pytest.raises(SystemExit) as stop:
        cli.main(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and says in err, err
    command = " ".join(a for a in argv[:1] if a != "nope")
    assert err.startswith(
        f"evalbench{' ' + command if command else ''}: "
    ) and err.rstrip().endswith(f"(evalbench {command + ' ' if command else ''}--help)"), err


def test_ctrl_c_while_the_command_loads_is_one_line_and_exit_130(tmp_path):
    # a SIGINT in the first second (pandas loading) was a traceback through the imports
    import subprocess
    import sys

    code = (
        "import sys\n"
        "class Stop:\n"  # the interrupt, arriving deterministically as pandas loads
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'pandas': raise KeyboardInterrupt\n"
        "sys.meta_path.insert(0, Stop())\n"
        "sys.argv = ['evalbench', 'history', 'g']\n"
        "from evalbench.__main__ import main\n"
        "sys.exit(main())\n"
    )  # fmt: skip
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)  # fmt: skip
    assert (proc.returncode, proc.stderr) == (130, "evalbench: interrupted\n")


def test_an_interrupted_report_says_how_many_studies_it_finished_of_how_many(
    tmp_path, capsys, monkeypatch
):
    # it ended "0 studies in 10.6 s: 0 ok, 0 skipped, 0 failed" when 4 were asked for and
    # none had finished: no word of the interrupt, nor of the three never run
    from pathlib import Path

    from evalbench.publish import StudyResult

    files = [tmp_path / f"s{i}.yaml" for i in range(4)]

    def stopped(paths, **kwargs):
        yield StudyResult(Path(paths[0]), "ok", None, 1.0)
        raise KeyboardInterrupt

    from evalbench import publish

    monkeypatch.setattr(publish, "run_many", stopped)
    monkeypatch.setattr(publish, "build_index", lambda: tmp_path / "index.html")
    assert cli.main(["report", *map(str, files)]) == 130
    out = capsys.readouterr().out
    assert "\ninterrupted after 1 of 4 studies in " in out
    assert ": 1 ok, 0 skipped, 0 failed; rerun the same command to resume\n" in out
