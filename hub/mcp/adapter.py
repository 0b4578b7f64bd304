"""The MCP tools and resources of a session's run, served by the services REST serves.

Tools: the facts tools over the session's folders (``facts.tools.Toolbox``, as
``/v0/memory/tools``) and the run's memory tools (``threads.services.toolset``, as
``/api/v1/runs/{id}/tool-calls``), with the same names, descriptions, argument schemas and
answers. A tool message ``error: <code>: <message>`` is an MCP tool error (``isError``).

Resources: the run's context block (the text run acceptance returned) and, while the run
may view files, the files of its mounted file memories.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from urllib.parse import quote, unquote

from facts.tools import TOOLS as FACTS_TOOLS
from facts.tools import Toolbox
from filememory.services.files import get_file, list_files
from filememory.services.paths import FILE_PATH
from hub.mcp.session import McpSession, run_of
from memoryhub.errors import ApiError
from memoryhub.models import Run
from memoryhub.tools import Tool, ToolCall
from threads.models import RunMount
from threads.services.runs import own_run
from threads.services.tool_calls import execute_tool_call
from threads.services.toolset import disabled_tools, run_tools

FACTS_TOOL_NAMES = frozenset(tool.name for tool in FACTS_TOOLS)
CONTEXT_URI = "memoryhub://run/context"
FILES_URI = "memoryhub://files/"  # + mount name + "/" + the file's path
ERROR_PREFIX = "error: "
# Where a client (an agent framework) passes its model's tool call id, so that a repeated
# call runs once, as a repeated id does over REST. Without one every call is new.
CALL_ID_META = "memoryhub/tool_call_id"


@dataclass(frozen=True)
class Answer:
    text: str
    is_error: bool


@dataclass(frozen=True)
class FileResource:
    uri: str
    name: str
    size: int


def _mounts(run: Run) -> list[RunMount]:
    return [] if run.inline else list(RunMount.objects.filter(run=run))


def list_tools(session: McpSession) -> list[Tool]:
    """The facts tools, then the run's memory tools, as REST offers them."""
    principal = session.principal()
    run = run_of(principal)
    return Toolbox(principal, session.paths).tools() + run_tools(run.agent, _mounts(run))


def call_tool(session: McpSession, name: str, arguments: object, call_id: str | None) -> Answer:
    """One call of the model, by the REST path its tool name belongs to."""
    call_id = call_id or f"mcp-{uuid.uuid4().hex}"
    try:
        principal = session.principal()
        if name in FACTS_TOOL_NAMES:
            message = Toolbox(principal, session.paths).call(ToolCall(call_id, name, arguments))
        else:
            message = execute_tool_call(principal, run_of(principal).id, call_id, name, arguments)
    except ApiError as error:  # what REST answers with a status: the run ended, an id reused
        return Answer(error.as_tool_text(), True)
    content = message["content"]
    return Answer(content, content.startswith(ERROR_PREFIX))


def context(session: McpSession) -> str:
    """The run's context block, exactly as run acceptance returned it (empty once its person
    was erased), as ``GET /api/v1/runs/current`` answers it."""
    return own_run(session.principal()).context


def _file_mounts(run: Run) -> list[RunMount]:
    """The file mounts whose files the run may view (``memory_file_view`` is offered)."""
    if "file_view" in disabled_tools(run.agent):
        return []
    return [mount for mount in _mounts(run) if mount.kind == "file"]


def file_uri(mount: str, path: str) -> str:
    return f"{FILES_URI}{mount}/{quote(path)}"


def list_file_resources(session: McpSession) -> list[FileResource]:
    principal = session.principal()
    found = []
    for mount in _file_mounts(run_of(principal)):
        for file in list_files(principal, mount.memory_id):
            name = f"{mount.name}/{file.path}"
            found.append(FileResource(file_uri(mount.name, file.path), name, file.size))
    return found


def read_file_resource(session: McpSession, uri: str) -> str:
    """A mounted file's content (404 for a mount or file the run doesn't have)."""
    if not uri.startswith(FILES_URI):
        raise ApiError(404, f"no resource {uri}")
    principal = session.principal()
    mount_name, _, path = uri.removeprefix(FILES_URI).partition("/")
    mount = next((m for m in _file_mounts(run_of(principal)) if m.name == mount_name), None)
    if mount is None:
        raise ApiError(404, f"no file memory mounted as {mount_name!r}")
    # The URI's path passes REST's file path rules (no NUL, no ".." ...) before any lookup.
    return get_file(principal, mount.memory_id, FILE_PATH(unquote(path))).content
