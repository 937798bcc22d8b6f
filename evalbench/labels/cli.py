"""``evalbench label``: make a label task, serve it to annotators, follow it, export it.

    evalbench label init rubric golden_items.jsonl -o support.yaml --annotator alice ...
    evalbench label init pairwise outputs/arena_demo/<run>/ -o votes.yaml
    evalbench label init verification outputs/datagen_demo/<run>/ -o review.yaml
    evalbench label serve support.yaml                  http://127.0.0.1:8765/?annotator=...
    evalbench label serve support.yaml --host 0.0.0.0   a token URL per annotator
    evalbench label status support.yaml                 done / total per annotator
    evalbench label export support.yaml golden.jsonl    the format the study reads

A usage or file problem is one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

RUN_FILES = {"pairwise": "label_pairs.jsonl", "verification": "generated.jsonl"}
"""The items file a study run folder holds for each kind (arena, datagen)."""
TORN = "a crash mid-write: never acknowledged, so no saved label is lost"
"""Why a torn last line of a label file is harmless (``status`` and ``export`` say so)."""
INIT_OPTIONS = {"rubric": "--rubric", "annotators": "--annotator", "title": "--title"}
"""The ``init`` option that sets each tasks-file field (a refusal names the option)."""


def add_label_parser(sub: Any) -> None:
    """Add ``label`` and its actions to the ``evalbench`` sub-parsers."""
    label = sub.add_parser("label", help="collect human labels in the browser (init|serve|...)")
    actions = label.add_subparsers(dest="action", required=True)

    init = actions.add_parser("init", help="write a tasks file for an items file or a run")
    init.add_argument("kind", choices=["rubric", "pairwise", "verification"])
    init.add_argument("source", type=Path, help="items .jsonl/.csv, or an arena/datagen run dir")
    init.add_argument("-o", "--output", type=Path, required=True, help="the tasks YAML to write")
    init.add_argument("--title", help="shown on every page (default: from the source)")
    init.add_argument("--rubric", help="rubric kind: the built-in rubric (default fine_grained)")
    init.add_argument("--annotator", action="append", default=[], help="repeatable")
    init.set_defaults(handler=_cmd_init)

    serve = actions.add_parser("serve", help="run the annotators' web app")
    serve.add_argument("tasks", type=Path, help="the tasks YAML")
    serve.add_argument(
        "--host", default="127.0.0.1", help="address (default 127.0.0.1; others need tokens)"
    )
    serve.add_argument("--port", type=_port, default=8765, help="port (0: a free one)")
    serve.add_argument("--require-token", action="store_true", help="tokens on 127.0.0.1 too")
    serve.add_argument(
        "--annotator", action="append", default=[], help="who may label (adds; repeatable)"
    )
    serve.set_defaults(handler=_cmd_serve)

    status = actions.add_parser("status", help="labels done per annotator")
    status.add_argument("tasks", type=Path)
    status.set_defaults(handler=_cmd_status)

    export = actions.add_parser("export", help="write the labels in the study's format")
    export.add_argument("tasks", type=Path)
    export.add_argument("output", type=Path, help=".jsonl or .csv")
    export.set_defaults(handler=_cmd_export)


def _fail(message: str) -> int:
    print(f"evalbench label: {message}", file=sys.stderr)
    return 2


def _load(path: Path, extra_annotators: list[str] | None = None) -> Any:
    from .tasks import LabelTaskError, check_annotator, load_tasks

    tasks = load_tasks(path)
    if extra_annotators:
        extra = [check_annotator(n) for n in extra_annotators]
        repeated = next((n for i, n in enumerate(extra) if n in extra[:i]), None)
        if repeated is not None:  # as the tasks file; a name already in it just stays
            raise LabelTaskError(f"--annotator: {repeated!r} is given twice")
        names = list(dict.fromkeys([*tasks.spec.annotators, *extra]))
        tasks = tasks._replace(spec=tasks.spec.model_copy(update={"annotators": names}))
    return tasks


def _port(text: str) -> int:
    """A TCP port, 0 to 65535 (argparse says so in one line; bind() raised OverflowError)."""
    port = int(text)
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is no port (0 to 65535; 0: a free one)")
    return port


def _cmd_init(args: argparse.Namespace) -> int:
    import os

    from pydantic import ValidationError

    from evalbench.params import dump_yaml
    from evalbench.records import write_atomic

    from .tasks import LabelTask, LabelTaskError, load_items

    source: Path = args.source
    if source.is_dir():
        if args.kind not in RUN_FILES:
            return _fail(f"{source}: a folder works for pairwise and verification; give a file")
        source = source / RUN_FILES[args.kind]
    try:
        items = load_items(source, args.kind)
        spec = LabelTask(
            kind=args.kind, title=args.title or f"{args.kind} labels: {source.stem}",
            items=os.path.relpath(source.resolve(), args.output.resolve().parent),
            rubric=args.rubric, annotators=args.annotator,
        )  # fmt: skip
    except ValidationError as exc:  # its first line is only "1 validation error for ..."
        return _fail(_option_error(exc))
    except (LabelTaskError, ValueError) as exc:
        return _fail(str(exc).splitlines()[0])
    if args.output.exists():
        return _fail(f"{args.output}: exists; not overwritten")
    body = spec.model_dump(exclude_defaults=True)
    try:
        write_atomic(args.output, dump_yaml({"kind": spec.kind, **body}))
    except OSError as exc:
        return _fail(f"{args.output}: not written ({exc.strerror or exc})")
    print(f"wrote {args.output} ({len(items)} {args.kind} items from {source})")
    print(f"next: evalbench label serve {args.output}")
    return 0


def _option_error(exc: Any) -> str:
    """The first error of a tasks spec made by ``init``, naming the option that set it."""
    err = exc.errors()[0]
    field = str(err["loc"][0]) if err["loc"] else "options"
    return f"{INIT_OPTIONS.get(field, field)}: {err['msg'].removeprefix('Value error, ')}"


def _cmd_serve(args: argparse.Namespace) -> int:
    from .app import ServeRefused, serve
    from .tasks import LabelTaskError

    try:
        tasks = _load(args.tasks, args.annotator)
        serve(tasks, host=args.host, port=args.port, require_token=args.require_token)
    except (LabelTaskError, ServeRefused, ValueError) as exc:
        return _fail(str(exc))
    except OSError as exc:
        return _fail(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}")
    return 0


def _cmd_status(args: argparse.Namespace) -> int:
    from .exports import label_status
    from .storage import LabelFileError, label_path
    from .tasks import LabelTaskError

    try:
        tasks = _load(args.tasks)
        table = label_status(tasks)
    except (LabelTaskError, LabelFileError) as exc:
        return _fail(str(exc))
    print(f"{tasks.spec.title}: {len(tasks.items)} items, labels in {tasks.labels_dir}")
    if table.empty:
        print("  no labels yet")
    for row in table.itertuples():
        # no label yet: None, or NaT in a column with times (NaT is truthy: "last NaT")
        stamp = row.last_label
        last = "-" if stamp is None or stamp != stamp else stamp.isoformat(timespec="seconds")
        print(f"  {row.annotator:20s} {row.done:>5d} / {row.total:<5d} edits {row.edits:<4d} "
              f"stale {row.stale:<4d} last {last}")  # fmt: skip
    for row in table[table["torn"] > 0].itertuples():
        print(f"  1 torn line skipped in {label_path(tasks.labels_dir, row.annotator)} ({TORN})")
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    from .exports import export_labels
    from .storage import LabelFileError
    from .tasks import LabelTaskError

    try:
        done = export_labels(_load(args.tasks), args.output)
    except (LabelTaskError, LabelFileError, ValueError) as exc:
        return _fail(str(exc))
    except OSError as exc:  # a full disk, a folder that cannot be made: the old export stays
        return _fail(f"{args.output}: not written ({exc.strerror or exc})")
    stale = f"; {done.stale} stale label(s) left out (item changed)" if done.stale else ""
    torn = "".join(f"; 1 torn line skipped in {p} ({TORN})" for p in done.torn)
    print(f"wrote {done.path}: {done.rows} rows from {len(done.annotators)} annotator(s)"
          f"{stale}{torn}")  # fmt: skip
    return 0
