"""Warm notebook kernels: ``make report`` starts one kernel per worker process, pays the
imports once, and reuses it for every study that worker renders.

Starting a kernel and importing pandas, matplotlib, seaborn and evalbench costs seconds per
study, more than many studies' own work. Before each study :func:`prepare` resets the
kernel to a fresh state: an empty namespace (``%reset -f``), no open figures, matplotlib's
default settings, evalbench's record of data files read cleared, and the parent's current
environment (which carries the run folder's lock, the progress mode and any secrets, exactly
as a kernel started now would inherit them). Modules stay imported; that is the point. A
kernel that died (a crash, an interrupt) is replaced on next use.
"""

from __future__ import annotations

import atexit
import functools
import json
import os
import time
from pathlib import Path
from typing import Any

from evalbench import processes

WARM_IMPORTS = (
    "import numpy, pandas, scipy.stats, matplotlib, matplotlib.pyplot, seaborn\n"
    "import evalbench.display, evalbench.plots, evalbench.runs, evalbench.studies\n"
    "import evalbench.models.client; evalbench.models.client.freeze_for_good()\n"
)
# The kernel's own log is not the study's. No history file: prepare() hands the environment
# (API keys included) to the kernel as code, which IPython would keep in ~/.ipython.
KERNEL_ARGS = ["--IPKernelApp.log_level=CRITICAL", "--HistoryManager.hist_file=:memory:"]
_KEEP_PREFIXES = ("JPY_",)  # the kernel's own variables (its parent's pid for the poller)
_STATE: dict[str, Any] = {}


class KernelError(RuntimeError):
    """The warm kernel could not be started or reset."""


def warm_kernel(cwd: Path) -> tuple[Any, float]:
    """This process's warm kernel manager, started (and warmed) on first use.

    Returns:
        The kernel manager and the seconds spent starting it now (0 when it was warm).
    """
    km = _STATE.get("km")
    if km is not None and km.is_alive() and _STATE.get("cwd") == cwd:
        return km, 0.0
    shutdown()
    started = time.perf_counter()
    processes.lifeline()  # the kernel (and all it starts) dies with this process
    km = manager_class()(kernel_name="python3")
    km.start_kernel(cwd=str(cwd), extra_arguments=KERNEL_ARGS)
    _STATE.update(km=km, cwd=cwd)
    _run(km, WARM_IMPORTS)
    return km, time.perf_counter() - started


@functools.cache
def manager_class() -> type:
    """jupyter_client's ``KernelManager`` whose connection file this process's watchdog
    removes if this process ends before the kernel manager does (``kill -9``); papermill
    takes it as ``kernel_manager_class``."""
    from jupyter_client.blocking import BlockingKernelClient
    from jupyter_client.manager import KernelManager
    from traitlets import DottedObjectName

    class TidyKernelManager(KernelManager):
        # nbclient's client is an async one, as with nbclient's own AsyncKernelManager: it
        # awaits the kernel's messages (get_msg with no timeout) beside a check, every
        # second, that the kernel is alive. A blocking client's wait blocked that check too:
        # a kernel that died mid-cell (kill -9, the OOM killer, a Ray driver's fatal exit)
        # left `evalbench run` waiting for ever, its kernel an unreaped zombie.
        client_class = DottedObjectName("jupyter_client.asynchronous.AsyncKernelClient")

        def blocking_client(self) -> BlockingKernelClient:
            """A blocking client of this kernel, for evalbench's own calls (:func:`_run`)."""
            kept, self.client_factory = self.client_factory, BlockingKernelClient
            try:
                return self.client()
            finally:
                self.client_factory = kept

        def client(self, **kwargs: Any) -> Any:
            """A client of this kernel, kept until :meth:`close_clients`: papermill leaves
            open the client it opens on a kernel it was handed (the warm one)."""
            made = super().client(**kwargs)
            self.__dict__.setdefault("_opened", []).append(made)
            return made

        def close_clients(self) -> None:
            """Stop every client opened so far: its channels (the heartbeat's thread) and
            its zmq context (two threads, a dozen descriptors), each render's otherwise."""
            opened = self.__dict__.get("_opened", [])
            while opened:
                opened.pop().stop_channels()

        def write_connection_file(self, **kwargs: Any) -> None:
            super().write_connection_file(**kwargs)
            processes.remove_at_end(self.connection_file)

        def cleanup_connection_file(self) -> None:
            written = self.connection_file if self._connection_file_written else None
            super().cleanup_connection_file()
            if written:
                processes.discard(written)  # removed already: the watchdog forgets it

    return TidyKernelManager


def prepare(km: Any) -> None:
    """Reset the kernel for the next study (see the module docstring).

    Raises:
        KernelError: the reset failed (the kernel is shut down; the next use starts anew).
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith(_KEEP_PREFIXES)}
    code = "\n".join([
        "%reset -f",
        "__spec__ = None",  # %reset deletes it, and multiprocessing's spawn reads it
        "import os as _os, json as _json, matplotlib as _mpl, matplotlib.pyplot as _plt",
        f"_keep = {{k: v for k, v in _os.environ.items() if k.startswith({_KEEP_PREFIXES!r})}}",
        f"_os.environ.clear(); _os.environ.update(_json.loads({json.dumps(env)!r}))",
        "_os.environ.update(_keep)",
        "_plt.close('all'); _mpl.rcdefaults()",
        "import evalbench.sources as _src; _src.forget_reads()",
        # what survived the reset (modules a study imported, their caches) joins the heap
        # frozen after the imports: the next %reset's full collections (0.1 s each over the
        # whole heap) walk only what the next study makes
        "import evalbench.models.client as _client; _client.freeze_for_good()",
        "del _os, _json, _mpl, _plt, _keep, _src, _client",
    ])  # fmt: skip
    try:
        _run(km, code)
    except KernelError:
        shutdown()
        raise


def _run(km: Any, code: str) -> None:
    # a fresh client each time: one kept beside papermill's own was seen to stall for 120 s
    client = km.blocking_client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=120)
        reply = client.execute_interactive(code, timeout=300, output_hook=lambda msg: None)
    except RuntimeError as exc:
        raise KernelError(f"kernel did not answer: {exc}") from exc
    finally:
        client.stop_channels()
    if reply["content"]["status"] != "ok":
        content = reply["content"]
        raise KernelError(f"kernel reset failed: {content.get('ename')}: {content.get('evalue')}")


@atexit.register
def shutdown() -> None:
    """Stop this process's warm kernel, if any."""
    km = _STATE.pop("km", None)
    _STATE.pop("cwd", None)
    if km is not None:
        km.close_clients()
        if km.has_kernel:
            km.shutdown_kernel(now=True)
