"""The Python client against a live memoryhub on a real socket (pytest-django live_server)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from django.conf import settings

from memoryhub.client import (
    Conflict,
    Forbidden,
    InvalidRequest,
    MemoryHub,
    NotFound,
    PreconditionFailed,
    Unauthenticated,
)
from memoryhub.services.workspaces import create_api_key, create_workspace

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def hub(live_server) -> MemoryHub:
    workspace = create_workspace("Client")
    return MemoryHub(live_server.url, create_api_key(workspace, "write")[1])


def test_the_runtime_loop(hub):
    agent = hub.create_agent("Support bot")
    memory = hub.create_memory("Team", always_load=["prefs.md"])
    hub.put_file(memory["id"], "prefs.md", "units: metric\n")
    thread = hub.create_thread(
        agent["id"],
        end_user="alice",
        memories=[{"name": "team", "memory_id": memory["id"], "access": "write"}],
    )
    run = hub.accept_run(thread["id"], input="which units?")
    assert "units: metric" in run.context
    assert "memory_file_str_replace" in [t["function"]["name"] for t in run.tools]
    message = run.call_tool(
        {
            "id": "call_1",
            "type": "function",
            "function": {
                "name": "memory_file_str_replace",
                "arguments": json.dumps(
                    {"path": "prefs.md", "old_str": "metric", "new_str": "imperial"}
                ),
            },
        }
    )
    assert message["role"] == "tool" and message["tool_call_id"] == "call_1"
    assert hub.get_file(memory["id"], "prefs.md")["content"] == "units: imperial\n"
    run.end()


def test_a_runs_facts(hub):
    agent = hub.create_agent("Notes")
    run = hub.accept_run(hub.create_thread(agent["id"], end_user="bob")["id"], input="hi")
    first = run.memory.remember("users/{user}/", "Bob prefers tea", tags=["pref"], key="tea")
    again = run.memory.remember("users/{user}/", "Bob prefers tea", tags=["pref"], key="tea")
    assert again["id"] == first["id"]
    newer = run.memory.remember("users/{user}/", "Bob prefers green tea", replaces=first["id"])
    assert newer["version"] == 2
    assert [f["id"] for f in run.memory.search("TEA")] == [first["id"]]
    assert run.memory.list(tags=["pref"])["facts"][0]["text"] == "Bob prefers green tea"
    assert [v["version"] for v in run.memory.versions(first["id"])] == [2, 1]
    assert "green tea" in run.memory.context("tea", paths=["users/{user}/"])
    assert run.memory.tool_definitions(["users/{user}/"])[0]["type"] == "function"
    run.memory.forget(first["id"])
    with pytest.raises(NotFound):
        run.memory.get(first["id"])
    run.end()
    with pytest.raises(Unauthenticated) as ended:
        run.memory.remember("notes/", "too late")
    assert ended.value.reason == "run_ended"


def test_refusals_raise_by_kind(hub, live_server):
    agent = hub.create_agent("A")
    memory = hub.create_memory("M")
    first = hub.put_file(memory["id"], "a.md", "one")
    hub.put_file(memory["id"], "a.md", "two", etag=first["etag"])
    with pytest.raises(PreconditionFailed) as stale:
        hub.put_file(memory["id"], "a.md", "three", etag=first["etag"])
    assert stale.value.current["content"] == "two"
    with pytest.raises(InvalidRequest) as invalid:
        hub.create_agent("")
    assert invalid.value.code == "invalid_argument"
    run = hub.accept_run(hub.create_thread(agent["id"])["id"])
    with pytest.raises(Conflict) as no_user:
        run.memory.remember("users/{user}/", "nobody's")
    assert no_user.value.reason == "no_user"
    workspace = create_workspace("Reader")
    reader = MemoryHub(live_server.url, create_api_key(workspace, "read")[1])
    with pytest.raises(Forbidden):
        reader.create_agent("nope")
    with pytest.raises(Unauthenticated):
        MemoryHub(live_server.url, "mh_wrong").create_agent("nope")


def test_the_client_imports_nothing_of_django():
    code = (
        "import sys, memoryhub.client; "
        "assert not [m for m in sys.modules if m.split('.')[0] in ('django', 'celery')]"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=settings.BASE_DIR, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
