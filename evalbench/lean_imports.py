"""Optional imports evalbench's own processes skip: they cost seconds of CPU and serve
nothing evalbench does.

``jsonschema`` (imported by nbformat, so by papermill and nbconvert, and by Ray at its own
import) builds its optional IRI format checker from ``rfc3987_syntax`` when that is installed
(jupyter-events installs it): ~35 Lark parsers compiled at import, 0.9–1.1 s of CPU in every
process that renders a notebook or connects to Ray, for a format no notebook schema and no Ray
schema uses (python-jsonschema/jsonschema#1428). A ``None`` entry in ``sys.modules`` makes that
import fail as if the package were absent, which jsonschema expects: it then leaves the
``iri`` formats unchecked. Only evalbench's rendering and Ray-connecting code calls
:func:`skip`; a user's process that imports evalbench keeps its jsonschema as it was.
"""

from __future__ import annotations

import sys

SKIPPED = ("rfc3987_syntax",)


def skip() -> None:
    """Make the imports of :data:`SKIPPED` fail (no effect on one already imported)."""
    for name in SKIPPED:
        sys.modules.setdefault(name, None)  # type: ignore[arg-type]
