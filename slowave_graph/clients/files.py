"""Planned file edits: a unified diff for --dry-run, and an atomic write with a timestamped backup."""

from __future__ import annotations

import contextlib
import difflib
import os
import shutil
import tempfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path


class SetupError(RuntimeError):
    """A file cannot be edited safely (unparsable, unexpected shape); nothing was written."""


@dataclass(frozen=True)
class FileChange:
    """The new text of one file; ``old`` is None when the file does not exist yet."""

    path: Path
    old: str | None
    new: str
    private: bool = True  # created with mode 0600 (config files can hold a bearer token)

    @property
    def changed(self) -> bool:
        return self.old != self.new

    def diff(self) -> str:
        before = [] if self.old is None else self.old.splitlines(keepends=True)
        after = self.new.splitlines(keepends=True)
        label = str(self.path)
        lines = difflib.unified_diff(
            before, after, fromfile="/dev/null" if self.old is None else label, tofile=label
        )
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError as exc:
        raise SetupError(f"{path} is not UTF-8 text: {exc}") from exc


def backup_path(path: Path, now: datetime | None = None) -> Path:
    stamp = (now or datetime.now()).strftime("%Y%m%d-%H%M%S")
    candidate = path.with_name(f"{path.name}.bak-{stamp}")
    n = 1
    while candidate.exists():  # two runs within one second keep both backups
        candidate = path.with_name(f"{path.name}.bak-{stamp}-{n}")
        n += 1
    return candidate


def apply(change: FileChange) -> Path | None:
    """Write the change atomically; returns the backup of the previous file, if there was one.

    An unchanged file is left alone (no write, no backup): running setup twice changes nothing.
    """
    if not change.changed:
        return None
    path = change.path
    backup: Path | None = None
    if change.old is not None and path.exists():
        backup = backup_path(path)
        shutil.copy2(path, backup)  # keeps the mode: a 0600 config stays private in its backup
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = (path.stat().st_mode & 0o777) if path.exists() else (0o600 if change.private else 0o644)
    # Write next to the target and rename over it, so a crash never leaves half a config file.
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(change.new)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return backup
