"""Runs over time: find a study's runs, resolve a run reference, pin a baseline, list history.

- **Runs.** A run folder is ``outputs/<study>/<run id>/`` with ``manifest.json``; a params
  file stands for the run its current content makes (when that was rendered), else for the
  latest published run of its study (:func:`resolve_run`). Logs of other harnesses
  (inspect_ai, lm-evaluation-harness) are read by :mod:`evalbench.importers`.
- **Pins.** ``outputs/<study>/baseline.json`` names the study's pinned baseline run
  (:func:`pin_baseline`); the index marks a study whose latest run regressed against it.
- **History.** :func:`history_frame` lists every run from the manifests;
  :func:`headline_series` gives each published run's per-system numbers with intervals.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from evalbench.importers import OutcomeError, RunOutcomes, read_outcomes
from evalbench.importers.outcomes import read_manifest
from evalbench.records import (
    parse_json,
    read_regular_text,
    refuse_links,
    to_json,
    write_atomic,
    write_failure,
)
from evalbench.runs import (
    PUBLISHED_STATUSES,
    UNFINISHED,
    current_manifest,
    in_its_folder,
    now_iso,
)
from evalbench.settings import get_settings
from evalbench.stats import bootstrap_mean, wilson_interval

from .paired import MEASURED_STATES, rng_for, unmeasured

PUBLISHED = PUBLISHED_STATUSES
BASELINE_FILE = "baseline.json"


# ------------------------------------------------------------------------------ runs


def _outputs(outputs: Path | None) -> Path:
    return outputs or get_settings().outputs_dir


def is_published(manifest: dict[str, Any]) -> bool:
    """Whether the run has a published report (its latest attempt, or an earlier one)."""
    return manifest.get("status") in PUBLISHED or bool(manifest.get("published"))


def started_key(manifest: dict[str, Any]) -> str:
    """A run's start as sortable UTC ISO text; ``""`` (older than any run) when its manifest's
    value is no time or one in the future: a hand-edited start never makes a run the latest."""
    value = manifest.get("started_at")
    try:
        when = dt.datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        when = None
    if when is None:
        return ""
    when = when if when.tzinfo else when.replace(tzinfo=dt.timezone.utc)
    if when > dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=1):  # clocks differ a bit
        return ""
    return when.astimezone(dt.timezone.utc).isoformat()


def study_runs(study: str, outputs: Path | None = None) -> list[dict[str, Any]]:
    """Every run manifest of ``outputs/<study>/``, oldest first, each with ``_dir`` (a run
    folder that is a link out of the study's folder is none of them).

    Statuses as every reader shows them (:func:`evalbench.runs.current_manifest`): a run
    still marked running whose folder no process holds is ``interrupted`` (and its manifest
    rewritten so), an unreadable manifest ``failed``.
    """
    rows = []
    for path in sorted((_outputs(outputs) / study).glob("*/manifest.json")):
        if not in_its_folder(path.parent):  # a link out of the study's folder: no run of it
            continue
        manifest = current_manifest(path.parent)
        manifest["_dir"] = path.parent
        rows.append(manifest)
    return sorted(rows, key=started_key)


def latest_published(
    study: str, outputs: Path | None = None, *, plain_first: bool = False
) -> Path | None:
    """The run folder of the study's most recent published run (``None`` without one).

    Args:
        study: the study (params file stem).
        outputs: the outputs folder (default: the settings').
        plain_first: prefer runs of the params file as written (no ``-p`` overrides): runs
            with overrides are experiments on the study, taken only when there is no other.
    """
    runs = [m for m in study_runs(study, outputs) if is_published(m)]
    plain = [m for m in runs if not m.get("overrides")]
    chosen = plain if plain_first and plain else runs
    return Path(chosen[-1]["_dir"]) if chosen else None


def resolve_run(ref: str | Path, *, base: Path | None = None, outputs: Path | None = None) -> Path:
    """What a run reference names: a run folder, or a file/folder to import.

    In this order: an existing path (relative to ``base``, then the working folder) — a run
    folder, a params file (the run of its current content when published, else the study's
    latest published run), or a log to import; then ``<outputs>/<ref>`` (``study/run id``);
    then a study name (its latest published run).

    Raises:
        OutcomeError: nothing of that name, a params file whose study has no published run,
            or a run folder whose run was killed before it recorded what it runs.
    """
    found = _resolve(ref, base, _outputs(outputs))
    manifest = current_manifest(found) if (found / "manifest.json").is_file() else {}
    if manifest and not manifest.get("kind") and manifest.get("status") in UNRECORDED:
        raise OutcomeError(
            f"{found.parent.name}/{found.name}: status {manifest.get('status')} before it "
            "recorded what it runs (no study kind in its manifest): nothing to compare"
        )
    return found


UNRECORDED = ("interrupted", *UNFINISHED)
"""Statuses of a run that may have ended (or not yet got) before its manifest said what it
runs (``kill -9`` during its start)."""


def _resolve(ref: str | Path, base: Path | None, outputs: Path) -> Path:
    for candidate in _candidates(Path(ref), base):
        if candidate.exists():
            if candidate.suffix in (".yaml", ".yml"):
                return _params_run(candidate, outputs)
            return candidate
    inside = not Path(ref).is_absolute() and ".." not in Path(ref).parts
    if inside and (outputs / str(ref) / "manifest.json").exists():
        return outputs / str(ref)
    if inside and (outputs / str(ref)).is_dir():
        latest = latest_published(str(ref), outputs)
        if latest is not None:
            return latest
        raise OutcomeError(f"{ref}: study {ref!r} has no published run under {outputs}")
    raise OutcomeError(
        f"{ref}: not a run folder, params file, log file, outputs/<study>/<run id> or study name"
    )


def study_name(ref: str, outputs: Path | None = None) -> str:
    """``ref`` as a study name: one folder directly under the outputs folder (``./g`` is
    ``g``), never a path that leaves it.

    Raises:
        OutcomeError: a path of more than one part, ``..``, or an absolute path.
    """
    parts = Path(ref).parts
    if len(parts) != 1 or parts[0] == ".." or Path(ref).is_absolute():
        raise OutcomeError(f"{ref}: not a study name (a folder directly under "
                           f"{_outputs(outputs)}); give its name or its params file")  # fmt: skip
    return parts[0]


def _candidates(path: Path, base: Path | None) -> list[Path]:
    if path.is_absolute():
        return [path]
    return [*([base / path] if base else []), path]


def _params_run(params_file: Path, outputs: Path) -> Path:
    exact = params_run_dir(params_file, (), outputs)
    if is_published_run(exact):
        return exact
    latest = latest_published(params_file.stem, outputs)
    if latest is None:
        raise OutcomeError(
            f"{params_file}: study {params_file.stem!r} has no published run yet; "
            f"run `evalbench run {params_file}` first"
        )
    return latest


def params_run_dir(
    params_file: Path, overrides: Sequence[str] = (), outputs: Path | None = None
) -> Path:
    """The run folder the params file with ``overrides`` makes (rendered or not).

    Raises:
        ParamsError: the params file or an override is invalid.
    """
    from evalbench.runs import run_dir_for
    from evalbench.studies import load_params

    return run_dir_for(params_file, load_params(params_file, overrides), _outputs(outputs))


def is_published_run(run_dir: Path) -> bool:
    """Whether ``run_dir`` holds a run with a published report."""
    return (run_dir / "manifest.json").exists() and is_published(_manifest(run_dir))


def _manifest(run_dir: Path) -> dict[str, Any]:
    try:
        return dict(parse_json(read_regular_text(run_dir / "manifest.json")))
    except (OSError, ValueError, TypeError):
        return {}


def load_run(ref: str | Path, **kwargs: Any) -> RunOutcomes:
    """:func:`resolve_run` then :func:`evalbench.importers.read_outcomes`."""
    base, outputs = kwargs.pop("base", None), kwargs.pop("outputs", None)
    return read_outcomes(resolve_run(ref, base=base, outputs=outputs), **kwargs)


# ------------------------------------------------------------------------------ pins


def pin_baseline(run_dir: Path, outputs: Path | None = None, *, note: str = "") -> Path:
    """Pin ``run_dir`` as its study's baseline (``outputs/<study>/baseline.json``).

    Raises:
        OutcomeError: ``run_dir`` is not a published run folder under ``outputs``; the pin
            file cannot be written (a folder in its place, no permission).
        OSError: a full or read-only disk (the command says it for every write alike).
    """
    manifest = _manifest(run_dir)
    if not manifest and (run_dir / "manifest.json").exists():
        read_manifest(run_dir)  # says what is wrong with it (not JSON, not an object)
    if not manifest:
        raise OutcomeError(f"{run_dir}: not a run folder (no manifest.json)")
    if not is_published(manifest):
        raise OutcomeError(f"{run_dir}: has no published report (status {manifest.get('status')})")
    study = str(manifest.get("study") or run_dir.parent.name)
    home = _outputs(outputs) / study
    if run_dir.resolve().parent != home.resolve():  # the gate looks for it there, by name
        raise OutcomeError(f"{run_dir}: not a run folder of study {study!r} in "
                           f"{_outputs(outputs)} (pin one of {home}/RUN_ID)")  # fmt: skip
    refuse_links(home, _outputs(outputs))  # a linked study folder: an archive, read only
    target = home / BASELINE_FILE
    pin = {"study": study, "run_id": run_dir.name, "pinned_at": now_iso(), "note": note}
    try:
        return write_atomic(target, to_json(pin, indent=2) + "\n")
    except OSError as exc:
        if write_failure(exc):
            raise
        raise OutcomeError(f"{target}: cannot write the pin ({exc.strerror or exc})") from None


def pinned_baseline(study: str, outputs: Path | None = None) -> Path | None:
    """The pinned baseline run folder of ``study`` (``None`` when none is pinned).

    Raises:
        OutcomeError: the pin file is unreadable or names a run folder that is gone.
    """
    path = _outputs(outputs) / study / BASELINE_FILE
    if not path.exists():
        return None
    try:
        run_id = str(parse_json(path.read_text(encoding="utf-8"))["run_id"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise OutcomeError(f"{path}: run_id: unreadable pin ({exc})") from None
    if run_id in ("", ".", "..") or Path(run_id).name != run_id:  # a hand edit: ../other/run
        raise OutcomeError(f"{path}: run_id: {run_id!r} is not a run of {study} "
                           f"(a folder name in {path.parent})")  # fmt: skip
    run_dir = path.parent / run_id
    if not (run_dir / "manifest.json").exists():
        raise OutcomeError(f"{path}: run_id: pinned run {run_id!r} is gone from {path.parent}")
    return run_dir


NOT_CONFIGURATION = ("tag", "title", "description")
"""Params that name or describe a run without changing what it studies."""


def configuration(overrides: Sequence[str]) -> tuple[str, ...]:
    """What a run's ``-p`` overrides change in what it studies: all of them but those of
    :data:`NOT_CONFIGURATION` (``tag=``: a scheduled run's name, so the runs ``evalbench
    watch`` makes share one configuration) and of its ``alerts:`` (what is checked after it,
    not what it studies)."""
    return tuple(str(o) for o in overrides if not _naming(str(o)))


def _naming(override: str) -> bool:
    first = override.partition("=")[0].strip().split(".")[0]
    return first in NOT_CONFIGURATION or first == "alerts"


SERVED_FROM = ("engine", "engine_version", "model_sha256", "chat_format", "n_ctx", "extra_args")
"""What changes a local model's answers beyond its params, as :func:`evalbench.params.
params_hash` counts it (:func:`evalbench.models.local.fingerprint`)."""


def params_identity(manifest: dict[str, Any]) -> str:
    """8 hex digits naming what a run studies: the sha256 of its resolved params (the
    manifest's ``params``: the params file's content with the ``-p`` overrides; alert rules
    are never in them) without :data:`NOT_CONFIGURATION`, and what its local models are
    served from. The seed is in: another seed draws other simulated answers, samples and
    intervals. ``""`` for a manifest without its params (written by hand, or by a run
    killed before it began): such runs are told apart by overrides and commit only."""
    params = manifest.get("params")
    if not isinstance(params, dict):
        return ""
    kept = {k: v for k, v in params.items() if k not in NOT_CONFIGURATION}
    models = [m for m in manifest.get("models") or [] if isinstance(m, dict)]
    served = [{k: m["served"].get(k) for k in SERVED_FROM} for m in models
              if isinstance(m.get("served"), dict)]  # fmt: skip
    text = json.dumps({"params": kept, "local_models": served}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def setup_label(overrides: str, params: str, commit: str, dirty: bool) -> str:
    """How a run was made, in a few words: ``seed=2 · params 1a2b3c4d · 1a2b3c4d5e+dirty``
    (``overrides``: without ``tag=``; ``params``: :func:`params_identity`)."""
    made = overrides or "as written"
    made += f" · params {params}" if params else ""
    return f"{made} · {commit or 'no commit'}{'+dirty' if dirty else ''}"


def check_baseline(run_dir: Path) -> tuple[Path | None, str]:
    """The run ``run_dir`` is checked against (alerts, the summary's change): the study's
    pinned baseline, else its latest ``ok`` run of the same configuration (its overrides
    but ``tag=``, :func:`configuration`, and its params, :func:`params_identity`) started
    before it; with how it was chosen, or why there is none.

    Raises:
        OutcomeError: the pin file is unreadable or names a run that is gone.
    """
    study, outputs = run_dir.parent.name, run_dir.parent.parent
    pinned = pinned_baseline(study, outputs)
    if pinned is not None:
        if pinned.resolve() == run_dir.resolve():
            return None, "this run is the study's pinned baseline"
        return pinned, "pinned baseline"
    this = current_manifest(run_dir)
    wanted = _configuration(this)
    started = started_key(this)
    earlier = [
        m for m in study_runs(study, outputs)
        if m.get("status") == "ok" and Path(m["_dir"]).resolve() != run_dir.resolve()
        and _configuration(m) == wanted and started_key(m) < started
    ]  # fmt: skip
    if not earlier:
        return None, "no earlier ok run of this configuration and no pinned baseline"
    return Path(earlier[-1]["_dir"]), "previous ok run of this configuration"


def _configuration(manifest: dict[str, Any]) -> tuple[tuple[str, ...], str]:
    return configuration(manifest.get("overrides") or []), params_identity(manifest)


# ------------------------------------------------------------------------------ history


HISTORY_COLUMNS = [
    "run_id",
    "status",
    "started_at",
    "ended_at",
    "commit",
    "dirty",
    "params_hash",
    "overrides",
    "systems",
    "simulated",
    "headlines",
    "pinned",
    "alerts",
    "report",
]


def history_frame(study: str, outputs: Path | None = None) -> pd.DataFrame:
    """Every run of ``study`` from its manifests, oldest first (:data:`HISTORY_COLUMNS`)."""
    try:
        pinned = pinned_baseline(study, outputs)
    except OutcomeError:
        pinned = None
    rows = [_history_row(m, pinned) for m in study_runs(study, outputs)]
    return pd.DataFrame(rows, columns=HISTORY_COLUMNS)


def _history_row(m: dict[str, Any], pinned: Path | None) -> dict[str, Any]:
    git = (m.get("environment") or {}).get("git") or {}
    shown = m if m.get("status") in PUBLISHED else (m.get("published") or m)
    sims = set(m.get("simulated_names") or [])
    sims |= {x.get("name") for x in m.get("models") or [] if x.get("provider") == "sim"}
    run_dir = Path(m["_dir"])
    return {
        "run_id": run_dir.name,
        "status": m.get("status"),
        "started_at": m.get("started_at"),
        "ended_at": m.get("ended_at"),
        "commit": (git.get("commit") or "")[:10] or None,
        "dirty": bool(git.get("dirty")),
        "params_hash": m.get("params_hash") or run_dir.name,  # the folder is named by it
        "overrides": " ".join(m.get("overrides") or []),
        "systems": ", ".join(str(x.get("name")) for x in m.get("models") or []),
        "simulated": ", ".join(sorted(str(s) for s in sims if s)),
        "headlines": "; ".join(
            f"{k}={_short(v)}" for k, v in (shown.get("headlines") or {}).items()
        ),
        "pinned": pinned is not None and run_dir.resolve() == pinned.resolve(),
        "alerts": fired_alerts(m),
        "report": str(run_dir / "report.html") if (run_dir / "report.html").exists() else None,
    }


def fired_alerts(manifest: dict[str, Any]) -> str:
    """The alerts a run's check fired, one ``rule: system metric slice`` each ("" for none)."""
    fired = (manifest.get("alerts") or {}).get("fired") or []
    return "; ".join(f"{f.get('rule')}: {f.get('system')} {f.get('metric')} {f.get('slice')}"
                     for f in fired)  # fmt: skip


def _short(value: Any) -> str:
    return f"{value:.3f}" if isinstance(value, float) else str(value)


SUMMARY_COLUMNS = [
    "system",
    "metric",
    "kind",
    "higher_is_better",
    "n",
    "estimate",
    "low",
    "high",
    "unscored",
    "errors",
    "measured",
]


def summarize_outcomes(
    outcomes: pd.DataFrame,
    *,
    level: float = 0.95,
    rounds: int = 1000,
    seed: int = 0,
    nothing_measured: Collection[str] = (),
) -> pd.DataFrame:
    """Per system and metric over all items: the mean outcome with its interval.

    Binary metrics get a Wilson interval, scores a seeded percentile bootstrap of the mean;
    ``n`` counts items with a value (a failed call counts wrong where the study counts it
    so), ``unscored`` those without, ``errors`` failed calls, ``measured`` the items with a
    value that are not failed calls. A system that measured none (or is in
    ``nothing_measured``: its manifest says so, :func:`.paired.unmeasured`) has no result:
    its estimate and interval are NaN, never 0.
    """
    rows = []
    for (system, metric), part in outcomes.groupby(["system", "metric"], sort=False):
        values = part["value"].dropna().to_numpy(float)
        kind = str(part["kind"].iloc[0])
        counted = int((part["value"].notna() & part["state"].isin(MEASURED_STATES)).sum())
        if system in nothing_measured:
            counted = 0
        if kind == "binary":
            interval = wilson_interval(int(values.sum()), len(values), level)
        else:
            rng = rng_for(seed, "summary", system, metric)
            interval = bootstrap_mean(values, rng=rng, rounds=rounds, level=level)
        if not counted:
            interval = interval._replace(estimate=math.nan, low=math.nan, high=math.nan)
        rows.append(
            {
                "system": system,
                "metric": metric,
                "kind": kind,
                "higher_is_better": bool(part["higher_is_better"].iloc[0]),
                "n": len(values),
                "estimate": interval.estimate,
                "low": interval.low,
                "high": interval.high,
                "unscored": int(part["value"].isna().sum()),
                "errors": int((part["state"] == "error").sum()),
                "measured": counted,
            }
        )
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


def headline_series(
    study: str, outputs: Path | None = None, *, level: float = 0.95, rounds: int = 1000
) -> pd.DataFrame:
    """Each published run's per-system summary (:func:`summarize_outcomes`), oldest first,
    with ``run_id``, ``started_at``, what made it (``overrides`` other than ``tag=``,
    ``params``: :func:`params_identity`, ``commit``, ``dirty``), the ``alerts`` its check
    fired and ``problem`` (why a run could not be read)."""
    frames = []
    for m in study_runs(study, outputs):
        if not is_published(m):
            continue
        git = (m.get("environment") or {}).get("git") or {}
        head = {
            "run_id": Path(m["_dir"]).name,
            "started_at": m.get("started_at"),
            "overrides": " ".join(configuration(m.get("overrides") or [])),
            "params": params_identity(m),
            "commit": (git.get("commit") or "")[:10],
            "dirty": bool(git.get("dirty")),
            "alerts": fired_alerts(m),
        }
        try:
            run = read_outcomes(Path(m["_dir"]))
            summary = summarize_outcomes(run.outcomes, level=level, rounds=rounds,
                                         nothing_measured=unmeasured(run))  # fmt: skip
        except OutcomeError as exc:
            frames.append(pd.DataFrame([{**head, "problem": str(exc)}]))
            continue
        frames.append(summary.assign(**head, problem=None))
    columns = ["run_id", "started_at", "overrides", "params", "commit", "dirty", "alerts",
               *SUMMARY_COLUMNS, "problem"]  # fmt: skip
    if not frames:
        return pd.DataFrame(columns=columns)
    return pd.concat(frames, ignore_index=True).reindex(columns=columns)
