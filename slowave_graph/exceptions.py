"""The root of every exception slowave_graph defines.

Each one also keeps the builtin base its callers may catch (``ValueError``, ``LookupError``, …);
deriving from ``SlowaveError`` as well tells a refusal the package raised on purpose, with a
message written for a person, from a bug. The command line prints such a refusal as one line
instead of a traceback (``cli.main``). This module is the bottom layer: it imports nothing from
the package, so any module may use it.
"""

from __future__ import annotations


class SlowaveError(Exception):
    """A failure slowave_graph raises on purpose, its message written for the person who ran it."""
