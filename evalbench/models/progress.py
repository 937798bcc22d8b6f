"""What every way of asking a model shares: the interrupt flag and the progress bar.

The in-process client, batch mode and the agent runner read :data:`STOP` and draw with
:func:`progress_bar`; they live here, below all three, so none imports another for them.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from typing import Any

STOP = threading.Event()
"""Set on an interrupt (Ctrl-C, SIGTERM): no new request starts and no failed one is
retried; requests already in flight finish and are recorded
(:func:`evalbench.models.client.run_sync`)."""


STOP_POLL_S = 0.1
"""How often a wait before a request leaves looks for an interrupt (:func:`pause`)."""


class NotSent(Exception):
    """An interrupt (:data:`STOP`) came while a request waited to leave: it was never sent."""


async def pause(seconds: float) -> None:
    """``asyncio.sleep(seconds)`` that an interrupt ends: a wait before a request leaves (a
    rate limit, a retry's backoff or ``Retry-After``, up to minutes) must not hold Ctrl-C up,
    nor send the request once it is over.

    Raises:
        NotSent: :data:`STOP` is set (checked every :data:`STOP_POLL_S`).
    """
    deadline = time.monotonic() + seconds
    while not STOP.is_set():
        left = deadline - time.monotonic()
        if left <= 0:
            return
        await asyncio.sleep(min(left, STOP_POLL_S))
    raise NotSent


def progress_bar() -> Any:
    """tqdm.auto (a widget in JupyterLab), or plain text when ``EVALBENCH_PROGRESS=text``
    (``evalbench run`` relays a study kernel's text bars to the terminal)."""
    if os.environ.get("EVALBENCH_PROGRESS") == "text":
        from tqdm import tqdm as text_bar

        return text_bar
    from tqdm.auto import tqdm

    return tqdm
