"""Label-app test helpers: tasks written to a temp folder, and the app on a free loopback port
in a thread (stopped at the end of the test)."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from evalbench.labels import Tasks, load_tasks
from evalbench.labels.app import Access, bind, create_app, server_config

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


def write_tasks(folder: Path, kind: str, items: list[dict[str, Any]], **spec: Any) -> Tasks:
    """Write ``items.jsonl`` and ``tasks.yaml`` into ``folder`` and load them."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "items.jsonl", "w", encoding="utf-8") as fh:
        for item in items:
            fh.write(json.dumps(item) + "\n")
    body = {"kind": kind, "title": f"test {kind}", "items": "items.jsonl", **spec}
    (folder / "tasks.yaml").write_text(yaml.safe_dump(body), encoding="utf-8")
    return load_tasks(folder / "tasks.yaml")


class Running:
    """A label server running in a thread: its base URL and access rules."""

    def __init__(self, base: str, access: Access):
        self.base, self.access = base, access

    def url(self, **query: str) -> str:
        return self.base + "/?" + "&".join(f"{k}={v}" for k, v in query.items())


@contextlib.contextmanager
def running(tasks: Tasks, *, host: str = "127.0.0.1", **options: Any) -> Iterator[Running]:
    """Serve ``tasks`` on 127.0.0.1 at a free port; ``host`` is the address the app is told
    it is bound to (tokens for anything but loopback), so refusal is testable without
    binding another address."""
    import uvicorn

    config = {k: options.pop(k) for k in ("header_timeout_s",) if k in options}
    app, access = create_app(tasks, host=host, **options)
    sock = bind("127.0.0.1", 0)
    access.port = sock.getsockname()[1]
    server = uvicorn.Server(server_config(app, **config))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.started, "the label server did not start"
    try:
        yield Running(f"http://127.0.0.1:{access.port}", access)
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
        assert not thread.is_alive(), "the label server did not stop"
