"""A run's tool call may use only the arguments of the definition the run was offered:
``memory`` exists only when several memories of the tool's kind are mounted."""

from __future__ import annotations

import pytest

from memoryhub.conf import DEFAULTS
from support.fakes.mem0 import OssServer
from tests import factories
from tests.conftest import Api

OSS_KEY = "m0sk_user"
UNKNOWN_MEMORY = "error: invalid_argument: unknown arguments: memory"


@pytest.fixture
def mem0_server():
    server = OssServer(api_key=OSS_KEY, admin_key="admin-key").start()
    yield server
    server.stop()


@pytest.fixture
def provider(tenant, mem0_server, settings):
    settings.MEMORYHUB_SETTINGS = {
        **DEFAULTS,
        "outbound.allow_private": True,
        "outbound.allow_http": True,
    }
    return factories.create_provider(
        tenant.owner,
        {
            "type": "mem0_oss",
            "name": "mem0",
            "config": {"base_url": mem0_server.url},
            "credential": {"api_key": OSS_KEY},
        },
    )


def memory(owner, name: str, provider=None) -> str:
    body = {"name": name, "type": "postgres"}
    if provider is not None:
        body = {"name": name, "type": "mem0_oss", "provider_id": provider.id}
    response = owner.post("/api/v1/memories", body)
    assert response.status_code == 201, response.content
    return response.json()["id"]


def run_with(runner, agent, mounts: dict[str, str], access: str = "write") -> dict:
    """A running run of a thread mounting ``{name: memory_id}`` with ``access``."""
    memories = [{"name": n, "memory_id": m, "access": access} for n, m in mounts.items()]
    thread = runner.post("/api/v1/threads", {"agent_id": agent.id, "memories": memories})
    assert thread.status_code == 201, thread.content
    run = runner.post(f"/api/v1/threads/{thread.json()['id']}/runs", {"input": "hi"})
    assert run.status_code == 201, run.content
    return run.json()


def call(run: dict, name: str, arguments: dict, call_id: str = "c1") -> str:
    response = Api(run_token=run["token"]).post(
        f"/api/v1/runs/{run['id']}/tool-calls",
        {"id": call_id, "name": name, "arguments": arguments},
    )
    assert response.status_code == 200, response.content
    return response.json()["content"]


def parameters(run: dict, name: str) -> dict:
    return next(t for t in run["tools"] if t["function"]["name"] == name)["function"]["parameters"]


def test_one_file_memory_refuses_a_memory_argument(owner, runner, agent):
    team = memory(owner, "Team")
    run = run_with(runner, agent, {"team": team})
    assert "memory" not in parameters(run, "memory_file_create")["properties"]
    answer = call(run, "memory_file_create", {"memory": "team", "path": "a.md", "file_text": "x"})
    assert answer == UNKNOWN_MEMORY
    assert owner.get(f"/api/v1/memories/{team}/files/a.md").status_code == 404
    view = call(run, "memory_file_view", {"memory": "team", "path": ""}, "c2")
    assert view == UNKNOWN_MEMORY


def test_one_record_memory_refuses_a_memory_argument(owner, runner, agent, provider, mem0_server):
    facts = memory(owner, "Facts", provider)
    run = run_with(runner, agent, {"facts": facts})
    assert "memory" not in parameters(run, "memory_record_add")["properties"]
    sent = len(mem0_server.requests)
    answer = call(run, "memory_record_add", {"memory": "facts", "text": "Lives in Izmir"})
    assert answer == UNKNOWN_MEMORY
    assert len(mem0_server.requests) == sent  # the backend was never asked
    assert mem0_server.records == {}


def test_several_memories_still_take_a_memory_argument(owner, runner, agent, provider):
    team, mine = memory(owner, "Team"), memory(owner, "Mine")
    facts, more = memory(owner, "Facts", provider), memory(owner, "More", provider)
    run = run_with(runner, agent, {"team": team, "mine": mine, "facts": facts, "more": more})
    created = call(run, "memory_file_create", {"memory": "mine", "path": "a.md", "file_text": "x"})
    assert not created.startswith("error"), created
    assert owner.get(f"/api/v1/memories/{mine}/files/a.md").status_code == 200
    added = call(run, "memory_record_add", {"memory": "more", "text": "Likes tea"}, "c2")
    assert not added.startswith("error"), added
    listed = owner.get(f"/api/v1/memories/{more}/records").json()["results"]
    assert [r["text"] for r in listed] == ["Likes tea"]
    undeclared = call(run, "memory_file_view", {"memory": "team", "path": "", "mode": "x"}, "c3")
    assert undeclared == "error: invalid_argument: unknown arguments: mode"


@pytest.mark.parametrize("memory_argument", [{}, {"memory": "nowhere"}])
def test_a_writing_tool_over_read_only_mounts_names_them(
    owner, runner, agent, provider, memory_argument
):
    """With several read-only mounts the writing tools are not offered; a call to one that
    names no mount is a tool error listing the mounts (it was a 500), and nothing is written."""
    team, mine = memory(owner, "Team"), memory(owner, "Mine")
    facts, more = memory(owner, "Facts", provider), memory(owner, "More", provider)
    mounts = {"team": team, "mine": mine, "facts": facts, "more": more}
    run = run_with(runner, agent, mounts, access="read")
    created = call(run, "memory_file_create", {**memory_argument, "path": "a.md", "file_text": "x"})
    assert created == "error: invalid_argument: memory must be one of: team, mine"
    added = call(run, "memory_record_add", {**memory_argument, "text": "Likes tea"}, "c2")
    assert added == "error: invalid_argument: memory must be one of: facts, more"
    # Nothing was started: the same id with the same arguments answers the same again.
    again = call(run, "memory_record_add", {**memory_argument, "text": "Likes tea"}, "c2")
    assert again == added
    assert owner.get(f"/api/v1/memories/{team}/files/a.md").status_code == 404


@pytest.mark.parametrize("name", ["memory_file_nope", "file_view", "memory_record"])
def test_a_name_that_is_no_memory_tool_is_a_tool_error_and_writes_nothing(
    owner, runner, agent, name
):
    team = memory(owner, "Team")
    run = run_with(runner, agent, {"team": team})
    answer = call(run, name, {"path": "a.md", "file_text": "x"})
    assert answer == f"error: invalid_argument: {name!r} is not a memory tool"
    assert owner.get(f"/api/v1/memories/{team}/files").json()["results"] == []
    # Not recorded: the same id may name a tool afterwards.
    created = call(run, "memory_file_create", {"path": "a.md", "file_text": "x"})
    assert created.startswith("File created"), created
