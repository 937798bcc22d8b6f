"""What every way of asking a model shares: the interrupt flag and the progress bar.

The in-process client, batch mode and the agent runner read :data:`STOP` and draw with
:func:`progress_bar`; they live here, below all three, so none imports another for them.
"""

from __future__ import annotations

import os
import threading
from typing import Any

STOP = threading.Event()
"""Set on an interrupt (Ctrl-C, SIGTERM): no new request starts and no failed one is
retried; requests already in flight finish and are recorded
(:func:`evalbench.models.client.run_sync`)."""


def progress_bar() -> Any:
    """tqdm.auto (a widget in JupyterLab), or plain text when ``EVALBENCH_PROGRESS=text``
    (``evalbench run`` relays a study kernel's text bars to the terminal)."""
    if os.environ.get("EVALBENCH_PROGRESS") == "text":
        from tqdm import tqdm as text_bar

        return text_bar
    from tqdm.auto import tqdm

    return tqdm
