"""Work functions the executor tests send to worker processes (importable by name there: the
tests put this folder on ``sys.path``, which a spawned worker inherits)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Any


def task(job: tuple[str, Any]) -> int:
    """``ok``: the worker's pid; ``raise``: a ValueError; ``die``: the process exits at once;
    ``hang``: starts a ``sleep`` child (its pid written to the file ``arg``), then waits."""
    kind, arg = job
    if kind == "raise":
        raise ValueError(f"bad input {arg}")
    if kind == "die":
        os._exit(3)
    if kind == "hang":
        child = subprocess.Popen(["sleep", "60"])
        Path(arg + ".tmp").write_text(str(child.pid))
        os.replace(arg + ".tmp", arg)  # the test reads it as soon as it exists: never empty
        time.sleep(60)
    return os.getpid()
