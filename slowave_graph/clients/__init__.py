"""Configuring MCP clients (Claude Code/Desktop, Cursor, Codex, Cline, Windsurf, opencode) to use
this server: each client's own file, in its own format, edited without touching anything else."""

from slowave_graph.clients.files import FileChange, SetupError, apply
from slowave_graph.clients.plan import ClientPlan, ClientStatus, plan, status
from slowave_graph.clients.registry import CLIENTS, Client
from slowave_graph.clients.spec import SERVER_NAME, ServerSpec, spec_from_settings

__all__ = [
    "CLIENTS",
    "SERVER_NAME",
    "Client",
    "ClientPlan",
    "ClientStatus",
    "FileChange",
    "ServerSpec",
    "SetupError",
    "apply",
    "plan",
    "spec_from_settings",
    "status",
]
