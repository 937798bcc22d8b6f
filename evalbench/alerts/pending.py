"""Which runs have notifications to deliver again: read from their manifests only, with no
import of the alert machinery (``make report`` asks it of every study before it starts)."""

from __future__ import annotations

from pathlib import Path

from evalbench.runs import read_manifest


def has_undelivered(study_dir: Path) -> bool:
    """Whether a run of the study in ``study_dir`` has notifications to deliver again
    (:func:`evalbench.alerts.check.redeliver` delivers them; it needs the study's params)."""
    return any(undelivered_run(path.parent) for path in study_dir.glob("*/manifest.json"))


def undelivered_run(run_dir: Path) -> bool:
    """Whether the run's alerts record keeps a delivery to try again (``retry: true``)."""
    try:
        record = read_manifest(run_dir).get("alerts")
    except (OSError, ValueError):  # unreadable: its own run says so
        return False
    entries = record.get("deliveries") if isinstance(record, dict) else None
    return any(isinstance(e, dict) and e.get("retry") for e in entries or [])
