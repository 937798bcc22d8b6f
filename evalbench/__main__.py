"""The ``evalbench`` command (also ``python -m evalbench``): Ctrl-C while the command's
modules load (pandas, pydantic, papermill: about a second) is the one line it is later, with
exit 130, not a traceback through an import."""

from __future__ import annotations

import sys


def main() -> int:
    """Load the command line and run it (:func:`evalbench.cli.main`)."""
    try:
        from evalbench.cli import main as run
    except KeyboardInterrupt:
        print("evalbench: interrupted", file=sys.stderr)
        return 130
    return run()


if __name__ == "__main__":
    sys.exit(main())
