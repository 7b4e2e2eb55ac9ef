"""Progress bars on a terminal (stderr), silence otherwise (pipes, CI, tests)."""

from __future__ import annotations

import sys
from types import TracebackType
from typing import Any, Protocol


class Progress(Protocol):
    def update(self, n: int = 1) -> Any: ...

    def close(self) -> None: ...


class _Silent:
    def update(self, n: int = 1) -> None:
        return None

    def close(self) -> None:
        return None


class bar:  # used like a function: ``with bar(total, "export") as p: p.update(n)``
    def __init__(self, total: int | None, desc: str, unit: str = "rows", enabled: bool | None = None) -> None:
        show = sys.stderr.isatty() if enabled is None else enabled
        self._bar: Progress = _Silent()
        if show:
            from tqdm import tqdm  # sentence-transformers' own dependency

            self._bar = tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, dynamic_ncols=True)

    def __enter__(self) -> Progress:
        return self._bar

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._bar.close()
