"""The run's tools over MCP are REST's: listed, called, refused and audited alike."""

from __future__ import annotations

import json

import pytest
from mcp.shared.exceptions import MCPError

from facts.models import Fact
from memoryhub.models import AuditEvent
from tests.mcp.conftest import (
    FILE,
    MARKS,
    headers_for,
    http_client,
    new_run,
    options_for,
    refused,
    run_async,
    stdio_client,
    unique,
)

pytestmark = MARKS


async def _tools(connect, **credentials) -> dict:
    async with connect(**credentials) as client:
        return {tool.name: tool for tool in (await client.list_tools()).tools}


def test_the_tools_are_the_runs_rest_tools(live, connect):
    run = live.home.run
    tools = run_async(_tools, connect, run_token=run["token"])
    facts_tools = live.call(
        "GET",
        "/v0/memory/tools",
        "",
        headers={"x-agentos-run-token": run["token"]},
        params={"paths": "users/{user}/"},
    )["definitions"]
    expected = [d["function"] for d in facts_tools + run["tools"]]
    assert [t.name for t in tools.values()] == [f["name"] for f in expected]
    for function in expected:
        tool = tools[function["name"]]
        assert tool.description == function["description"]
        assert tool.input_schema == function["parameters"]


def test_no_tool_takes_a_user_agent_or_workspace(live):
    home = live.home
    configurations = [
        {"run_token": home.run["token"]},
        {"run_token": new_run(live, home, None)["token"]},  # no person: the whole memory
        {"run_token": home.run["token"], "paths": "users/{user}/,notes/"},  # takes a path
        {"api_key": home.keys["run"], "agent": home.agent_id, "end_user": "dora"},
    ]
    for credentials in configurations:
        tools = run_async(_tools, _http(live), **credentials)
        assert tools
        for tool in tools.values():
            for argument in tool.input_schema["properties"]:
                assert not any(word in argument.lower() for word in ("user", "agent", "workspace"))


def _http(live):
    return lambda **credentials: http_client(live.mcp_url, headers_for(**credentials))


def test_a_saved_fact_is_found_and_written_by_the_model(live, connect):
    run = new_run(live, live.home, person := unique("erin"))

    async def body():
        async with connect(run_token=run["token"]) as client:
            saved = await client.call_tool("save_memory", {"text": "Erin drinks green tea"})
            found = await client.call_tool("search_memory", {"query": "green"})
            return saved, found

    saved, found = run_async(body)
    assert not saved.is_error
    fact_id = json.loads(saved.content[0].text)["saved"]
    assert [f["text"] for f in json.loads(found.content[0].text)["facts"]] == [
        "Erin drinks green tea"
    ]
    fact = live.call(
        "GET", f"/v0/memory/facts/{fact_id}", "", headers={"x-agentos-run-token": run["token"]}
    )
    assert fact["path"] == f"users/{person}/"
    assert fact["source"] == {"run_id": run["id"], "written_by": "model"}
    event = AuditEvent.objects.get(action="fact.write", object_id=fact_id)
    assert (event.principal_type, event.principal_id) == ("run", run["id"])


def test_a_repeated_call_id_saves_once(live):
    run = new_run(live, live.home, person := unique("finn"))
    once = {"memoryhub/tool_call_id": "call_1"}

    async def body():
        async with _http(live)(run_token=run["token"]) as client:
            save = {"text": "Finn is left-handed"}
            first = await client.call_tool("save_memory", save, meta=once)
            again = await client.call_tool("save_memory", save, meta=once)
            other = await client.call_tool("save_memory", {"text": "Finn is tall"}, meta=once)
            return first, again, other

    first, again, other = run_async(body)
    assert again.content[0].text == first.content[0].text and not again.is_error
    assert other.is_error and other.content[0].text.startswith("error: tool_call_reused")
    assert Fact.objects.filter(path=f"users/{person}/").count() == 1


def test_a_stale_file_edit_fails_with_the_current_file(live, connect):
    run = new_run(live, live.home, unique("gus"))
    memory = f"/api/v1/memories/{live.home.memory_id}/files/{FILE}"

    async def body():
        async with connect(run_token=run["token"]) as client:
            seen = await client.call_tool("memory_file_view", {"path": FILE})
            # Someone else changes the file after this conversation read it.
            current = live.rest("GET", memory, live.home.keys["write"])
            changed = live.rest(
                "PUT",
                memory,
                live.home.keys["write"],
                json={"content": "Answer in English, briefly.\n"},
                headers={"If-Match": current.headers["ETag"]},
            )
            assert changed.status_code == 200, changed.text
            edit = await client.call_tool(
                "memory_file_str_replace",
                {"path": FILE, "old_str": "English", "new_str": "French"},
            )
            return seen, edit

    seen, edit = run_async(body)
    try:
        assert "Answer in English." in seen.content[0].text
        assert edit.is_error
        assert "Answer in English, briefly." in edit.content[0].text
        assert live.call("GET", memory, live.home.keys["read"])["content"] == (
            "Answer in English, briefly.\n"
        )
    finally:  # the next tests read the seeded content
        etag = live.rest("GET", memory, live.home.keys["write"]).headers["ETag"]
        restore = {"content": "Answer in English.\n"}
        live.call("PUT", memory, live.home.keys["write"], json=restore, headers={"If-Match": etag})


def test_another_persons_folder_is_refused(live, connect):
    bob = new_run(live, live.home, "bob")
    bobs = live.call(
        "POST",
        "/v0/memory/facts",
        "",
        headers={"x-agentos-run-token": bob["token"]},
        json={"path": "users/{user}/", "text": "Bob's door code is 4321"},
    )
    alice = live.home.run["token"]

    async def body():
        async with connect(run_token=alice) as client:
            search = await client.call_tool("search_memory", {"query": "door code"})
            forget = await client.call_tool("forget_memory", {"id": bobs["id"]})
            aimed = await client.call_tool("save_memory", {"text": "x", "path": "users/bob/"})
        return search, forget, aimed

    search, forget, aimed = run_async(body)
    assert "other_user" in run_async(refused, connect, run_token=alice, paths="users/bob/")
    assert json.loads(search.content[0].text) == {"facts": []}
    assert forget.is_error and "not_found" in forget.content[0].text
    assert aimed.is_error and "unknown arguments: path" in aimed.content[0].text
    assert (
        live.call(
            "GET",
            f"/v0/memory/facts/{bobs['id']}",
            "",
            headers={"x-agentos-run-token": bob["token"]},
        )["text"]
        == "Bob's door code is 4321"
    )


def test_a_run_token_of_another_workspace_sees_nothing_here(live, connect):
    home, other = live.home, live.other
    live.call(
        "POST",
        "/v0/memory/facts",
        "",
        headers={"x-agentos-run-token": home.run["token"]},
        json={"path": "shared/", "text": "The office wifi is HomeNet"},
    )

    async def body():
        async with connect(run_token=other.run["token"]) as client:
            search = await client.call_tool("search_memory", {"query": "wifi"})
            view = await client.call_tool("memory_file_view", {"path": FILE})
            resources = [str(r.uri) for r in (await client.list_resources()).resources]
            with pytest.raises(MCPError):
                await client.read_resource(f"memoryhub://files/{home.memory_id}/{FILE}")
            return search, view, resources

    search, view, resources = run_async(body)
    assert json.loads(search.content[0].text) == {"facts": []}
    assert "Turkish" in view.content[0].text and "English" not in view.content[0].text
    assert resources == ["memoryhub://run/context", f"memoryhub://files/prefs/{FILE}"]


def test_bad_credentials_get_no_tools(live):
    """Over stdio the first request is an MCP error saying why; over HTTP ``initialize`` is
    refused with REST's status and envelope (test_session_binding.py)."""

    def connect(**credentials: str):
        return stdio_client(*options_for(**credentials))

    assert "invalid run token" in run_async(refused, connect, run_token="rt_nope")  # noqa: S106
    read_key = {"api_key": live.home.keys["read"], "agent": live.home.agent_id}
    assert "run permission" in run_async(refused, connect, **read_key)
    no_agent = {"api_key": live.home.keys["run"]}  # the agent comes from the configuration
    assert "needs the agent" in run_async(refused, connect, **no_agent)


def test_a_read_only_mount_and_disabled_tools_are_kept(live):
    def agent(access: str, disabled: list[str]) -> dict:
        mounts = [{"name": "prefs", "memory_id": live.home.memory_id, "access": access}]
        body = {"name": "Bot", "memory_mounts": mounts, "toolset": {"disabled_tools": disabled}}
        made = live.call("POST", "/api/v1/agents", live.home.keys["write"], json=body)
        return {"api_key": live.home.keys["run"], "agent": made["id"], "end_user": unique("ivo")}

    async def body(config: dict, create: bool) -> tuple:
        async with _http(live)(**config) as client:
            tools = [tool.name for tool in (await client.list_tools()).tools]
            resources = [str(r.uri) for r in (await client.list_resources()).resources]
            new_file = {"path": "x.md", "file_text": "x"}
            made = await client.call_tool("memory_file_create", new_file) if create else None
            return tools, resources, made

    facts = ["search_memory", "save_memory", "forget_memory"]
    tools, resources, create = run_async(body, agent("read", []), True)
    assert tools == [*facts, "memory_file_view"]
    assert create.is_error and create.content[0].text.startswith("error: forbidden")
    assert resources == ["memoryhub://run/context", f"memoryhub://files/prefs/{FILE}"]

    tools, resources, _ = run_async(body, agent("write", ["file_view", "file_delete"]), False)
    assert "memory_file_view" not in tools and "memory_file_delete" not in tools
    assert "memory_file_create" in tools
    assert resources == ["memoryhub://run/context"]  # no viewing, so no files to read
