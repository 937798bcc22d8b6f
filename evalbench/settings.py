"""Environment-only settings: where things live, and secrets.

Nothing here runs at import time: call :func:`get_settings` when you need the values,
so a notebook or test that changes the environment sees the change. Secrets (API keys,
the Hugging Face token) are read from the environment at the moment of use and never
stored in params, records, caches, manifests or reports.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, BaseModel

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
_TOKEN = re.compile(r"(hf|ghp|gho|ghs|ghu|github_pat)_|AKIA[0-9A-Z]{16}$")
"""Tokens that are also valid variable names (Hugging Face, GitHub, AWS access key ids)."""


def _env_name(value: str) -> str:
    if not _ENV_NAME.fullmatch(value) or _TOKEN.match(value):  # not shown: a secret, maybe
        raise ValueError("not the name of an environment variable (up to 64 letters, digits "
                         "and _); if it is the key or URL itself, put that in the environment "
                         "and name the variable here (the value is not shown)")  # fmt: skip
    return value


EnvName = Annotated[str, AfterValidator(_env_name)]
"""A params field that names an environment variable holding a secret (``api_key_env``): a
value that is no such name is refused without being shown (a key pasted there was printed)."""

ENV_OUTPUTS = "EVALBENCH_OUTPUTS"
ENV_CACHE = "EVALBENCH_CACHE"
ENV_MIRROR = "EVALBENCH_DATA_MIRROR"
ENV_OFFLINE = "EVALBENCH_OFFLINE"
ENV_HOME = "EVALBENCH_HOME"
ENV_EXECUTOR = "EVALBENCH_EXECUTOR"
ENV_RAY_ADDRESS = "EVALBENCH_RAY_ADDRESS"


class MissingSecret(RuntimeError):
    """An environment variable that should hold a secret is unset or empty."""


class UnusableSecret(ValueError):
    """An environment variable holds a value that cannot be used (the message names the
    variable and why, never the value)."""


class Settings(BaseModel):
    """Paths and switches resolved from the environment."""

    project_root: Path
    """Folder holding ``params/`` and ``notebooks/`` (``EVALBENCH_HOME`` or found upward)."""
    outputs_dir: Path
    """Where run folders and ``index.html`` land (``EVALBENCH_OUTPUTS``, default ``outputs/``)."""
    cache_dir: Path
    """Downloaded data and the response cache (``EVALBENCH_CACHE``, default
    ``~/.cache/evalbench``)."""
    data_mirror: Path | None
    """A local mirror laid out as ``<host>/<path>`` of each URL (``EVALBENCH_DATA_MIRROR``)."""
    offline: bool
    """``EVALBENCH_OFFLINE=1`` forbids downloads (mirror and cache only)."""
    executor: str
    """Where agent tasks and sweep cells run: ``local`` (default), ``ray`` or ``auto``
    (``EVALBENCH_EXECUTOR``; checked by :func:`evalbench.executors.choice`)."""
    ray_address: str | None
    """The Ray cluster to use (``EVALBENCH_RAY_ADDRESS``; else Ray's own ``RAY_ADDRESS``)."""


def get_settings() -> Settings:
    """Read the settings from the current environment."""
    root = find_project_root()
    mirror = os.environ.get(ENV_MIRROR, "").strip()
    return Settings(
        project_root=root,
        outputs_dir=Path(os.environ.get(ENV_OUTPUTS) or root / "outputs").resolve(),
        cache_dir=Path(os.environ.get(ENV_CACHE) or Path.home() / ".cache" / "evalbench"),
        data_mirror=Path(mirror).resolve() if mirror else None,
        offline=os.environ.get(ENV_OFFLINE, "").strip().lower() in {"1", "true", "yes"},
        executor=os.environ.get(ENV_EXECUTOR, "").strip().lower() or "local",
        ray_address=os.environ.get(ENV_RAY_ADDRESS, "").strip() or None,
    )


def find_project_root(start: Path | None = None) -> Path:
    """The nearest folder at or above ``start`` (default: cwd) with ``params/`` and ``notebooks/``.

    Notebooks run with their own folder as cwd; looking upward lets them find the project
    without a ``cd ..``. ``EVALBENCH_HOME`` overrides the search.
    """
    if os.environ.get(ENV_HOME):
        return Path(os.environ[ENV_HOME]).resolve()
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "params").is_dir() and (folder / "notebooks").is_dir():
            return folder
    return here


def secret(env_name: str, *, purpose: str, hint: str = "") -> str:
    """Return the value of the environment variable ``env_name``.

    Args:
        env_name: name of the variable (params only ever hold this name, not the value).
        purpose: what the secret is for, used in the error message.
        hint: what else the user may do, appended to the error message.

    Raises:
        MissingSecret: naming the variable and what needs it.
    """
    value = os.environ.get(env_name, "")
    if not value:
        raise MissingSecret(
            f"{purpose} needs the environment variable {env_name}; it is not set{hint}"
        )
    return value
