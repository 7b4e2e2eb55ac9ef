"""`slowave-graph backup` / `restore`: a full export with its counts and checksum, and a restore
that proves the database now holds exactly what the backup holds.

restore refuses to touch a scope that already exists unless told to replace it (then the scope is
deleted first, as delete_scope does, and restored from the file). After the import it exports
the restored scopes again without writing a file and compares counts per label and relationship
type and the checksum with the ones recorded in the backup.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from slowave_graph.embedding.embedder import Embedder
from slowave_graph.exceptions import SlowaveError
from slowave_graph.graph.database import Database
from slowave_graph.operator.export import export_graph, scope_tally
from slowave_graph.operator.importer import ExportFile, ImportRefused, import_export, read_export
from slowave_graph.operator.progress import Progress


class RestoreMismatch(SlowaveError, RuntimeError):
    """After a restore the database does not hold what the backup holds."""


async def backup(db: Database, path: Path, progress: Progress | None = None) -> dict[str, Any]:
    """Export everything to ``path``, then read the file back and check it against its summary."""
    with path.open("w", encoding="utf-8", newline="\n") as out:
        summary = await export_graph(db, out, None, progress)
    read_export(path)  # the file on disk is complete and intact
    return {"file": str(path), "bytes": path.stat().st_size, **summary}


# what `backup --dir` names its files; rotation only ever deletes files of this form
ROTATED_PREFIX = "slowave-graph-"
ROTATED_SUFFIX = ".jsonl"


async def backup_into(
    db: Database, directory: Path, keep: int, progress: Progress | None = None, now: datetime | None = None
) -> dict[str, Any]:
    """A backup into ``directory`` named by its time (UTC), then only the newest ``keep`` of this
    form kept. The file is written under a temporary name and renamed once checked, so a backup cut
    short never counts as one (nor pushes a good one out)."""
    directory.mkdir(parents=True, exist_ok=True)
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    final = directory / f"{ROTATED_PREFIX}{stamp}{ROTATED_SUFFIX}"
    partial = final.with_name(final.name + ".partial")
    try:
        result = await backup(db, partial, progress)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    os.replace(partial, final)
    removed = rotate(directory, keep)
    return {**result, "file": str(final), "removed": [str(p) for p in removed]}


def rotate(directory: Path, keep: int) -> list[Path]:
    """Deletes all but the newest ``keep`` backups `backup --dir` wrote here; returns them."""
    made = sorted(
        (p for p in directory.glob(f"{ROTATED_PREFIX}*{ROTATED_SUFFIX}") if p.is_file()),
        key=lambda p: p.name,  # the names sort by time
    )
    old = made[: max(0, len(made) - max(1, keep))]
    for path in old:
        path.unlink()
    return old


async def restore(
    db: Database,
    file: ExportFile,
    *,
    replace: bool = False,
    batch_size: int = 500,
    embedder: Embedder | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Restore a checked backup (``read_export``) and verify the result."""
    existing = {str(r["scope"]) for r in await db.run_read("export_scopes")}
    clash = sorted(existing & set(file.scopes))
    if clash and not replace:
        raise ImportRefused(
            f"{len(clash)} scope(s) of the backup already exist here ({', '.join(clash[:5])}"
            f"{', …' if len(clash) > 5 else ''}); pass --replace to delete and restore them"
        )
    for scope in clash:
        await db.run_write("delete_scope", scope=scope)
    done = await import_export(db, file, batch_size=batch_size, embedder=embedder, progress=progress)
    found = (await scope_tally(db, file.scopes)).summary()
    expected = {k: file.summary[k] for k in ("nodes", "relationships", "checksum")}
    checked = ("nodes", "relationships") if done["reembedded"] else ("nodes", "relationships", "checksum")
    for key in checked:
        if found[key] != expected[key]:
            raise RestoreMismatch(f"after the restore {key} are {found[key]}, the backup has {expected[key]}")
    return {**done, "replaced": clash, "verified": list(checked), **found}
