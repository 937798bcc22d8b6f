"""Tools of evalbench's reference agent: read_file, python (sandboxed), search, open_page,
the web tools, final_answer.

The agent loop needs only :func:`get_tools`, :func:`call_tool`, :class:`ToolContext` and
:func:`prepare_workdir`; the modules hold the rest (``sandbox``/``python_exec`` for the
python sandbox, ``documents`` for :class:`DocumentIndex`, ``search`` for its tools).
"""

from .base import Tool, ToolContext, ToolError, call_tool, prepare_workdir
from .documents import Document, DocumentIndex, Hit
from .python_exec import run_python
from .registry import TOOLS, get_tools
from .sandbox import SandboxLimits, SandboxResult

__all__ = [
    "TOOLS",
    "Document",
    "DocumentIndex",
    "Hit",
    "SandboxLimits",
    "SandboxResult",
    "Tool",
    "ToolContext",
    "ToolError",
    "call_tool",
    "get_tools",
    "prepare_workdir",
    "run_python",
]
