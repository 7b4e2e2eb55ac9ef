"""The MCP server without a database: the tools are served by the SDK's public low-level server,
publish the contract's schemas, receive their raw arguments and learn who calls them."""

from __future__ import annotations

import ast
from pathlib import Path
from types import SimpleNamespace
from typing import cast

from mcp import Client
from mcp.types import Implementation
from pydantic import BaseModel

import slowave_graph.mcp as mcp_package
from slowave_graph.app import App
from slowave_graph.contract.activate import ActivateRequest
from slowave_graph.mcp.adapter import compact_schema, envelope_schema
from slowave_graph.mcp.server import build_server
from slowave_graph.services.context import ClientInfo

CLIENT = Implementation(name="unit-test", version="1.2")
VALID = {"task": "t", "initial_goal": "g", "scope": "project:unit"}


class Seen(BaseModel):
    task: str
    client_name: str | None
    client_version: str | None
    principal: str


async def activate(request: ActivateRequest, client: ClientInfo) -> BaseModel:
    return Seen(
        task=request.task, client_name=client.name, client_version=client.version, principal=client.principal
    )


async def unused(request: BaseModel, client: ClientInfo) -> BaseModel:
    raise AssertionError("not called in these tests")


def stub_app() -> App:
    services = SimpleNamespace(
        activation=SimpleNamespace(activate=activate),
        remember=SimpleNamespace(remember=unused),
        recall=SimpleNamespace(recall=unused),
        feedback=SimpleNamespace(feedback=unused),
        commit=SimpleNamespace(commit=unused),
    )
    return cast(
        App, SimpleNamespace(services=services, metrics=None, settings=SimpleNamespace(tool_timeout=5.0))
    )


async def test_tools_list_publishes_the_contract_schemas() -> None:
    async with Client(build_server(stub_app()), client_info=CLIENT, mode="legacy") as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        capabilities = client.server_capabilities
    assert set(tools) == {
        "slowave_activate",
        "slowave_remember",
        "slowave_recall",
        "slowave_feedback",
        "slowave_commit",
    }
    activate_tool = tools["slowave_activate"]
    assert activate_tool.input_schema == compact_schema(ActivateRequest.model_json_schema())
    assert activate_tool.output_schema == envelope_schema()
    assert activate_tool.title == "Start a task and prime working memory"
    assert capabilities.tools is not None and capabilities.prompts is not None
    assert capabilities.resources is not None


async def test_a_tool_gets_raw_arguments_and_the_caller() -> None:
    async with Client(build_server(stub_app()), client_info=CLIENT, mode="legacy") as client:
        good = await client.call_tool("slowave_activate", VALID)
        bad = await client.call_tool("slowave_activate", {**VALID, "scope": "nocolon", "extra": 1})
        unknown = await client.call_tool("no_such_tool", {})
    seen = {"task": "t", "client_name": "unit-test", "client_version": "1.2", "principal": "local"}
    assert good.is_error is False and good.structured_content == {"ok": True, "data": seen}
    assert bad.is_error is True and bad.structured_content is not None
    error = bad.structured_content["error"]
    assert error["code"] == "invalid_input"
    assert {e["path"] for e in error["field_errors"]} == {"scope", "extra"}
    assert unknown.is_error is True and unknown.structured_content is None
    assert [c.model_dump()["text"] for c in unknown.content] == ["Unknown tool: no_such_tool"]


def test_the_mcp_modules_use_only_public_sdk_names() -> None:
    """The SDK's MCPServer internals (its tool registration, argument models) may change in any
    release; the server is built on exported names only."""
    imported: set[str] = set()
    for path in Path(mcp_package.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "mcp":
                imported.add(node.module)
    assert not {m for m in imported if m.startswith("mcp.server.mcpserver") or ".utilities" in m}, imported
