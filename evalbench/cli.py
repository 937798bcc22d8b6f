"""The ``evalbench`` command line (its help texts are :data:`OVERVIEW` and :data:`EXAMPLES`).

Exit status: 0 when every study asked for is ok (or skipped for missing public data),
1 when one failed, was degraded (too many failed calls), measured nothing (``no_result``:
no item scored, e.g. every call failed or every judge output was unparsed) or its run folder
was busy, 2 for a usage, params, missing-secret, missing-local-model or unwritable-outputs
error (one line on stderr), 130 when
interrupted (Ctrl-C or SIGTERM: the requests in flight are recorded; rerun to resume).
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import signal
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from evalbench.params import ParamsError, StudyParams, discover_params
from evalbench.records import write_failure
from evalbench.settings import get_settings


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``evalbench`` command."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = _parser(argv)
    args = parser.parse_args(argv)
    from evalbench.executors import ExecutorError
    from evalbench.models.local import LocalModelUnavailable
    from evalbench.publish import OutputsUnwritable
    from evalbench.settings import MissingSecret, UnusableSecret

    try:
        return int(args.handler(args))
    except (ParamsError, MissingSecret, UnusableSecret, OutputsUnwritable, ExecutorError,
            LocalModelUnavailable) as exc:  # fmt: skip
        print(f"evalbench: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("evalbench: interrupted; rerun the same command to resume", file=sys.stderr)
        return 130
    except OSError as exc:
        if failed := write_failure(exc):  # a full or read-only disk, anywhere
            print(f"evalbench: {failed}", file=sys.stderr)
            return 2
        if exc.errno != errno.ENAMETOOLONG:  # a path no file can have: the user's input
            raise
        name = str(exc.filename or "")
        print(f"evalbench: {name[:80]}{'…' if len(name) > 80 else ''}: file name too long",
              file=sys.stderr)  # fmt: skip
        return 2


OVERVIEW = """\
Evaluate LLM agents and judges: run studies described by params files, render their reports,
compare runs, and alert on regressions.

commands:
  run PARAMS            run one study and render its report
  report [PARAMS ...]   run every study in params/ (or those named) and build outputs/index.html
  publish NOTEBOOK|RUN  render the run a notebook made in JupyterLab, as `run` would
  compare RUN RUN ...   paired tests of each run against the first; the regression gate; pin
  history STUDY         every run of a study, from its manifests
  watch PARAMS          one scheduled run (cron or CI): run, check the alert rules, exit 1 on one
  label ACTION          collect human labels in the browser (init, serve, status, export)
  fetch NAME ...        download (or verify) pinned public data files (--all: every one)
  sources [PREFIX]      list the registered public data files
  cache [stats|clear]   the response cache: entries per system, or clear it

Run `evalbench COMMAND --help` for a command's options, defaults and an example.
"""

EPILOG = """\
examples:
  evalbench report                                   every study; then open outputs/index.html
  evalbench run params/gaia_demo.yaml -p seed=7      one study, one field changed
  evalbench compare gaia_demo/RUN_A gaia_demo/RUN_B  is B better than A, where, how sure?

exit status: 0 ok (skipped studies included), 1 a study failed or degraded, an alert fired
with --fail-on-alert, or the gate found a regression; 2 bad input (one line on stderr,
nothing run); 130 interrupted (rerun the same command to resume).
"""

RUN_IS = """\
a RUN can be:
  outputs/gaia_demo/4a993754949d    a run folder
  gaia_demo/4a993754949d            <study>/<run id> under the outputs folder
  gaia_demo                         a study name: its latest published run
  params/gaia_demo.yaml             a params file: the run of its current content, else the
                                    study's latest published run
  logs/x.eval, logs/x.json          an inspect_ai log (needs the importers extra)
  results_*.json, samples_*.jsonl   lm-evaluation-harness output (or their folder)
"""

EXAMPLES = {
    "run": """\
examples:
  evalbench run params/gaia_demo.yaml
  evalbench run params/gaia_demo.yaml -p seed=7 -p systems.0.sim.accuracy=0.9
  evalbench run params/my_study.yaml -p cache=replay      re-render from the response cache
""",
    "report": """\
examples:
  evalbench report                                  every params/*.yaml, then outputs/index.html
  evalbench report params/a.yaml params/b.yaml      these two, then the index
  evalbench report --audience summary --open        print (and open) each study's summary page
""",
    "publish": """\
examples:
  evalbench publish notebooks/gaia_levels.ipynb      the run its parameters cell names
  evalbench publish outputs/gaia_demo/4a993754949d   the run folder a notebook kernel wrote
publish reads the notebook's file: save it in JupyterLab first (or give the run folder,
which the notebook prints when it opens its run).
A notebook run in JupyterLab writes records but no report, and never writes a published run
(it works in outputs/lab/<study>/<run id>/ instead). publish renders the run from a clean
execution of the study's notebook, exactly as `evalbench run PARAMS -p ...` does (the same
run folder, report.html, summary.html, the index), resuming the notebook's records: no
answered call is asked again. A run that is up to date is `current` (nothing rendered).
""",
    "fetch": """\
examples:
  evalbench fetch --all                             every registered file (mirror, cache, download)
  evalbench fetch bfcl/question/simple_python       one file; names: `evalbench sources`
offline: point EVALBENCH_DATA_MIRROR at a local mirror (<host>/<path> of each URL).
""",
    "sources": """\
examples:
  evalbench sources          name, size, whether it is cached, license
  evalbench sources bfcl/    only names starting with bfcl/
""",
    "cache": """\
examples:
  evalbench cache                       entries per system, and the data cache's size
  evalbench cache clear --system my-m   forget one system's cached answers
""",
    "watch": """\
examples:
  evalbench watch params/my_study.yaml --tier quick      daily (cron): a 10% sample
  evalbench watch params/my_study.yaml --tier standard   weekly: 30%
exit status: 0 nothing fired (rules that need a baseline wait for one on a first run);
1 an alert fired, a notification failed, a rule could not be checked (an unreadable
baseline, a run with no calls) or the run was not ok; 2 bad input (e.g. no alerts: block).
""",
    "label": """\
examples:
  evalbench label init rubric items.jsonl -o labels/set.yaml --annotator alice
  evalbench label serve labels/set.yaml              http://127.0.0.1:8765/?annotator=alice
  evalbench label export labels/set.yaml data/golden.jsonl
""",
    "compare": RUN_IS
    + """
examples:
  evalbench compare gaia_demo/RUN_A gaia_demo/RUN_B             B vs A, with an HTML report
  evalbench compare --pin gaia_demo/RUN_A                       pin A as the study's baseline
  evalbench compare --fail-on-regression --no-report gaia_demo  the gate (CI) vs the pinned one
exit status: 0 compared (no regression); 1 the gate found a regression; 2 bad input or
nothing compared; 3 the report did not render.
""",
    "history": """\
examples:
  evalbench history params/gaia_demo.yaml    every run of the study: time, status, headlines
  evalbench history gaia_demo
""",
}
"""Each subcommand's examples (and notes), printed after its options by ``--help``."""


def _jobs(text: str) -> int:
    """``-j``: a whole number of studies at once, 1 or more (0 and -1 ran one at a time)."""
    jobs = int(text)
    if jobs < 1:
        raise argparse.ArgumentTypeError(f"{jobs}: studies at once must be 1 or more")
    return jobs


class _Parser(argparse.ArgumentParser):
    """Every command's parser: a bad option is one line on stderr naming the help to read
    (argparse printed its usage block, six lines, above it), exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} ({self.prog} --help)\n")


class _Help(argparse.RawDescriptionHelpFormatter):
    """Help that keeps the examples' layout and states each option's default."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if "default" in text or default in (None, False, [], argparse.SUPPRESS):
            return text
        return f"{text} (default: %(default)s)"


def _teach(parser: argparse.ArgumentParser) -> None:
    """Give every subcommand's help its examples and the defaults of its options."""
    for action in parser._subparsers._group_actions if parser._subparsers else ():
        for name, sub in getattr(action, "choices", {}).items():
            sub.formatter_class = _Help
            sub.epilog = EXAMPLES.get(name, sub.epilog)
            _teach(sub)  # label's actions


_LAZY = ("label", "compare", "history")  # their parsers import heavy packages


def _parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The command line; ``label``/``compare``/``history`` in full only when ``argv`` asks
    for one of them or for the overall help (an unchanged ``make report`` stays fast)."""
    parser = _Parser(prog="evalbench", description=OVERVIEW, epilog=EPILOG, formatter_class=_Help)
    parser.add_argument("--version", action="version", version=f"evalbench {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                help=argparse.SUPPRESS)  # fmt: skip
    parser.usage = "evalbench [-h] [--version] COMMAND ..."  # after: subcommands' prog is short

    run = sub.add_parser("run", help="run one study and render its report")
    run.add_argument("params", type=Path, help="params YAML file")
    run.add_argument("-p", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                     help="override a params field (dotted keys; repeatable)")  # fmt: skip
    run.add_argument("--no-wait", action="store_true",
                     help="batch mode: submit the batches, save their ids and exit; "
                          "run again to collect the results")  # fmt: skip
    run.add_argument("--force", action="store_true",
                     help="render even when the published run is up to date")  # fmt: skip
    run.add_argument("--fail-on-alert", action="store_true",
                     help="exit 1 when an alert rule fired or a notification failed")  # fmt: skip
    _executor_arguments(run)
    run.set_defaults(handler=_cmd_run)

    publish = sub.add_parser("publish", help="render a notebook's run (JupyterLab) as `run` would")
    publish.add_argument("target", type=Path, metavar="NOTEBOOK|RUN",
                         help="a study's notebook (its parameters cell: params_file, overrides) "
                              "or a run folder (its manifest)")  # fmt: skip
    publish.add_argument("--force", action="store_true",
                         help="render even when the published run is up to date")  # fmt: skip
    _executor_arguments(publish)
    publish.set_defaults(handler=_cmd_publish)

    report = sub.add_parser("report", help="run studies (default: every params/*.yaml) + index")
    report.add_argument("params", type=Path, nargs="*", help="params files (default: all)")
    report.add_argument("-j", "--jobs", type=_jobs, default=min(2, os.cpu_count() or 1),
                        help="studies rendered at once (default: 2, one kernel each)")  # fmt: skip
    report.add_argument("--force", action="store_true",
                        help="render every study, even those up to date")  # fmt: skip
    report.add_argument("--audience", choices=["full", "summary"], default="full",
                        help="summary: print each study's one-page summary.html")  # fmt: skip
    report.add_argument("--open", action="store_true",
                        help="open the pages asked for (--audience) in a browser")  # fmt: skip
    report.add_argument("--fail-on-alert", action="store_true",
                        help="exit 1 when an alert fired or a notification failed")  # fmt: skip
    _executor_arguments(report)
    report.set_defaults(handler=_cmd_report)

    fetch = sub.add_parser("fetch", help="download (or verify) pinned data files")
    fetch.add_argument("names", nargs="*", help="source names (see `evalbench sources`)")
    fetch.add_argument("--all", action="store_true", help="every registered source")
    fetch.set_defaults(handler=_cmd_fetch)

    src = sub.add_parser("sources", help="list registered data files")
    src.add_argument("prefix", nargs="?", default="", help="only names starting with this")
    src.set_defaults(handler=_cmd_sources)

    cache = sub.add_parser("cache", help="response cache statistics or clearing")
    cache.add_argument("action", nargs="?", choices=["stats", "clear"], default="stats",
                       help="stats: entries per system; clear: delete them")  # fmt: skip
    cache.add_argument("--system", help="clear only this system's entries")
    cache.set_defaults(handler=_cmd_cache)

    from evalbench.alerts.cli import add_watch_parser  # light: argparse only

    add_watch_parser(sub, _cmd_watch)
    _executor_arguments(sub.choices["watch"])

    command = argv[0] if argv else None
    if command is not None and not command.startswith("-") and command not in _LAZY:
        for name in _LAZY:  # named in usage messages; never parsed
            sub.add_parser(name)
        _teach(parser)
        return parser

    from evalbench.labels.cli import add_label_parser  # label init|serve|status|export

    add_label_parser(sub)

    from evalbench.history.cli import add_parsers  # compare | history

    add_parsers(sub)
    _teach(parser)
    return parser


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("evalbench")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown (not installed)"


def _executor_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--executor", choices=["local", "ray", "auto"],
                        help="where agent tasks and sweep cells run (default: "
                             "$EVALBENCH_EXECUTOR or local; not part of the params)")  # fmt: skip
    parser.add_argument("--ray-address", metavar="ADDR",
                        help="the Ray cluster (default: $EVALBENCH_RAY_ADDRESS, "
                             "else Ray's own RAY_ADDRESS)")  # fmt: skip


def _use_executor(args: argparse.Namespace) -> None:
    """``--executor`` / ``--ray-address`` into the environment the study kernels inherit,
    then checked (a bad value, Ray missing or a cluster that does not answer within the
    connect timeout: one line, exit 2, nothing run)."""
    from evalbench import executors
    from evalbench.executors.reach import reach
    from evalbench.settings import ENV_EXECUTOR, ENV_RAY_ADDRESS

    if args.ray_address:  # checked even when unused: a typo is said at once
        executors.check_address(args.ray_address, "--ray-address")
    if args.executor:
        os.environ[ENV_EXECUTOR] = args.executor
    if args.ray_address:
        os.environ[ENV_RAY_ADDRESS] = args.ray_address
    requested = executors.choice()
    executors.check(requested)
    reach(requested)


def _cmd_run(args: argparse.Namespace) -> int:
    from evalbench.alerts.cli import retry_lines, undelivered
    from evalbench.publish import (
        PUBLISHED,
        build_index,
        run_study,
        skip_hints,
        summary_lines,
        summary_page,
    )
    from evalbench.studies import load_params

    refuse_secret_overrides(args.overrides)
    _use_executor(args)
    params = load_params(args.params, args.overrides)
    check_secrets(params)
    if args.no_wait:
        from evalbench.models.batch import NO_WAIT_ENV

        os.environ[NO_WAIT_ENV] = "1"  # read by batch mode in the study's kernel
    retried, retry_code = retry_lines(args.params, params)  # earlier undelivered alerts
    for line in retried:
        print(line, flush=True)
    result = run_study(args.params, args.overrides, progress=True, force=args.force)
    build_index()
    if args.no_wait and result.reason.startswith("BatchPending"):
        print(f"evalbench: {result.reason.removeprefix('BatchPending: ')}")
        return retry_code
    print("\n".join(summary_lines([result])))
    if result.status == "skipped":  # one study: its whole reason, then what lifts it
        print(f"why: {result.reason}")
        print("".join(f"hint: {hint}\n" for hint in skip_hints([result])), end="")
    published = result.run_dir if result.status in PUBLISHED else None
    shown = result.run_dir if result.status == "current" else published
    if shown is not None:
        print(f"report: {shown / 'report.html'}")
        summary = summary_page(shown)  # written if a run stopped before it had one
        if summary is not None:
            print(f"summary: {summary}")
    code = exit_status([result.status]) or retry_code or undelivered(published)
    if args.fail_on_alert:
        from evalbench.alerts.cli import fail_on_alert

        code = code or fail_on_alert([result.run_dir])
    return code


def _cmd_publish(args: argparse.Namespace) -> int:
    """``evalbench run`` of the params file and overrides a notebook or run folder names."""
    import shlex

    from evalbench.lab import NotPublishable, publish_target

    try:
        target = publish_target(args.target)
    except NotPublishable as exc:
        print(f"evalbench: {exc}", file=sys.stderr)
        return 2
    refuse_secret_overrides(target.overrides)  # before the command is printed
    shown = [str(target.params_file), *(f"-p {shlex.quote(_shown(o))}" for o in target.overrides)]
    print(f"publishing: evalbench run {' '.join(shown)}", flush=True)
    run = argparse.Namespace(params=target.params_file, overrides=target.overrides,
                             no_wait=False, force=args.force, fail_on_alert=False,
                             executor=args.executor, ray_address=args.ray_address)  # fmt: skip
    return _cmd_run(run)


def _shown(override: str) -> str:
    """An override as printed: a URL's credentials, query and fragment left out."""
    from evalbench.executors.base import redact_address

    key, sep, value = override.partition("=")
    return f"{key}{sep}{redact_address(value)}" if "://" in value else override


def _cmd_watch(args: argparse.Namespace) -> int:
    from evalbench.alerts.cli import cmd_watch

    refuse_secret_overrides(args.overrides)
    _use_executor(args)
    return cmd_watch(args, check_secrets, exit_status)


def refuse_secret_overrides(overrides: Sequence[str]) -> None:
    """Before anything runs: no ``-p`` override may hold a secret that would be kept with
    the run (:func:`evalbench.alerts.spec.override_problem`: a literal webhook URL), read
    as ``-p`` reads it (a YAML value; escapes such as ``"web\\x68ook"`` resolved).

    Raises:
        ParamsError: one line naming the override, never its value.
    """
    from evalbench.alerts.spec import override_problem
    from evalbench.params import parse_yaml

    for override in overrides:
        key, _, raw = str(override).partition("=")
        try:
            value = parse_yaml(raw, "-p")
        except ParamsError:  # not YAML: a plain string (load_params says what else is wrong)
            value = raw
        why = override_problem(key, value)
        if why:
            raise ParamsError(why)


def exit_status(statuses: Sequence[str]) -> int:
    """130 if any study was interrupted, 1 if any was not ok (skipped counts as ok), else 0."""
    if "interrupted" in statuses:
        return 130
    return 1 if any(s not in ("ok", "skipped", "current", "pending") for s in statuses) else 0


def check_secrets(params: StudyParams) -> None:
    """Before an explicit run: the key (and base-URL variable) of every system or judge whose
    requests evalbench sends to a remote endpoint is set (a user's own agent, a keyless or
    loopback endpoint need none), and every local model's engine and file are here.

    Raises:
        MissingSecret: naming the variable and the system (replay needs no key).
        LocalModelUnavailable: naming the system and what to install.
    """
    from evalbench.models import local
    from evalbench.models.providers import api_key

    if params.cache == "replay":
        return
    for spec in params.model_specs():
        if spec.local is not None:
            local.check(spec)
        elif spec.calls_endpoint:
            api_key(spec)  # resolves the base URL (a variable may name it) on the way


def _cmd_report(args: argparse.Namespace) -> int:
    from evalbench.alerts.cli import undelivered
    from evalbench.publish import (
        PUBLISHED,
        build_index,
        run_many,
        skip_hints,
        summary_lines,
        timing_lines,
    )

    _use_executor(args)
    files = args.params or discover_params(get_settings().project_root / "params")
    retry_code = _retry_alerts(files)  # earlier undelivered notifications, as `run` does
    started = time.perf_counter()
    results, interrupted = [], False
    try:
        with _sigterm_as_interrupt():
            for result in run_many(files, jobs=args.jobs, force=args.force):
                results.append(result)
                print(summary_lines([result])[0], flush=True)
    except KeyboardInterrupt:
        interrupted = True  # the index is still rebuilt from what finished
    wall = time.perf_counter() - started
    outputs = get_settings().outputs_dir
    if all(r.status == "current" for r in results) and (outputs / "index.html").exists():
        index = outputs / "index.html"  # nothing ran: the index is as it was
    else:
        index = build_index()
    timing = timing_lines(results)
    if timing:
        print("\n" + "\n".join(timing))
    counts: Counter[str] = Counter(r.status for r in results)
    tally = ", ".join(f"{counts[s]} {s}" for s in ("ok", "skipped", "failed"))
    extra = ("current", "pending", "degraded", "no_result", "busy", "interrupted")
    tally += "".join(f", {counts[s]} {s}" for s in extra if counts[s])
    if interrupted:  # how far it got, and what resumes the rest
        print(f"\ninterrupted after {len(results)} of {len(files)} studies in {wall:.1f} s: "
              f"{tally}; rerun the same command to resume")  # fmt: skip
    else:
        print(f"\n{len(results)} studies in {wall:.1f} s: {tally}")
    print(f"index: {index}")
    for hint in skip_hints(results):
        print(f"hint: {hint}")
    if args.audience == "summary" or args.open:
        from evalbench.summary import audience_pages

        for line in audience_pages([r.run_dir for r in results], args.audience, args.open):
            print(line)
    code = 130 if interrupted else exit_status([r.status for r in results])
    published = [r.run_dir if r.status in PUBLISHED else None for r in results]
    code = code or retry_code or max(map(undelivered, filter(None, published)), default=0)
    if args.fail_on_alert and not code:
        from evalbench.alerts.cli import fail_on_alert

        code = fail_on_alert([r.run_dir for r in results])
    return code


def _retry_alerts(files: list[Path]) -> int:
    """Before ``make report``: deliver what earlier alert checks of these studies could not
    (each study's lines printed); 1 when one still failed, else 0. A params file that
    cannot be read is left to the report, which says why."""
    from evalbench.alerts.cli import retry_lines
    from evalbench.alerts.pending import has_undelivered
    from evalbench.runs import study_dir_for
    from evalbench.studies import load_params

    code = 0
    for path in files:
        if not has_undelivered(study_dir_for(path)):
            continue  # nothing to deliver (its manifests say so): its params are not read
        try:
            params = load_params(path)
        except (ParamsError, OSError):
            continue
        lines, failed = retry_lines(path, params)
        for line in lines:
            print(line, flush=True)
        code = code or failed
    return code


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Any:
    """``make report`` stopped by SIGTERM: as Ctrl-C (studies in-process stop cleanly)."""

    def handle(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, handle)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _cmd_fetch(args: argparse.Namespace) -> int:
    from evalbench import sources

    names = sources.names() if args.all else args.names
    if not names:
        print("evalbench fetch: give source names or --all", file=sys.stderr)
        return 2
    failures, unknown = 0, 0
    for name in names:
        try:
            path = sources.fetch(name)
            print(f"ok       {name}  {path}")
        except (sources.UnknownSource, sources.DataUnavailable, sources.ChecksumMismatch) as exc:
            failures += 1
            unknown += isinstance(exc, sources.UnknownSource)
            print(f"error    {name}  {exc}", file=sys.stderr)
    return 2 if unknown else 1 if failures else 0  # a name no source has: bad input


def _cmd_sources(args: argparse.Namespace) -> int:
    from evalbench import sources

    try:
        for name in sources.names(args.prefix):
            src = sources.get(name)
            here = sources.availability(src)
            print(f"{name:70s} {src.bytes:>10,d}  {here:10s}  {src.license}")
        sys.stdout.flush()
    except BrokenPipeError:  # `evalbench sources | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


def _printable(text: str) -> str:
    """``text`` with control characters as ``\\xNN`` escapes: a name from a params file (or a
    damaged cache) printed raw could recolour the terminal or set its title."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)


def _cmd_cache(args: argparse.Namespace) -> int:
    from evalbench.models import ResponseCache
    from evalbench.models.cache import corrupt_copies

    path = get_settings().cache_dir / "responses.sqlite"
    cache = ResponseCache(path)  # a corrupt file is moved aside here, with a message
    if args.action == "clear":
        print(f"deleted {cache.clear(args.system)} cached responses")
        if args.system is None:
            for copy in corrupt_copies(path):
                if copy.is_dir() and not copy.is_symlink():  # an older release moved one
                    print(f"left {copy}: a folder")
                    continue
                copy.unlink()
                print(f"deleted the corrupt copy {copy}")
        return 0
    stats = cache.stats()
    print(f"response cache {stats['path']} ({stats['bytes']:,d} bytes)")
    for system, count in stats["entries"].items():
        print(f"  {_printable(system):40s} {count:>8,d}")
    if copies := corrupt_copies(path):
        size = sum(p.stat().st_size for p in copies if p.is_file())
        print(f"{len(copies)} corrupt {'copy' if len(copies) == 1 else 'copies'} moved aside "
              f"({size:,d} bytes; `evalbench cache clear` deletes them)")  # fmt: skip
    data = get_settings().cache_dir / "data"
    files = [p for p in data.rglob("*") if p.is_file()] if data.exists() else []
    print(f"data cache {data}: {len(files)} files, {sum(p.stat().st_size for p in files):,d} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
