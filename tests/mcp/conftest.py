"""A live memoryhub (uvicorn serving ``hub.asgi``) on the test database, seeded over
its REST API as an agent runtime would, and MCP clients of the SDK to reach it: over
Streamable HTTP, and over stdio (``memoryhub-mcp`` in a subprocess).

Every client call is bounded (:data:`TIMEOUT`), so no test can hang.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import anyio
import httpx2
import pytest
import requests
from django.conf import settings
from django.core.management import call_command
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from memoryhub.embedded import free_port
from memoryhub.services.workspaces import create_api_key, create_workspace
from support.workers import stop, tests_database_url, wait_until_up

# For the test modules: the database exists only for tests marked to use it. Each test's
# transaction is its own; the server sees what the seed committed.
MARKS = [pytest.mark.slow, pytest.mark.django_db]
TIMEOUT = 30  # seconds for any one client exchange
FILE = "prefs/language.md"


def server_environment() -> dict[str, str]:
    environ = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    environ.update(
        MEMORYHUB_ENV="test",
        DJANGO_SETTINGS_MODULE="memoryhub.settings",
        DATABASE_URL=tests_database_url(),
        PYTHONPATH=str(settings.BASE_DIR),  # this checkout's code, not an installed one
    )
    return environ


@dataclass
class Workspace:
    keys: dict[str, str]
    language: str  # what its file says, so that one workspace's answers tell from the other's
    agent_id: str = ""
    memory_id: str = ""
    run: dict = field(default_factory=dict)  # the accepted run (alice's), token included


@dataclass
class Live:
    url: str
    home: Workspace
    other: Workspace

    @property
    def mcp_url(self) -> str:
        return self.url + "/mcp"

    def rest(self, method: str, path: str, key: str, **kwargs) -> requests.Response:
        """A REST call with an API key, or with the run token in ``headers`` (key "")."""
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        headers.update(kwargs.pop("headers", {}))
        return requests.request(method, self.url + path, headers=headers, timeout=TIMEOUT, **kwargs)

    def call(self, method: str, path: str, key: str, **kwargs) -> dict:
        response = self.rest(method, path, key, **kwargs)
        assert response.status_code < 300, (path, response.status_code, response.text)
        return response.json() if response.content else {}


def _serve(port: int, **env: str) -> subprocess.Popen:
    command = [sys.executable, "-m", "uvicorn", "hub.asgi:application"]
    return subprocess.Popen(  # noqa: S603 - our own interpreter and arguments
        [*command, "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"],
        env={**server_environment(), **env},
        cwd=settings.BASE_DIR,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _seed(live: Live, space: Workspace, person: str) -> None:
    """An agent with a file memory mounted by default, and a run of it for ``person``."""
    key = space.keys["write"]
    memory = live.call("POST", "/api/v1/memories", key, json={"name": "Prefs", "type": "postgres"})
    space.memory_id = memory["id"]
    live.call(
        "PUT",
        f"/api/v1/memories/{space.memory_id}/files/{FILE}",
        key,
        json={"content": f"Answer in {space.language}.\n"},
    )
    mounts = [{"name": "prefs", "memory_id": space.memory_id, "access": "write"}]
    agent = live.call("POST", "/api/v1/agents", key, json={"name": "Bot", "memory_mounts": mounts})
    space.agent_id = agent["id"]
    space.run = new_run(live, space, person)


def new_run(live: Live, space: Workspace, person: str | None) -> dict:
    """A new thread of the workspace's agent for ``person`` and its accepted run."""
    key = space.keys["run"]
    body = {"agent_id": space.agent_id, **({"end_user": person} if person else {})}
    thread = live.call("POST", "/api/v1/threads", key, json=body)
    return live.call("POST", f"/api/v1/threads/{thread['id']}/runs", key, json={"input": "hi"})


@pytest.fixture(scope="module")
def live(django_db_setup, django_db_blocker) -> Iterator[Live]:
    """The server for the module; the database is flushed afterwards."""
    with django_db_blocker.unblock():
        spaces = []
        for name, language in (("Home", "English"), ("Elsewhere", "Turkish")):
            workspace = create_workspace(name)
            keys = {p: create_api_key(workspace, p)[1] for p in ("read", "run", "write")}
            spaces.append(Workspace(keys, language))
    port = free_port()
    server = _serve(port)
    try:
        live = Live(f"http://127.0.0.1:{port}", *spaces)
        wait_until_up(live.url, server)
        _seed(live, live.home, "alice")
        _seed(live, live.other, "alice")
        yield live
    finally:
        stop(server)
        with django_db_blocker.unblock():
            call_command("flush", verbosity=0, interactive=False)


@pytest.fixture(scope="module")
def quick_idle_url(live) -> Iterator[str]:
    """A second server on the same database whose MCP sessions idle out after a second."""
    port = free_port()
    server = _serve(port, MEMORYHUB_MCP_IDLE_SECONDS="1")
    try:
        wait_until_up(f"http://127.0.0.1:{port}", server)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(server)


@asynccontextmanager
async def http_client(
    url: str, headers: dict[str, str], *, terminate_on_close: bool = True
) -> AsyncIterator[Client]:
    """The SDK's client over Streamable HTTP, with the configuration's headers."""
    timeout = httpx2.Timeout(TIMEOUT)
    async with httpx2.AsyncClient(headers=headers, timeout=timeout) as http:
        transport = streamable_http_client(
            url, http_client=http, terminate_on_close=terminate_on_close
        )
        async with Client(transport, read_timeout_seconds=TIMEOUT) as client:
            yield client


@asynccontextmanager
async def stdio_client(*options: str, **env: str) -> AsyncIterator[Client]:
    """The SDK's client over stdio: ``memoryhub-mcp`` with ``options``, as a desktop runs it."""
    parameters = StdioServerParameters(
        command=sys.executable,
        args=["-m", "hub.mcp.stdio", *options],
        env={**server_environment(), **env},
        cwd=str(settings.BASE_DIR),
    )
    async with Client(parameters, read_timeout_seconds=TIMEOUT) as client:
        yield client


def unique(name: str) -> str:
    """A person of this test alone (the transports' runs share one database)."""
    return f"{name}-{uuid.uuid4().hex[:8]}"


async def refused(connect, **credentials: str) -> str:
    """The MCP error a client configured so gets for its tools (the SDK may group it)."""
    try:
        async with connect(**credentials) as client:
            await client.list_tools()
    except BaseException as error:  # noqa: BLE001 - an ExceptionGroup, or the error itself
        found = _mcp_error(error)
        if found is None:
            raise
        return str(found)
    raise AssertionError("the tools were listed")


def _mcp_error(error: BaseException) -> MCPError | None:
    if isinstance(error, MCPError):
        return error
    for inner in getattr(error, "exceptions", ()):
        if (found := _mcp_error(inner)) is not None:
            return found
    return None


def run_async(test, *args, **kwargs) -> object:
    """Run one async test body under a deadline."""

    async def bounded():
        with anyio.fail_after(TIMEOUT * 3):
            return await test(*args, **kwargs)

    return anyio.run(bounded)


def headers_for(run_token: str = "", api_key: str = "", **config: str) -> dict[str, str]:
    """The HTTP headers a client's configuration sets for these credentials."""
    headers = {"x-agentos-run-token": run_token} if run_token else {}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    headers.update({f"x-memoryhub-{name.replace('_', '-')}": v for name, v in config.items()})
    return headers


def options_for(run_token: str = "", api_key: str = "", **config: str) -> list[str]:
    """The ``memoryhub-mcp`` options a desktop client's configuration gives."""
    given = {"run_token": run_token, "api_key": api_key, **config}
    return [part for k, v in given.items() if v for part in ("--" + k.replace("_", "-"), v)]


@pytest.fixture(params=["http", "stdio"])
def connect(request, live):
    """``connect(**credentials)``: an SDK client over each transport, as configured."""

    def over_http(**credentials: str):
        return http_client(live.mcp_url, headers_for(**credentials))

    def over_stdio(**credentials: str):
        return stdio_client(*options_for(**credentials))

    return over_http if request.param == "http" else over_stdio
