"""Whether this machine can connect to a Ray cluster, as a study's driver will:
``python _ray_probe.py`` with the address on stdin. Run by
:func:`evalbench.executors.reach.reach`, which gives it a deadline and discards its stderr
(where Ray writes its retries). Standard library and Ray only; never imported by evalbench.

It calls ``ray.init`` with the driver's options, then ``ray.shutdown``, and prints one JSON
line: ``{"ok": true}``, ``{"found": false}`` (``auto``: no cluster runs on this machine) or
``{"error": "<Type>: <first line of the message>"}``.
"""

import json
import logging
import sys


def _one_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0] if lines else ''}".strip().rstrip(":")


def main() -> None:
    """Connect, disconnect, say how it went."""
    address = sys.stdin.read().strip()
    # Ray -> jsonschema -> rfc3987_syntax: ~1 s of CPU for nothing (evalbench.lean_imports)
    sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]
    try:
        import ray

        ray.init(address=address, namespace="evalbench", log_to_driver=False,
                 logging_level=logging.WARNING)  # fmt: skip
        ray.shutdown()
        answer: dict[str, object] = {"ok": True}
    except ConnectionError as exc:
        answer = {"found": False} if address == "auto" else {"error": _one_line(exc)}
    except Exception as exc:  # any failure to connect is the answer, never a traceback
        answer = {"error": _one_line(exc)}
    print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
