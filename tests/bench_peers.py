"""Set up the peers ``make bench`` times evalbench against (never committed, never in .venv).

``python tests/bench_peers.py [arena] [bfcl]`` (default: both) puts them under
:data:`PEERS`, ``bench-peers/`` in evalbench's cache folder (``EVALBENCH_CACHE``, default
``~/.cache/evalbench``): third-party code and a virtualenv, not evalbench's outputs:

* ``arena``: the rating code of FastChat (``fastchat/serve/monitor/rating_systems.py``:
  ``compute_bt``, ``compute_bootstrap_bt``) and of Arena-Hard v0.1 (``utils_math.py``:
  ``compute_mle_elo``, ``get_bootstrap_result``) at the commits the rating oracles were made
  with, each a single file checked against its sha256. Downloaded from GitHub, or with
  ``--from-git OWNER/REPO=PATH`` taken from a local clone that has the commit
  (``git show <commit>:<path>``). They need only numpy, scipy, pandas, tqdm and scikit-learn,
  which evalbench's dev environment has.
* ``bfcl``: a bench-only virtualenv ``bfcl-venv`` with ``bfcl-eval`` 2026.3.23 from PyPI.
  Its AST checker imports every model handler, hence the providers' SDKs; the two
  dependencies only its agentic memory backends use (``sentence-transformers``,
  ``faiss-cpu``, which pull PyTorch: gigabytes) are left out, and ``soundfile``, which
  ``qwen-agent`` imports without declaring it, is added.

Idempotent: what is already there (and checks out) is kept. Exit status 1 when something
could not be set up (the benches then skip that peer's row and say why).
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import urllib.request
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from evalbench.settings import get_settings  # noqa: E402

PEERS = get_settings().cache_dir / "bench-peers"
"""Where the peers live; bench_arena.py and bench_bfcl.py read them here."""

ARENA_FILES = {
    "fastchat_rating_systems.py": (
        "lm-sys/FastChat", "0e6d3e4beaab66f4d3f93db72541a4abab8af28d",
        "fastchat/serve/monitor/rating_systems.py",
        "cf73707b39e5b97cf890f117f9afef088fa781f6891391e14631dc4ed4a920cf",
    ),
    "arena_hard_utils_math.py": (
        "lmarena/arena-hard-auto", "efc012e192b88024a5203f5a28ec8fc0342946df",
        "utils_math.py", "4954e3fcfbc0a0266ac122a4b5950d51bd9dd80c0397938345035aad68e3a051",
    ),
}  # fmt: skip
BFCL_VERSION = "2026.3.23"
BFCL_DEPS = [
    "requests", "tqdm", "numpy==1.26.4", "pandas", "huggingface_hub", "pydantic>=2.8.2",
    "python-dotenv>=1.0.1", "tree_sitter==0.21.3", "tree-sitter-java==0.21.0",
    "tree-sitter-javascript==0.21.4", "openai>=1.86.0", "mistralai==1.7.0",
    "anthropic>=0.75.0", "cohere==5.18.0", "typer>=0.12.5", "tabulate>=0.9.0",
    "datamodel-code-generator==0.25.7", "google-genai>=1.52.0", "qwen-agent", "soundfile",
    "mpmath==1.3.0", "tenacity>=8.5.0", "writer-sdk>=2.1.0", "overrides", "boto3",
    "beautifulsoup4", "html2text", "rank_bm25==0.2.2", "google-search-results",
    "networkx==3.3", "filelock==3.20.0",
]  # fmt: skip
BFCL_CHECK = (
    "from bfcl_eval.eval_checker import eval_runner; "
    "from bfcl_eval.model_handler.api_inference.openai_completion import OpenAICompletionsHandler"
)


def arena(clones: dict[str, Path]) -> bool:
    """The two rating files, sha256-checked. Returns whether both are there."""
    PEERS.mkdir(parents=True, exist_ok=True)
    ok = True
    for name, (repo, commit, path, sha) in ARENA_FILES.items():
        target = PEERS / name
        if target.exists() and _sha(target.read_bytes()) == sha:
            continue
        try:
            data = _from_git(clones[repo], commit, path) if repo in clones else _download(
                f"https://raw.githubusercontent.com/{repo}/{commit}/{path}"
            )  # fmt: skip
        except (OSError, subprocess.CalledProcessError) as exc:
            print(f"bench_peers: {repo}/{path}@{commit[:7]}: {exc}; pass "
                  f"--from-git {repo}=<a clone with that commit>", file=sys.stderr)  # fmt: skip
            ok = False
            continue
        if _sha(data) != sha:
            print(f"bench_peers: {repo}/{path}@{commit[:7]}: sha256 mismatch", file=sys.stderr)
            ok = False
            continue
        target.write_bytes(data)
        print(f"bench_peers: {target} ({repo}@{commit[:7]})")
    return ok


def bfcl() -> bool:
    """The bench-only bfcl-eval virtualenv. Returns whether its checker imports."""
    env = PEERS / "bfcl-venv"
    python = env / "bin" / "python"
    if python.exists() and _imports(python):
        return True
    venv.create(env, with_pip=True)
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    try:
        subprocess.run([*pip, "--no-deps", f"bfcl-eval=={BFCL_VERSION}"], check=True)
        subprocess.run([*pip, *BFCL_DEPS], check=True)
    except subprocess.CalledProcessError as exc:
        print(f"bench_peers: pip failed ({exc}); is PyPI reachable?", file=sys.stderr)
        return False
    if not _imports(python):
        print(f"bench_peers: bfcl-eval in {env} does not import", file=sys.stderr)
        return False
    print(f"bench_peers: {env} (bfcl-eval {BFCL_VERSION})")
    return True


def _imports(python: Path) -> bool:
    done = subprocess.run([str(python), "-c", BFCL_CHECK], capture_output=True, text=True)
    return done.returncode == 0


def _download(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=60) as response:
        return response.read()


def _from_git(clone: Path, commit: str, path: str) -> bytes:
    git_dir = ["--git-dir", str(clone)] if (clone / "HEAD").exists() else ["-C", str(clone)]
    return subprocess.run(["git", *git_dir, "show", f"{commit}:{path}"], check=True,
                          capture_output=True).stdout  # fmt: skip


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("peers", nargs="*", choices=["arena", "bfcl"], default=["arena", "bfcl"])
    parser.add_argument("--from-git", action="append", default=[], metavar="OWNER/REPO=PATH",
                        help="take a peer file from a local clone instead of GitHub")  # fmt: skip
    args = parser.parse_args()
    clones = dict(spec.split("=", 1) for spec in args.from_git)
    results = []
    if "arena" in args.peers:
        results.append(arena({repo: Path(path) for repo, path in clones.items()}))
    if "bfcl" in args.peers:
        results.append(bfcl())
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
