"""BrowseComp (Wei et al., 2025, openai/simple-evals) and BrowseComp-ZH (Zhou et al., 2025,
arXiv:2504.19314): browsing agents on the official encrypted sets, decrypted in memory.

``study: browsecomp``, notebook ``browsecomp.ipynb``. The official prompts and grader prompt
(:mod:`.scoring`), graded with a correct parser beside the published grader's ``group(0)``
bug and BrowseComp-ZH's own reading; HLE's calibration error (:mod:`evalbench.calibration`)
and BrowseComp-ZH's fixed bins. What notebooks and users call:

* :func:`run` (a :class:`BrowseCompParams` run) -> :class:`BrowseCompResult`.
* :func:`load_official` (``browsecomp``, ``browsecomp_zh`` or a local file, decrypted) and
  :func:`encrypt` (to write your own questions in the official format).
* :mod:`~.report` (sentences and tables) and :mod:`~.figures` (figures) of a result.

The offline browse suite on evalbench's own web is a study of its own:
:mod:`evalbench.browse_suite`.
"""

from .data import encrypt, load_official
from .records import BrowseCompParams, BrowseCompResult
from .study import run

__all__ = [
    "BrowseCompParams",
    "BrowseCompResult",
    "encrypt",
    "load_official",
    "run",
]
