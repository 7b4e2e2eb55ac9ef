"""The detached process that stops a lingering managed Neo4j (see ``lease.py``).

Usage: ``python -m slowave_graph.neo4j_local.linger DATA_DIR CACHE_DIR NEO4J_VERSION UNTIL``
(UNTIL in Unix time). It sleeps until then and stops the Neo4j unless a lease, ``neo4j start`` or
``neo4j stop`` came in the meantime (they cancel it with SIGTERM; the marker check covers the
rest). It takes no other settings: stopping needs only where the instance lives.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from slowave_graph.config import Settings
from slowave_graph.neo4j_local.lease import ManagedLease


def main(argv: list[str]) -> int:
    data_dir, cache_dir, version, until = argv
    settings = Settings(data_dir=Path(data_dir), cache_dir=Path(cache_dir), neo4j_version=version)
    while (left := float(until) - time.time()) > 0:
        time.sleep(min(left, 30.0))  # re-read the clock: a suspended machine wakes past the deadline
    stopped = ManagedLease(settings).reap(os.getpid())
    print(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} linger over: {'stopped' if stopped else 'in use'}",
          file=sys.stderr)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
