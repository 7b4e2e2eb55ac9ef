"""MCP adapter: turns MCP tool calls into service calls and service results into the envelope.

The SDK's ``MCPServer`` derives a tool's schema from its function signature, validates arguments
against it and answers a violation with a framework error text. The contract wants its own
envelope (``invalid_input`` with ``field_errors``) and publishes its own compact schema, so the
tools are served by the SDK's low-level ``Server`` (mcp/server.py): ``tools/list`` publishes each
contract model's schema as built here, and ``tools/call`` hands a tool its raw arguments, which it
validates with the contract model itself.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from mcp.server import ServerRequestContext
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
    ToolAnnotations,
)
from pydantic import BaseModel, ValidationError

from slowave_graph.access import bearer
from slowave_graph.contract.common import ErrorBody, ErrorCode, FieldError
from slowave_graph.embedding.endpoint import EndpointError
from slowave_graph.errors import ServiceError, embedding_unavailable, from_store, timed_out, unavailable
from slowave_graph.graph.errors import DatabaseUnavailable, StoreRefusal
from slowave_graph.services.context import ClientInfo, granted
from slowave_graph.telemetry import CallTimer, ToolMetrics, now, tool_call

log = logging.getLogger(__name__)

RequestT = TypeVar("RequestT", bound=BaseModel)
Handler = Callable[[RequestT, ClientInfo], Awaitable[BaseModel]]
# What a low-level request handler receives (the server's lifespan state, the transport's request)
RequestContext = ServerRequestContext[Any, Any]


def field_path(loc: tuple[int | str, ...]) -> str:
    """('procedure', 'steps', 0, 'summary') → 'procedure.steps[0].summary'."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def unsafe_values(value: Any, path: str = "") -> list[FieldError]:
    """What no model should even see, anywhere in the arguments (keys included): lone surrogates
    and noncharacters (not text; surrogates cannot even be encoded, logged or stored), NUL, and
    numbers that are not finite
    (NaN, ±Infinity, or 1e400 read as infinity) — JSON has no such values and Neo4j would store
    them as something else."""
    found: list[FieldError] = []
    if isinstance(value, str):
        if _SURROGATE.search(value):
            found.append(
                FieldError(path=path or "(arguments)", message="not text: a lone surrogate or a noncharacter")
            )
        if "\x00" in value:
            found.append(FieldError(path=path or "(arguments)", message="contains a NUL character"))
    elif isinstance(value, float) and not math.isfinite(value):
        found.append(FieldError(path=path or "(arguments)", message="must be a finite number"))
    elif isinstance(value, dict):
        for key, item in value.items():
            shown = _SURROGATE.sub("\ufffd", str(key))
            child = f"{path}.{shown}" if path else shown
            found.extend(unsafe_values(key, child) if isinstance(key, str) else [])
            found.extend(unsafe_values(item, child))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.extend(unsafe_values(item, f"{path}[{index}]"))
    return found


# lone surrogates, and U+FFFE/U+FFFF, which the stdio transport puts in their place (mcp/stdio.py)
_SURROGATE = re.compile("[\ud800-\udfff\ufffe\uffff]")


def validation_failure(exc: ValidationError) -> ErrorBody:
    errors = []
    for err in exc.errors(include_url=False):
        ctx = err.get("ctx") or {}
        # "within": where inside the field the problem is (e.g. a task_context key)
        path = field_path(err["loc"]) + str(ctx["within"]) if "within" in ctx else ""
        path = path or field_path(err["loc"]) or ctx.get("field") or "(arguments)"
        if ctx.get("field") and err["loc"] == ():
            path = str(ctx["field"])
        message = err["msg"]
        if err["type"] == "extra_forbidden":
            message = "unknown field"
        elif err["type"] in ("too_long", "too_short") and isinstance(err.get("input"), str):
            # a length checked after validation reads "Value should have at most 8000 items":
            # a string's length is in characters
            bound = "at most" if err["type"] == "too_long" else "at least"
            limit = ctx.get("max_length" if err["type"] == "too_long" else "min_length")
            message = f"should have {bound} {limit} characters, not {len(err['input'])}"
        errors.append(FieldError(path=str(path), message=message))
    return invalid_arguments(errors)


def invalid_arguments(errors: list[FieldError]) -> ErrorBody:
    summary = "; ".join(f"{e.path}: {e.message}" for e in errors[:5])
    return ErrorBody(
        code=ErrorCode.invalid_input,
        message=f"invalid arguments — {summary}",
        retryable=False,
        field_errors=errors,
    )


def _asgi_scope(ctx: RequestContext) -> dict[str, Any]:
    """The HTTP request's ASGI scope ({} over stdio and in process, where there is no request)."""
    asgi_scope = getattr(ctx.request, "scope", None)
    return asgi_scope if isinstance(asgi_scope, dict) else {}


def principal_of(ctx: RequestContext) -> str:
    """Who the credentials of this call belong to: set by the HTTP auth layer; stdio, and HTTP
    without a token, have one local user."""
    return bearer.principal(_asgi_scope(ctx))


def client_info(ctx: RequestContext) -> ClientInfo:
    """Client identity from the MCP handshake and the transport (never from tool arguments)."""
    principal = principal_of(ctx)
    scopes = bearer.grants(_asgi_scope(ctx))
    params = ctx.session.client_params  # None when the client did not say who it is
    info = params.client_info if params is not None else None
    return ClientInfo(
        name=info.name if info is not None else None,
        version=info.version if info is not None else None,
        principal=principal,
        scopes=scopes,
    )


def envelope_result(envelope: dict[str, Any]) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(envelope, ensure_ascii=False))],
        structured_content=envelope,
        # a refused call is an error to the MCP client too; the envelope says which
        is_error=not envelope.get("ok", False),
    )


def _failure(body: ErrorBody) -> dict[str, Any]:
    return {"ok": False, "error": body.model_dump(mode="json", exclude_none=True)}


def internal_failure(tool: str) -> CallToolResult:
    """An unexpected failure, logged with its traceback (call from an except block)."""
    log.exception("tool %s failed", tool)
    return envelope_result(
        _failure(
            ErrorBody(
                code=ErrorCode.internal_error,
                message="the server failed to process this call; it has been logged",
                retryable=False,
            )
        )
    )


def compact_schema(node: Any) -> Any:
    """A JSON schema as tools/list publishes it: types, enums, required fields, bounds, patterns
    and descriptions, without pydantic's titles and examples (the descriptions give examples
    inline), and with ``anyOf [X, null]`` of an optional field as X (it is optional by not being
    required). Sent to the model in every conversation, so every byte counts; strict clients
    validate against it, so it states every rule of the server that JSON Schema can say."""
    if isinstance(node, list):
        return [compact_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("title", "examples") and not isinstance(value, dict):
            continue
        if key == "additionalProperties" and value is True:
            continue  # the default
        if key == "properties":  # names, not schema keywords
            out[key] = {name: compact_schema(v) for name, v in value.items()}
            continue
        out[key] = compact_schema(value)
    options = out.get("anyOf")
    if isinstance(options, list) and len(options) == 2 and {"type": "null"} in options:
        (kept,) = [o for o in options if o != {"type": "null"}]
        out.pop("anyOf")
        if out.get("default", 0) is None:
            out.pop("default")
        out = {**kept, **out}
    if isinstance(out.get("enum"), list):
        out.pop("maxLength", None)  # the enum says it
        if None in out["enum"]:  # null means omitted: publish the values only
            out["enum"] = [v for v in out["enum"] if v is not None]
    return out


def typed_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with ``type: object`` beside each property that is only a ``$ref`` to an object:
    clients that build a form from the properties (the MCP Inspector) otherwise send such a value
    as a string."""
    defs = schema.get("$defs", {})

    def visit(node: Any) -> Any:
        if isinstance(node, list):
            return [visit(item) for item in node]
        if not isinstance(node, dict):
            return node
        out = {key: visit(value) for key, value in node.items()}
        for value in (out.get("properties") or {}).values():
            ref = value.get("$ref", "") if isinstance(value, dict) else ""
            target = defs.get(ref.removeprefix("#/$defs/"), {}) if ref.startswith("#/$defs/") else {}
            if target.get("type") == "object" and "type" not in value:
                value["type"] = "object"
        return out

    return dict(visit(schema))


def envelope_schema() -> dict[str, Any]:
    """The output schema: the envelope. What ``data`` holds is the tool description's to say: the
    result types spelled out doubled what tools/list costs in every conversation, and a client
    validates the envelope, not our documentation of it."""
    return {
        "type": "object",
        "properties": {
            "ok": {"type": "boolean"},
            "data": {"type": "object"},
            # the fields every error has (a strict validator wants each required one declared)
            "error": {
                "type": "object",
                "properties": {"code": {}, "message": {}, "retryable": {}},
                "required": ["code", "message", "retryable"],
            },
        },
        "required": ["ok"],
    }


@dataclass(frozen=True)
class ContractTool:
    """A tool as ``tools/list`` publishes it (``definition``) and what runs a call of it with the
    raw JSON arguments."""

    definition: Tool
    call: Callable[[dict[str, Any], RequestContext], Awaitable[CallToolResult]]


def make_tool(
    *,
    name: str,
    title: str,
    description: str,
    request_model: type[RequestT],
    handler: Handler[RequestT],
    annotations: ToolAnnotations,
    timeout: float,
    metrics: ToolMetrics | None = None,
) -> ContractTool:
    """An MCP tool whose published schemas come from the contract models. A call that outlives
    ``timeout`` seconds answers ``unavailable`` instead of waiting on the database for ever."""

    async def call(arguments: dict[str, Any], ctx: RequestContext) -> CallToolResult:
        with tool_call(metrics, name) as timer:
            admitted = _admitted(request_model, arguments, ctx)
            if isinstance(admitted, CallToolResult):
                answer = admitted
            else:
                request, client = admitted
                answer = await _answer(name, handler, request, client, timeout)
            _log_call(name, timer, answer)
            return answer

    definition = Tool(
        name=name,
        title=title,
        description=description,
        input_schema=typed_refs(compact_schema(request_model.model_json_schema())),
        output_schema=envelope_schema(),
        annotations=annotations,
    )
    return ContractTool(definition=definition, call=call)


def _admitted(
    request_model: type[RequestT], arguments: dict[str, Any], ctx: RequestContext
) -> tuple[RequestT, ClientInfo] | CallToolResult:
    """The validated request and its client, or the ``invalid_input`` envelope refusing it: unsafe
    values, a contract violation, or a scope the client's token is not granted."""
    unsafe = unsafe_values(arguments)
    if unsafe:
        return envelope_result(_failure(invalid_arguments(unsafe)))
    try:
        request = request_model.model_validate(arguments)
    except ValidationError as exc:
        return envelope_result(_failure(validation_failure(exc)))
    client = client_info(ctx)
    scope = getattr(request, "scope", None)
    if isinstance(scope, str) and not granted(client.scopes, scope):
        refusal = FieldError(path="scope", message=f"scope {scope!r} is not granted to this token")
        return envelope_result(_failure(invalid_arguments([refusal])))
    return request, client


def _log_call(name: str, timer: CallTimer, answer: CallToolResult) -> None:
    """One line per tool call (the access log of the tools): outcome, time and its parts. The
    request id the log records carry ties it to its Neo4j statements (DEBUG) and any warning."""
    if not log.isEnabledFor(logging.INFO):
        return
    content = answer.structured_content or {}
    error = content.get("error") if isinstance(content, dict) else None
    outcome = "ok" if content.get("ok") else str((error or {}).get("code", "error"))
    log.info(
        "%s %s %.1f ms (embed %.1f, neo4j %.1f ms in %d transactions)",
        name,
        outcome,
        (now() - timer.started) * 1000,
        timer.parts.get("embed", 0.0) * 1000,
        timer.parts.get("neo4j", 0.0) * 1000,
        timer.transactions,
    )


async def _answer(
    name: str, handler: Handler[RequestT], request: RequestT, client: ClientInfo, timeout: float
) -> CallToolResult:
    """The handler's result in the envelope, or the failure it ended in (past ``timeout``:
    ``unavailable``)."""
    deadline = asyncio.timeout(timeout)
    try:
        async with deadline:
            data = await handler(request, client)
    except TimeoutError:
        if not deadline.expired():  # a timeout from below, not this call's deadline
            return internal_failure(name)
        log.error("tool %s did not finish within %g s; the database is not answering", name, timeout)
        return envelope_result(_failure(timed_out(name, timeout).body()))
    except ServiceError as exc:
        return envelope_result(_failure(exc.body()))
    except StoreRefusal as exc:
        return envelope_result(_failure(from_store(exc).body()))
    except DatabaseUnavailable as exc:
        return envelope_result(_failure(unavailable(str(exc), outcome_unknown=exc.outcome_unknown).body()))
    except EndpointError as exc:
        log.warning("tool %s: %s", name, exc)
        return envelope_result(_failure(embedding_unavailable(str(exc), retryable=exc.retryable).body()))
    except Exception:
        return internal_failure(name)
    return envelope_result({"ok": True, "data": data.model_dump(mode="json", exclude_none=True)})


class ToolSet:
    """The handlers of ``tools/list`` and ``tools/call`` for the low-level server. An unknown tool,
    and a failure that escapes a tool, answer with a plain-text ``isError`` result, not the
    envelope: no tool answered. The texts are the ones the SDK's ``MCPServer`` gives, so a client
    sees the same whichever of the SDK's servers serves the tools."""

    def __init__(self, tools: Sequence[ContractTool]) -> None:
        self.tools = {tool.definition.name: tool for tool in tools}

    def input_schema(self, name: str) -> dict[str, Any] | None:
        """A tool's input schema by name, for the SDK's check of ``Mcp-Param-*`` HTTP headers."""
        tool = self.tools.get(name)
        return tool.definition.input_schema if tool is not None else None

    async def list_tools(self, ctx: RequestContext, params: PaginatedRequestParams | None) -> ListToolsResult:
        return ListToolsResult(tools=[tool.definition for tool in self.tools.values()])

    async def call_tool(self, ctx: RequestContext, params: CallToolRequestParams) -> CallToolResult:
        tool = self.tools.get(params.name)
        if tool is None:
            log.info("call of an unknown tool %r", params.name)
            return _plain_error(f"Unknown tool: {params.name}")
        try:
            return await tool.call(params.arguments or {}, ctx)
        except Exception:  # the tool answers every failure it expects with the envelope itself
            log.exception("tool %s raised", params.name)
            return _plain_error(f"Error executing tool {params.name}")


def _plain_error(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)
