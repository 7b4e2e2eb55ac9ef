"""Planned file edits: a unified diff for --dry-run, and an atomic write with a timestamped backup."""

from __future__ import annotations

import contextlib
import difflib
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from slowave_graph.exceptions import SlowaveError


class SetupError(SlowaveError, RuntimeError):
    """A file cannot be edited safely (unparsable, unexpected shape); nothing was written."""


@dataclass(frozen=True)
class FileChange:
    """The new text of one file; ``old`` is None when the file does not exist yet."""

    path: Path
    old: str | None = field(repr=False)  # either text can hold a secret: kept out of repr
    new: str = field(repr=False)
    private: bool = True  # created with mode 0600 (a configuration can hold a secret)
    holds_secret: bool = False  # the new text holds a secret literally (a client that cannot refer to one)
    old_holds_secret: bool = False  # our entry in the old text held one (its backup does too)

    @property
    def changed(self) -> bool:
        return self.old != self.new

    def current_mode(self) -> int | None:
        try:
            return self.path.stat().st_mode & 0o777
        except FileNotFoundError:
            return None

    def mode(self) -> int:
        """The mode the file is written with: a new file 0600 (a configuration) or 0644; an existing
        one keeps its mode, except that a file holding a secret loses all group and other access.
        Only the owner's processes (the client) read these files, so that takes nothing away."""
        current = self.current_mode()
        if current is None:
            return 0o600 if self.private or self.holds_secret else 0o644
        return current & 0o700 if self.holds_secret else current

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

    An unchanged file is left alone (no write, no backup): running setup twice changes nothing,
    except that a file holding a secret which has since been opened to others is made owner-only.
    """
    if not change.changed:
        if change.holds_secret and change.current_mode() != change.mode():
            os.chmod(change.path, change.mode())
        return None
    path = change.path
    backup: Path | None = None
    mode = change.mode()
    if change.old is not None and path.exists():
        backup = backup_path(path)
        shutil.copy2(path, backup)  # keeps the mode: a 0600 config stays private in its backup
        if change.old_holds_secret:  # the backup keeps an old literal secret: owner-only, like the new file
            os.chmod(backup, (backup.stat().st_mode & 0o777) & 0o700)
    path.parent.mkdir(parents=True, exist_ok=True)
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
