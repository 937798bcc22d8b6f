"""Compare the numbers of two rendered ``outputs/`` folders (or two run folders).

    python tests/compare_runs.py OUTPUTS_BEFORE OUTPUTS_AFTER [--only STUDY]
                                 [--map old_study=new_study] [--records old=new]

For every study in BEFORE (its latest run), the study of the same name in AFTER (or the
one ``--map`` names) must have the same headline values and, for every
``records/*.jsonl`` of the BEFORE run, the same multiset of records, field by field,
ignoring only fields that measure time (``latency_s``, ``latency``, ``wall_s``). A record
file may be renamed with ``--records old=new``. Prints one line per study and exits 1 on any difference.

Used to show that a restructure changed no number (issue 13).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter
from pathlib import Path
from typing import Any

VOLATILE = frozenset({"latency_s", "latency", "wall_s"})


def latest_run(study_dir: Path) -> Path:
    """The run folder of ``study_dir`` whose manifest started last (runs of the params file
    as written before runs with ``-p`` overrides)."""
    manifests = {p.parent: json.loads(p.read_text()) for p in study_dir.glob("*/manifest.json")}
    if not manifests:
        raise FileNotFoundError(f"no run under {study_dir}")
    return max(manifests, key=lambda r: (not manifests[r].get("overrides"),
                                         manifests[r]["started_at"]))  # fmt: skip


def canonical(row: dict[str, Any], fields: set[str] | None = None) -> str:
    """A record as sorted JSON without volatile fields (NaN written as null), restricted to
    ``fields`` when given."""
    clean = {k: _plain(v) for k, v in row.items()
             if k not in VOLATILE and (fields is None or k in fields)}  # fmt: skip
    return json.dumps(clean, sort_keys=True, ensure_ascii=False)


def _plain(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def read_records(path: Path, fields: set[str] | None = None) -> Counter[str]:
    """The multiset of canonical records of a JSONL file (only ``fields``, when given)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return Counter(canonical(json.loads(line), fields) for line in lines if line.strip())


def field_names(path: Path) -> set[str]:
    """Every field name used in a JSONL file."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return {k for line in lines if line.strip() for k in json.loads(line)}


def compare_runs(
    before: Path, after: Path, renames: dict[str, str], old_fields_only: bool = False
) -> list[str]:
    """Differences between two run folders (empty when every number is identical)."""
    problems = []
    heads_a = json.loads((before / "manifest.json").read_text()).get("headlines", {})
    heads_b = json.loads((after / "manifest.json").read_text()).get("headlines", {})
    if heads_a != heads_b:
        problems.append(f"headlines differ: {heads_a} != {heads_b}")
    for path in sorted((before / "records").glob("*.jsonl")):
        other = after / "records" / (renames.get(path.stem, path.stem) + ".jsonl")
        if not other.exists():
            problems.append(f"records/{path.name}: missing in {after}")
            continue
        fields = field_names(path) if old_fields_only else None
        a, b = read_records(path, fields), read_records(other, fields)
        if a != b:
            only_a, only_b = sum((a - b).values()), sum((b - a).values())
            example = next(iter(a - b), next(iter(b - a), ""))[:300]
            problems.append(
                f"records/{path.name}: {only_a} record(s) only before, {only_b} only after; "
                f"e.g. {example}"
            )
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--map", action="append", default=[], metavar="OLD=NEW")
    parser.add_argument("--records", action="append", default=[], metavar="OLD=NEW")
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="STUDY",
        help="compare only these studies (names in BEFORE; repeatable)",
    )
    parser.add_argument(
        "--old-fields-only",
        action="store_true",
        help="compare only the record fields BEFORE has (AFTER may add fields)",
    )
    args = parser.parse_args(argv)
    studies = dict(m.split("=", 1) for m in args.map)
    renames = dict(r.split("=", 1) for r in args.records)
    failed = 0
    names = sorted(p.parent.parent.name for p in args.before.glob("*/*/manifest.json"))
    for name in sorted(set(names) & set(args.only or names)):
        target = args.after / studies.get(name, name)
        try:
            problems = compare_runs(
                latest_run(args.before / name), latest_run(target), renames, args.old_fields_only
            )
        except FileNotFoundError as exc:
            problems = [str(exc)]
        failed += bool(problems)
        status = "identical" if not problems else "DIFFERENT"
        print(f"{status:10s} {name}" + "".join(f"\n           {p}" for p in problems))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
