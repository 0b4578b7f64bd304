"""The MCP server (the official ``mcp`` SDK's low-level ``Server``): tools and resources of
the session's run (``hub.mcp.adapter``), over Streamable HTTP or stdio.

How a request finds its session is the transport's: over HTTP the credentials come from the
request's headers (:func:`credentials_from_headers`), over stdio from the command's options.
Nothing a tool call carries can widen them: no tool takes a workspace, agent or end user.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio
import mcp_types as types
from asgiref.sync import sync_to_async
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from hub.mcp import adapter
from hub.mcp.session import Credentials, McpSession, close_session, in_worker, open_session
from memoryhub.errors import ApiError

SERVER_NAME = "memoryhub"
INSTRUCTIONS = (
    "memoryhub is your long-term memory: search it before answering, save short facts worth "
    "keeping, and read the memoryhub://run/context resource for what your memories hold."
)
# JSON-RPC error codes of refusals before any tool runs (the credentials don't fit).
REFUSED = -32001
NOT_FOUND = -32002
METHOD_NOT_FOUND = -32601

SessionOf = Callable[[ServerRequestContext], Awaitable[McpSession]]


async def in_thread(function: Callable[..., Any], *args: Any) -> Any:
    """Django's ORM is synchronous: run it in a worker thread, never on the event loop."""
    return await sync_to_async(in_worker(function), thread_sensitive=False)(*args)


def refusal(error: ApiError) -> MCPError:
    code = NOT_FOUND if error.status == 404 else REFUSED
    return MCPError(code, f"{error.reason or error.code}: {error.message}")


async def open_in_thread(credentials: Credentials) -> McpSession:
    try:
        return await in_thread(open_session, credentials)
    except ApiError as error:
        raise refusal(error) from None


def build_server(session_of: SessionOf) -> Server:
    """A server whose handlers act as the run ``session_of`` finds for each request."""

    async def list_tools(ctx: ServerRequestContext, params: Any) -> types.ListToolsResult:
        tools = await _guarded(adapter.list_tools, await session_of(ctx))
        return types.ListToolsResult(tools=[_tool(t.definition()["function"]) for t in tools])

    async def call_tool(
        ctx: ServerRequestContext, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        session = await session_of(ctx)
        call_id = (params.meta or {}).get(adapter.CALL_ID_META)
        call_id = call_id if isinstance(call_id, str) else None
        answer = await in_thread(adapter.call_tool, session, params.name, params.arguments, call_id)
        return types.CallToolResult(
            content=[types.TextContent(text=answer.text)], is_error=answer.is_error
        )

    async def list_resources(ctx: ServerRequestContext, params: Any) -> types.ListResourcesResult:
        files = await _guarded(adapter.list_file_resources, await session_of(ctx))
        context = types.Resource(
            uri=adapter.CONTEXT_URI,
            name="context",
            description="The memory context this run received when it was accepted.",
            mime_type="text/plain",
        )
        return types.ListResourcesResult(
            resources=[context]
            + [types.Resource(uri=f.uri, name=f.name, size=f.size) for f in files]
        )

    async def read_resource(
        ctx: ServerRequestContext, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        session, uri = await session_of(ctx), str(params.uri)
        if uri == adapter.CONTEXT_URI:
            text = await _guarded(adapter.context, session)
        else:
            text = await _guarded(adapter.read_file_resource, session, uri)
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, text=text, mime_type="text/plain")]
        )

    return Server(
        SERVER_NAME,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
    )


async def _guarded(function: Callable[..., Any], *args: Any) -> Any:
    try:
        return await in_thread(function, *args)
    except ApiError as error:
        raise refusal(error) from None


def _tool(function: Mapping[str, Any]) -> types.Tool:
    """An OpenAI function definition as an MCP tool: the same name, text and schema."""
    return types.Tool(
        name=function["name"],
        description=function["description"],
        input_schema=function["parameters"],
    )


# -- over HTTP: credentials from each request's headers -----------------------------------
RUN_TOKEN_HEADER = "x-agentos-run-token"  # noqa: S105 - a header's name
AGENT_HEADER = "x-memoryhub-agent"
END_USER_HEADER = "x-memoryhub-end-user"
PATHS_HEADER = "x-memoryhub-paths"
API_KEY_NEEDS_SESSION = "an API key's run lasts an MCP session: use the initialize handshake"
_SESSION = "memoryhub.session"
_LOCK = "memoryhub.session-lock"


def split_paths(value: str) -> tuple[str, ...]:
    """``users/{user}/,notes/`` -> the folders (paths never hold commas)."""
    return tuple(p.strip() for p in value.split(",") if p.strip())


def credentials_from_headers(headers: Mapping[str, str]) -> Credentials:
    scheme, _, secret = headers.get("authorization", "").partition(" ")
    return Credentials(
        run_token=headers.get(RUN_TOKEN_HEADER, "").strip(),
        api_key=secret.strip() if scheme.lower() == "bearer" else "",
        agent=headers.get(AGENT_HEADER, "").strip(),
        end_user=headers.get(END_USER_HEADER, "").strip(),
        paths=split_paths(headers.get(PATHS_HEADER, "")),
    )


async def http_session(ctx: ServerRequestContext) -> McpSession:
    """A run token's run for each request; an API key's run once per MCP session.

    The run an API key opens lives in the connection's state and ends with its teardown
    (the client's DELETE, the idle timeout, shutdown). The SDK keeps both on the connection,
    which only its private attribute reaches.
    """
    if ctx.request is None:
        raise MCPError(REFUSED, "credentials come with an HTTP request")
    credentials = credentials_from_headers(ctx.request.headers)
    if credentials.run_token or not credentials.api_key:
        return await open_in_thread(credentials)
    connection = ctx.session._connection  # noqa: SLF001 - see the docstring
    if connection.session_id is None:  # a request on its own: its run would end at once
        raise MCPError(REFUSED, API_KEY_NEEDS_SESSION)
    lock = connection.state.setdefault(_LOCK, anyio.Lock())
    async with lock:
        session = connection.state.get(_SESSION)
        if session is None:
            session = await open_in_thread(credentials)
            connection.state[_SESSION] = session
            connection.exit_stack.push_async_callback(in_thread, close_session, session)
    if session.opened_by != credentials.key_hash:
        raise MCPError(REFUSED, "this session was opened with another API key")
    return session


def keep_api_key_sessions(server: Server) -> None:
    """Send API-key clients to the initialize handshake, which gives them a session.

    The 2026-07-28 protocol has no sessions: each request stands alone, so a run opened
    for one would end with it. Its clients probe ``server/discover`` first and fall back
    to the handshake on any error, so an API key's probe is refused.
    """
    discover = server.get_request_handler("server/discover")
    assert discover is not None  # the SDK's own handler, registered with the server

    async def discover_unless_api_key(ctx: ServerRequestContext, params: Any) -> Any:
        headers = ctx.request.headers if ctx.request is not None else {}
        credentials = credentials_from_headers(headers)
        if credentials.api_key and not credentials.run_token:
            raise MCPError(METHOD_NOT_FOUND, API_KEY_NEEDS_SESSION)
        return await discover.handler(ctx, params)

    server.add_request_handler("server/discover", discover.params_type, discover_unless_api_key)
