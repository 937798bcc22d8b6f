"""The docs tell the truth: every link resolves, every path they name exists, and every
``evalbench`` command in their shell blocks parses, with its params file and ``-p``
overrides valid (loaded and validated as `evalbench run` would, nothing run)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from evalbench import cli, sources
from evalbench.studies import load_params

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", ROOT / "CHANGELOG.md", ROOT / "CONTRIBUTING.md",
         *sorted((ROOT / "docs").glob("*.md"))]  # fmt: skip
FENCE = re.compile(r"^[ \t]*```(\w*)\n(.*?)^[ \t]*```", re.M | re.S)
LINK = re.compile(r"\]\(([^)\s]+)\)")
PATH = re.compile(
    r"(?<![\w/.-])((?:params|notebooks|tests|evalbench|docs)/[\w./-]+\.(?:yaml|ipynb|py|md))"
)


def _ids(paths: list[Path]) -> list[str]:
    return [p.relative_to(ROOT).as_posix() for p in paths]


def _anchors(page: Path) -> set[str]:
    """GitHub's anchors of a page's headings (lower case, punctuation dropped, - for space)."""
    heads = re.findall(r"^#+ (.+)$", FENCE.sub("", page.read_text()), flags=re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in heads}


def _shell_lines(page: Path) -> list[str]:
    """Every command line of the page's bash blocks, continuation lines joined."""
    lines = []
    for lang, body in FENCE.findall(page.read_text()):
        if lang in ("bash", "sh", "shell"):
            lines += body.replace("\\\n", " ").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def test_the_readme_is_one_screen_and_docs_hold_the_rest():
    assert len((ROOT / "README.md").read_text().splitlines()) <= 150
    assert len(list((ROOT / "docs").glob("*.md"))) >= 5


@pytest.mark.parametrize("page", PAGES, ids=_ids(PAGES))
def test_every_link_resolves(page):
    for target in LINK.findall(page.read_text()):
        if target.startswith(("http://", "https://", "mailto:")):
            continue
        file, _, anchor = target.partition("#")
        goal = (page.parent / file).resolve() if file else page
        assert goal.exists(), f"{page.name}: link to a missing file {target}"
        if anchor and goal.suffix == ".md":
            assert anchor in _anchors(goal), f"{page.name}: no heading for #{anchor} in {goal.name}"


@pytest.mark.parametrize("page", PAGES, ids=_ids(PAGES))
def test_every_path_named_exists(page):
    text = page.read_text()
    for path in sorted(set(PATH.findall(text))):
        if "<" in path or "*" in path or "mybench" in path:
            continue  # a pattern or a placeholder, not a file
        if path.endswith((".yaml", ".ipynb")) and re.search(
            r"\b(my_|x\.yaml|a\.yaml|b\.yaml)", path
        ):
            continue  # the user's own files in examples
        assert (ROOT / path).exists(), f"{page.name} names {path}, which does not exist"


def _commands(page: Path) -> list[list[str]]:
    out = []
    for line in _shell_lines(page):
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|")
        lexer.whitespace_split, lexer.commenters = True, "#"
        part: list[str] = []
        for word in [*lexer, ";"]:
            if word.strip(";&|"):
                part.append(word)
                continue
            while part and "=" in part[0] and not part[0].startswith("-"):
                part = part[1:]  # VAR=value before the command
            if part and Path(part[0]).name == "evalbench":
                out.append(part[1:])
            part = []
    return out


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES, ids=_ids(PAGES))
def test_every_evalbench_command_shown_parses_and_its_params_validate(page):
    for argv in _commands(page):
        if not argv or any(a in ("...", "…") or "<" in a for a in argv):
            continue  # a placeholder, not a command to copy
        try:
            args = cli._parser(argv).parse_args(argv)
        except SystemExit as stop:
            assert stop.code == 0, f"{page.name}: `evalbench {shlex.join(argv)}` does not parse"
            continue
        params = getattr(args, "params", None)
        if isinstance(params, Path) and (ROOT / params).is_file():
            load_params(ROOT / params, args.overrides)  # a bad key or value raises, naming it
        for name in getattr(args, "names", None) or []:
            sources.get(name)  # a registered data file
