"""The agent-instruction block written into each client's own instruction file.

It sits between versioned markers, so a later version of slowave-graph replaces it in place and
everything the user wrote around it stays. The wording follows the server's MCP ``instructions``
and tool descriptions (slowave_graph/mcp/tools.py): the same lifecycle, the same notion of "use".
"""

from __future__ import annotations

import re

from slowave_graph.clients.files import SetupError

VERSION = 1
BEGIN = f"<!-- slowave-graph:instructions v{VERSION} -->"
END = "<!-- /slowave-graph:instructions -->"
_BEGIN_ANY = re.compile(r"<!-- slowave-graph:instructions v\d+ -->")

BODY = """\
## Long-term memory: slowave-graph

You have a long-term memory over MCP: the `slowave-graph` server and its `slowave_*` tools. It \
outlives this conversation and is shared with other agents that work in the same scope. Use it on \
every task:

1. **Activate once per task.** Call `slowave_activate` first, with the task verbatim, your initial \
goal and a scope of the form `kind:id` (e.g. `project:<repository name>`), spelled the same way \
every time. Keep `session_id` for the other calls and every `retrieval_id` for feedback. An empty \
result is a valid answer, not an error.
2. **Remember durable claims.** When you learn or decide something that will still matter after \
this task (a fact, decision, constraint, preference, lesson or warning), store it with \
`slowave_remember` as one self-contained sentence that names the project, component, value and \
condition. Store what you verified or were told; no guesses, no transcripts.
3. **Recall when you need history.** Mid-task, ask `slowave_recall` one focused question when what \
activation showed is not enough. Memories are suggestions with provenance, not proof: check them \
against the current state before you rely on them.
4. **Give honest feedback on everything you were shown.** For each memory and procedure a \
retrieval exposed, call `slowave_feedback`: `used` only when it changed what you did, checked or \
decided (having read it is not use; say `harmed` if it misled you); otherwise `not_used`, \
`irrelevant`, `already_known`, `unassessable` (with a reason) or `stale` (with a reason; remember \
the corrected claim first and name it as the replacement). Declare `coverage: "complete"` once \
every item is assessed.
5. **Commit with the outcome.** End every task with `slowave_commit`: the final goal, the outcome \
(`success`, `partial` or `failure`), what happened and how you verified it. Add a procedure when \
the task taught a reusable method, failures included. If it answers `incomplete_feedback`, give \
the missing feedback and commit again.
"""

BLOCK = f"{BEGIN}\n{BODY}{END}\n"


def upsert_block(text: str | None, where: str) -> str:
    """The file's text with the current block in place of any earlier version (or appended)."""
    source = text or ""
    begin = _BEGIN_ANY.search(source)
    if begin is None:
        if not source.strip():
            return BLOCK
        return source.rstrip("\n") + "\n\n" + BLOCK
    end = source.find(END, begin.end())
    if end < 0:
        raise SetupError(f"{where} has a slowave-graph start marker without its end marker; fix it by hand")
    stop = end + len(END)
    if source[stop : stop + 1] == "\n":
        stop += 1
    return source[: begin.start()] + BLOCK + source[stop:]


def installed_version(text: str | None) -> int | None:
    match = _BEGIN_ANY.search(text or "")
    return int(match.group(0).split(" v")[1].split(" ")[0]) if match else None
