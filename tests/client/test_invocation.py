"""The run object: one tool loop for mounted memories and facts, and a run rebuilt from its
token."""

from __future__ import annotations

import json

import pytest

from memoryhub.client import Invocation, InvocationEnded, MemoryHub
from tests.client.conftest import tool_call

pytestmark = pytest.mark.django_db(transaction=True)

FACT_TOOLS = ["search_memory", "save_memory", "forget_memory"]


@pytest.fixture
def team(hub) -> dict:
    memory = hub.create_memory("Team", always_load=["prefs.md"])
    hub.put_file(memory["id"], "prefs.md", "units: metric\n")
    return memory


def mounted(memory: dict, access: str = "write") -> list[dict]:
    return [{"name": "team", "memory_id": memory["id"], "access": access}]


def names(definitions: list[dict]) -> list[str]:
    return [d["function"]["name"] for d in definitions]


def test_a_run_has_its_context_mounted_tools_and_input(start_run, team):
    inv = start_run("which units?", memories=mounted(team))
    assert "units: metric" in inv.context
    assert inv.input == "which units?" and inv.user == "alice"
    assert "memory_file_str_replace" in names(inv.tools.definitions)
    assert [m["name"] for m in inv.mounts] == ["team"]


def test_one_loop_runs_mounted_and_fact_tools_each_at_its_endpoint(start_run, hub, team):
    inv = start_run("hi", memories=mounted(team))
    tools = inv.tools + inv.memory.tools(paths=["users/{user}/", "notes/"])
    assert names(tools.definitions) == names(inv.tools.definitions) + FACT_TOOLS
    save = tools.definitions[-2]["function"]["parameters"]
    assert save["properties"]["path"]["enum"] == ["users/{user}/", "notes/"]

    edit = {"path": "prefs.md", "old_str": "metric", "new_str": "imperial"}
    message = tools.call(tool_call("call_1", "memory_file_str_replace", json.dumps(edit)))
    assert (message["role"], message["tool_call_id"]) == ("tool", "call_1")
    assert hub.get_file(team["id"], "prefs.md")["content"] == "units: imperial\n"

    note = {"text": "Alice likes short answers", "path": "users/{user}/"}
    saved = tools.call(tool_call("call_2", "save_memory", json.dumps(note)))
    assert json.loads(saved["content"])["saved"] == inv.memory.list()[0].id


def test_refusals_come_back_as_text_for_the_model(start_run, team):
    inv = start_run("hi", memories=mounted(team, access="read"))
    tools = inv.tools + inv.memory.tools(paths=["notes/"])
    create = {"path": "new.md", "file_text": "x"}
    refused = tools.call(tool_call("call_1", "memory_file_create", json.dumps(create)))
    assert refused["tool_call_id"] == "call_1"
    assert refused["content"].startswith("error: ")  # a read-only mount offers no writes
    extra = tools.call(tool_call("call_2", "save_memory", '{"text": "x", "path": "notes/"}'))
    assert extra["content"].startswith("error: invalid_argument: unknown arguments")
    unknown = tools.call(tool_call("call_3", "launch_rockets", "{}"))
    assert unknown["content"] == "error: not_found: no tool named 'launch_rockets' is offered"
    tools.call(tool_call("call_4", "search_memory", '{"query": "a"}'))
    reused = tools.call(tool_call("call_4", "search_memory", '{"query": "b"}'))
    assert reused["content"].startswith("error: tool_call_reused: ")
    assert inv.memory.list() == []


def test_tool_calls_after_the_run_ended_raise(start_run, team):
    inv = start_run("hi", memories=mounted(team))
    facts, files = inv.memory.tools(paths=["notes/"]), inv.tools
    inv.end()
    with pytest.raises(InvocationEnded):
        facts.call(tool_call("call_1", "save_memory", '{"text": "too late"}'))
    edit = {"path": "prefs.md", "old_str": "metric", "new_str": "imperial"}
    with pytest.raises(InvocationEnded):
        files.call(tool_call("call_2", "memory_file_str_replace", json.dumps(edit)))


def test_the_same_run_from_its_address_and_token(live_server, api_key, team):
    hub = MemoryHub(live_server.url, api_key)
    thread = hub.create_thread(
        hub.create_agent("Bot")["id"], end_user="alice", memories=mounted(team)
    )
    # The runtime that accepts the run hands only the token on.
    accepted = hub.accept_run(thread["id"], input={"message": "hi"})
    inv = Invocation.from_token(live_server.url, accepted.token)
    assert (inv.id, inv.user, inv.input, inv.context) == (
        accepted.id,
        "alice",
        {"message": "hi"},
        accepted.context,
    )
    assert inv.tools.definitions == accepted.tools.definitions
    inv.memory.at("users/{user}/").remember("from the token")
    assert [f.text for f in accepted.memory.list()] == ["from the token"]
    inv.end()
    with pytest.raises(InvocationEnded):
        accepted.memory.at("notes/").remember("ended by the other holder")
    for client in (hub, accepted, inv):
        client.close()


def test_mount_and_erase_from_the_workspace(hub, team):
    thread = hub.create_thread(hub.create_agent("Bot")["id"], end_user="carol")
    hub.mount(thread["id"], "team", team["id"], etag=thread["etag"], access="write")
    inv = hub.accept_run(thread["id"], input="hi")
    assert "memory_file_create" in names(inv.tools.definitions)
    inv.memory.at("users/{user}/").remember("Carol's private note")
    hub.erase_end_user("carol")
    with pytest.raises(InvocationEnded):  # erasing a person ends their runs
        inv.memory.at("notes/").remember("after the erasure")
    assert inv.memory.list() == []
    inv.close()
