"""What an MCP session reads and which run it is: the context and file resources of a run
token's run, and the run an API key's session opens for the configured agent and person."""

from __future__ import annotations

import json
import time

import anyio
import httpx2
from django.db import connection
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from facts.models import Fact
from memoryhub.models import AuditEvent, Run
from tests.mcp.conftest import (
    FILE,
    MARKS,
    TIMEOUT,
    headers_for,
    http_client,
    new_run,
    refused,
    run_async,
    stdio_client,
    unique,
)

pytestmark = MARKS


def test_the_context_resource_is_what_the_run_was_given(live, connect):
    run = live.home.run

    async def body():
        async with connect(run_token=run["token"]) as client:
            return await client.read_resource("memoryhub://run/context")

    read = run_async(body)
    assert run["context"] and "prefs/language.md" in run["context"]
    assert [c.text for c in read.contents] == [run["context"]]


def test_the_mounted_files_are_resources(live, connect):
    async def body():
        async with connect(run_token=live.home.run["token"]) as client:
            listed = {str(r.uri): r for r in (await client.list_resources()).resources}
            read = await client.read_resource(f"memoryhub://files/prefs/{FILE}")
            return listed, read

    listed, read = run_async(body)
    assert set(listed) == {"memoryhub://run/context", f"memoryhub://files/prefs/{FILE}"}
    assert read.contents[0].text == "Answer in English.\n"


def _runs_of(person: str) -> list[Run]:
    return list(Run.objects.filter(end_user__external_id=person).select_related("thread"))


async def _statuses(person: str) -> list[str]:
    """The person's runs' statuses, read from inside a client's session."""

    def read() -> list[str]:
        try:
            return [run.status for run in _runs_of(person)]
        finally:
            connection.close()  # this worker thread's own connection

    return await anyio.to_thread.run_sync(read)


def _eventually_ended(person: str) -> Run:
    """The session's run once the server has ended it (its teardown follows the DELETE)."""
    deadline = time.monotonic() + TIMEOUT
    while True:
        (run,) = _runs_of(person)
        if run.status == "ended" or time.monotonic() > deadline:
            return run
        time.sleep(0.1)


def test_an_api_key_session_has_a_run_of_its_own_until_it_ends(live, connect):
    person = unique("dora")
    config = {"api_key": live.home.keys["run"], "agent": live.home.agent_id, "end_user": person}

    async def body():
        async with connect(**config) as client:
            tools = [tool.name for tool in (await client.list_tools()).tools]
            saved = await client.call_tool("save_memory", {"text": "Dora prefers tea"})
            view = await client.call_tool("memory_file_view", {"path": FILE})
            running = await _statuses(person)
            return tools, saved, view, running

    tools, saved, view, running = run_async(body)
    assert "memory_file_view" in tools  # the agent's default mount joined the new thread
    assert "Answer in English." in view.content[0].text
    assert running == ["running"]
    run = _eventually_ended(person)
    assert run.status == "ended"  # the session ended, and its run with it
    assert run.thread.agent_id == live.home.agent_id
    fact = Fact.objects.get(pk=int(json.loads(saved.content[0].text)["saved"].removeprefix("m_")))
    assert fact.path == f"users/{person}/"
    audited = AuditEvent.objects.filter(object_id__in=[run.id, run.thread_id])
    assert sorted(audited.values_list("action", "principal_type")) == [
        ("run.accept", "api_key"),  # as POST /api/v1/threads/{id}/runs with the key
        ("run.end", "run"),  # as POST /api/v1/runs/{id}/end with its token
        ("thread.create", "api_key"),
    ]


def test_an_abandoned_session_idles_out_and_ends_its_run(live, quick_idle_url):
    person = unique("ivy")
    config = {"api_key": live.home.keys["run"], "agent": live.home.agent_id, "end_user": person}

    async def body():
        # A client that goes away without ending its session (no DELETE).
        headers = headers_for(**config)
        async with http_client(quick_idle_url, headers, terminate_on_close=False) as client:
            await client.list_tools()
            return await _statuses(person)

    assert run_async(body) == ["running"]
    assert _eventually_ended(person).status == "ended"


def test_a_desktop_configuration_over_stdio(live):
    """Claude Desktop's configuration in the README: the key in env, agent and person in args."""
    person = unique("ada")

    async def body():
        options = ("--agent", live.home.agent_id, "--end-user", person)
        async with stdio_client(*options, MEMORYHUB_API_KEY=live.home.keys["run"]) as client:
            saved = await client.call_tool("save_memory", {"text": "Ada writes in Markdown"})
            found = await client.call_tool("search_memory", {"query": "markdown"})
            return saved, found

    saved, found = run_async(body)
    assert not saved.is_error
    assert [f["text"] for f in json.loads(found.content[0].text)["facts"]] == [
        "Ada writes in Markdown"
    ]
    assert _eventually_ended(person).status == "ended"  # the pipe closed, the run ended


def test_an_api_key_needs_a_session(live):
    """A 2026-07-28 client sends each request alone: an API key's run could not outlive it."""
    config = {"api_key": live.home.keys["run"], "agent": live.home.agent_id}

    def pinned(**credentials):
        http = httpx2.AsyncClient(headers=headers_for(**credentials), timeout=TIMEOUT)
        transport = streamable_http_client(live.mcp_url, http_client=http)
        return Client(transport, mode="2026-07-28", read_timeout_seconds=TIMEOUT)

    assert "initialize handshake" in run_async(refused, pinned, **config)


def test_a_run_token_session_leaves_its_run_running(live, connect):
    run = new_run(live, live.home, person := unique("eve"))

    async def body():
        async with connect(run_token=run["token"]) as client:
            await client.call_tool("search_memory", {"query": ""})

    run_async(body)
    assert [r.status for r in _runs_of(person)] == ["running"]  # its runtime ends it


def test_an_ended_runs_token_can_no_longer_write(live):
    run = new_run(live, live.home, unique("uma"))
    live.call("POST", f"/api/v1/runs/{run['id']}/end", live.home.keys["run"])

    async def body():
        headers = headers_for(run_token=run["token"])
        async with http_client(live.mcp_url, headers) as client:
            return await client.call_tool("save_memory", {"text": "too late"})

    saved = run_async(body)
    assert saved.is_error and saved.content[0].text.startswith("error: run_ended")
