"""The runtime loop end to end: mount memories, accept runs with their context and tools,
forward the model's tool calls. File memories live in PostgreSQL; record memories on the
local fake mem0 server (support/fakes)."""

from __future__ import annotations

import json
import time

import pytest

from memoryhub.conf import DEFAULTS
from memoryhub.models import MemoryProvider
from support.fakes.mem0 import OssServer
from tests import factories
from tests.conftest import Api, error_of
from threads.models import ToolCall

OSS_KEY, OSS_ADMIN = "m0sk_user", "admin-key"
LOOPBACK = {**DEFAULTS, "outbound.allow_private": True, "outbound.allow_http": True}


def file_memory(owner, name="Team", **extra) -> str:
    response = owner.post("/api/v1/memories", {"name": name, "type": "postgres", **extra})
    assert response.status_code == 201, response.content
    return response.json()["id"]


def put_file(client, memory_id, path, content, etag=None) -> dict:
    headers = {"HTTP_IF_MATCH": etag} if etag else {}
    response = client.put(
        f"/api/v1/memories/{memory_id}/files/{path}", {"content": content}, **headers
    )
    assert response.status_code in (200, 201), response.content
    return response.json()


def new_thread(runner, agent, mounts) -> str:
    response = runner.post("/api/v1/threads", {"agent_id": agent.id, "memories": mounts})
    assert response.status_code == 201, response.content
    return response.json()["id"]


def accept(runner, thread_id, **body) -> dict:
    response = runner.post(f"/api/v1/threads/{thread_id}/runs", {"input": "hello", **body})
    assert response.status_code == 201, response.content
    return response.json()


def call(run, name, arguments, call_id="call_1", client=None) -> str:
    client = client or Api(run_token=run["token"])
    response = client.post(
        f"/api/v1/runs/{run['id']}/tool-calls",
        {"id": call_id, "name": name, "arguments": json.dumps(arguments)},
    )
    assert response.status_code == 200, response.content
    message = response.json()
    assert message["role"] == "tool" and message["tool_call_id"] == call_id
    return message["content"]


def tool_names(run) -> list[str]:
    return [t["function"]["name"] for t in run["tools"]]


def test_two_conversations_share_a_file_memory(owner, runner, agent):
    memory_id = file_memory(owner, always_load=["prefs.md"])
    put_file(owner, memory_id, "prefs.md", "language: English\n")
    put_file(owner, memory_id, "notes.md", "met on Monday\n")
    mounts = [{"name": "team", "memory_id": memory_id, "access": "write"}]
    thread_a, thread_b = new_thread(runner, agent, mounts), new_thread(runner, agent, mounts)

    run_a, run_b = accept(runner, thread_a), accept(runner, thread_b)
    for run in (run_a, run_b):
        assert "language: English" in run["context"] and "notes.md" in run["context"]
        assert "memory_file_str_replace" in tool_names(run)

    edited = call(
        run_a,
        "memory_file_str_replace",
        {"path": "prefs.md", "old_str": "English", "new_str": "Turkish"},
    )
    assert not edited.startswith("error"), edited

    stale = call(
        run_b,
        "memory_file_str_replace",
        {"path": "prefs.md", "old_str": "English", "new_str": "German"},
    )
    assert stale.startswith("error: precondition_failed") and "Turkish" in stale
    content = owner.get(f"/api/v1/memories/{memory_id}/files/prefs.md").json()["content"]
    assert content == "language: Turkish\n"

    next_b = accept(runner, thread_b)
    assert "language: Turkish" in next_b["context"]
    assert "met on Monday" not in next_b["context"]  # unchanged files are not repeated
    compacted = accept(runner, thread_b, history_compacted=True)
    assert "language: Turkish" in compacted["context"] and "notes.md" in compacted["context"]


def test_a_tool_call_id_runs_once(owner, runner, agent):
    memory_id = file_memory(owner)
    thread = new_thread(
        runner, agent, [{"name": "team", "memory_id": memory_id, "access": "write"}]
    )
    run = accept(runner, thread)
    args = {"path": "todo.md", "file_text": "buy milk\n"}
    first = call(run, "memory_file_create", args, call_id="c1")
    again = call(run, "memory_file_create", args, call_id="c1")
    assert again == first and not first.startswith("error")
    revisions = owner.get(f"/api/v1/memories/{memory_id}/revisions?path=todo.md").json()
    assert len(revisions["results"]) == 1
    other = Api(run_token=run["token"]).post(
        f"/api/v1/runs/{run['id']}/tool-calls",
        {
            "id": "c1",
            "name": "memory_file_create",
            "arguments": {"path": "todo.md", "file_text": "sell milk\n"},
        },
    )
    assert other.status_code == 409
    assert ToolCall.objects.filter(run_id=run["id"]).count() == 1


def test_a_tool_call_whose_first_attempt_died_reports_an_unknown_outcome(owner, runner, agent):
    memory_id = file_memory(owner)
    thread = new_thread(runner, agent, [{"name": "team", "memory_id": memory_id}])
    run = accept(runner, thread)
    ToolCall.objects.create(
        workspace_id=run_id_workspace(run),
        run_id=run["id"],
        call_id="c9",
        name="memory_file_view",
        arguments_digest=_digest("memory_file_view", {"path": "a.md"}),
        status="started",
    )
    answer = call(run, "memory_file_view", {"path": "a.md"}, call_id="c9")
    assert answer.startswith("error: outcome_unknown")


def run_id_workspace(run) -> str:
    from memoryhub.models import Run

    return Run.objects.get(pk=run["id"]).workspace_id


def _digest(name, arguments):
    from threads.services.tool_calls import _digest as digest

    return digest(name, arguments)


def test_read_access_offers_only_reading(owner, runner, agent):
    memory_id = file_memory(owner)
    put_file(owner, memory_id, "a.md", "x\n")
    thread = new_thread(runner, agent, [{"name": "team", "memory_id": memory_id, "access": "read"}])
    run = accept(runner, thread)
    assert tool_names(run) == ["memory_file_view"]
    refused = call(run, "memory_file_delete", {"path": "a.md"})
    assert refused.startswith("error: forbidden")
    assert owner.get(f"/api/v1/memories/{memory_id}/files/a.md").status_code == 200


def test_several_mounts_take_a_memory_argument(owner, runner, agent):
    team, mine = file_memory(owner, "Team"), file_memory(owner, "Mine")
    thread = new_thread(
        runner,
        agent,
        [
            {"name": "team", "memory_id": team, "access": "read"},
            {"name": "mine", "memory_id": mine, "access": "write"},
        ],
    )
    run = accept(runner, thread)
    by_name = {t["function"]["name"]: t["function"]["parameters"] for t in run["tools"]}
    assert by_name["memory_file_view"]["properties"]["memory"]["enum"] == ["team", "mine"]
    assert by_name["memory_file_create"]["properties"]["memory"]["enum"] == ["mine"]
    created = call(run, "memory_file_create", {"memory": "mine", "path": "a.md", "file_text": "x"})
    assert not created.startswith("error"), created
    assert call(
        run,
        "memory_file_create",
        {"memory": "team", "path": "b.md", "file_text": "x"},
        call_id="c2",
    ).startswith("error: forbidden")
    assert call(
        run, "memory_file_view", {"memory": "other", "path": "a.md"}, call_id="c3"
    ).startswith("error: invalid_argument")
    assert owner.get(f"/api/v1/memories/{mine}/files/a.md").status_code == 200


def test_disabled_tools_and_the_toolset_switch(owner, runner, tenant):
    from tests.factories import create_agent

    memory_id = file_memory(owner, always_load=["a.md"])
    put_file(owner, memory_id, "a.md", "pinned\n")
    mounts = [{"name": "team", "memory_id": memory_id, "access": "write"}]
    some = create_agent(
        tenant.owner,
        {"name": "Some", "toolset": {"disabled_tools": ["file_delete", "file_rename"]}},
    )
    run = accept(runner, new_thread(runner, some, mounts))
    assert "memory_file_delete" not in tool_names(run)
    assert "memory_file_view" in tool_names(run)
    assert call(run, "memory_file_delete", {"path": "a.md"}).startswith("error: forbidden")
    off = create_agent(tenant.owner, {"name": "Off", "toolset": {"enabled": False}})
    run = accept(runner, new_thread(runner, off, mounts))
    assert run["tools"] == [] and "pinned" in run["context"]


def test_a_deleted_memory_answers_memory_deleted(owner, runner, agent):
    memory_id = file_memory(owner)
    thread = new_thread(
        runner, agent, [{"name": "team", "memory_id": memory_id, "access": "write"}]
    )
    run = accept(runner, thread)
    assert owner.delete(f"/api/v1/memories/{memory_id}", HTTP_IF_MATCH="*").status_code == 204
    answer = call(run, "memory_file_create", {"path": "a.md", "file_text": "x"})
    assert answer.startswith("error: memory_deleted")


def test_an_ended_run_can_no_longer_call_tools(owner, runner, agent):
    memory_id = file_memory(owner)
    run = accept(runner, new_thread(runner, agent, [{"name": "t", "memory_id": memory_id}]))
    Api(run_token=run["token"]).post(f"/api/v1/runs/{run['id']}/end")
    response = Api(run_token=run["token"]).post(
        f"/api/v1/runs/{run['id']}/tool-calls",
        {"id": "c1", "name": "memory_file_view", "arguments": {"path": "a.md"}},
    )
    assert response.status_code == 401


def test_a_key_without_run_can_read_but_not_write(owner, runner, reader, agent):
    memory_id = file_memory(owner)
    put_file(owner, memory_id, "a.md", "hello\n")
    run = accept(
        runner,
        new_thread(runner, agent, [{"name": "t", "memory_id": memory_id, "access": "write"}]),
    )
    assert "hello" in call(run, "memory_file_view", {"path": "a.md"}, client=reader)
    assert call(
        run, "memory_file_delete", {"path": "a.md"}, call_id="c2", client=reader
    ).startswith("error: forbidden")


def test_tool_call_bodies_are_validated(owner, runner, agent):
    memory_id = file_memory(owner)
    run = accept(runner, new_thread(runner, agent, [{"name": "t", "memory_id": memory_id}]))
    client = Api(run_token=run["token"])
    path = f"/api/v1/runs/{run['id']}/tool-calls"
    for bad in (
        {"name": "memory_file_view"},
        {"id": "", "name": "x"},
        {"id": "c", "name": 3},
        {"id": "c", "name": "memory_file_view", "arguments": "{"},
        {"id": "c", "name": "memory_file_view", "arguments": [1]},
    ):
        response = client.post(path, bad)
        assert response.status_code == 422, (bad, response.content)
        assert error_of(response)["code"] == "invalid_argument"
    unknown = client.post(path, {"id": "c", "name": "rm_rf", "arguments": {}})
    assert unknown.json()["content"].startswith("error: invalid_argument")
    openai_shape = client.post(
        path,
        {
            "id": "c5",
            "type": "function",
            "function": {
                "name": "memory_file_view",
                "arguments": json.dumps({"path": "nothing.md"}),
            },
        },
    )
    assert openai_shape.status_code == 200 and openai_shape.json()["tool_call_id"] == "c5"


@pytest.fixture
def mem0_server():
    server = OssServer(api_key=OSS_KEY, admin_key=OSS_ADMIN).start()
    yield server
    server.stop()


@pytest.fixture
def record_provider(tenant, mem0_server, settings):
    settings.MEMORYHUB_SETTINGS = LOOPBACK
    return factories.create_provider(
        tenant.owner,
        {
            "type": "mem0_oss",
            "name": "mem0",
            "config": {"base_url": mem0_server.url},
            "credential": {"api_key": OSS_KEY, "admin_api_key": OSS_ADMIN},
        },
    )


def record_memory(owner, provider, name="Facts") -> str:
    response = owner.post(
        "/api/v1/memories", {"name": name, "type": "mem0_oss", "provider_id": provider.id}
    )
    assert response.status_code == 201, response.content
    return response.json()["id"]


def test_record_memories_recall_and_take_tool_calls(owner, runner, agent, record_provider):
    memory_id = record_memory(owner, record_provider)
    owner.post(f"/api/v1/memories/{memory_id}/records", {"text": "The user prefers metric units"})
    thread = new_thread(
        runner, agent, [{"name": "facts", "memory_id": memory_id, "access": "write"}]
    )
    run = accept(runner, thread, input="which units does the user prefer?")
    assert "metric units" in run["context"]
    assert set(tool_names(run)) == {
        "memory_record_search",
        "memory_record_list",
        "memory_record_add",
        "memory_record_update",
        "memory_record_delete",
    }
    added = call(run, "memory_record_add", {"text": "The user lives in Izmir"})
    assert not added.startswith("error"), added
    listed = owner.get(f"/api/v1/memories/{memory_id}/records").json()
    texts = [r["text"] for r in listed["results"]]
    assert "The user lives in Izmir" in texts


def test_recall_off_keeps_records_out_of_the_context(owner, runner, agent, record_provider):
    memory_id = record_memory(owner, record_provider)
    owner.post(f"/api/v1/memories/{memory_id}/records", {"text": "The user likes tea"})
    thread = new_thread(runner, agent, [{"name": "facts", "memory_id": memory_id, "recall": False}])
    run = accept(runner, thread, input="does the user like tea?")
    assert "tea" not in run["context"]
    assert "memory_record_search" in tool_names(run)


def test_a_disabled_provider_makes_record_tools_unavailable(owner, runner, agent, record_provider):
    memory_id = record_memory(owner, record_provider)
    run = accept(
        runner,
        new_thread(runner, agent, [{"name": "facts", "memory_id": memory_id, "access": "write"}]),
    )
    MemoryProvider.objects.filter(pk=record_provider.id).update(enabled=False)
    answer = call(run, "memory_record_search", {"query": "units"})
    assert answer.startswith("error: unavailable"), answer


@pytest.mark.django_db(transaction=True)
def test_eight_slow_record_memories_cost_one_recall_wait(tenant, agent, mem0_server, settings):
    settings.MEMORYHUB_SETTINGS = {**LOOPBACK, "memory.recall_seconds": 1.0}
    provider = factories.create_provider(
        tenant.owner,
        {
            "type": "mem0_oss",
            "name": "slow",
            "config": {"base_url": mem0_server.url},
            "credential": {"api_key": OSS_KEY},
        },
    )
    owner, runner = tenant.api("write"), tenant.api("run")
    mounts = [
        {"name": f"m{i}", "memory_id": record_memory(owner, provider, f"M{i}")} for i in range(8)
    ]
    thread = new_thread(runner, agent, mounts)
    mem0_server.delay = 3.0
    started = time.monotonic()
    run = accept(runner, thread, input="anything")
    elapsed = time.monotonic() - started
    mem0_server.delay = 0.0
    assert len(run["mounts"]) == 8 and run["context"] == ""
    # One wait of recall_seconds for all eight, not eight waits (8 s) nor the backend's 3 s.
    assert elapsed < 1.0 + 1.5, elapsed


@pytest.mark.django_db(transaction=True)
def test_the_same_tool_call_sent_in_parallel_writes_once(tenant, agent):
    import threading

    from django.db import connection

    owner, runner = tenant.api("write"), tenant.api("run")
    memory_id = file_memory(owner)
    run = accept(
        runner,
        new_thread(runner, agent, [{"name": "t", "memory_id": memory_id, "access": "write"}]),
    )
    barrier, answers = threading.Barrier(6), []

    def send() -> None:
        try:
            barrier.wait()
            answers.append(
                call(
                    run,
                    "memory_file_create",
                    {"path": "once.md", "file_text": "one\n"},
                    call_id="same",
                )
            )
        finally:
            connection.close()

    workers = [threading.Thread(target=send) for _ in range(6)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert len(answers) == 6 and len(set(answers)) == 1, answers
    assert not answers[0].startswith("error"), answers[0]
    revisions = owner.get(f"/api/v1/memories/{memory_id}/revisions?path=once.md").json()
    assert len(revisions["results"]) == 1


@pytest.mark.parametrize(
    "arguments",
    [
        "[" * 50_000,
        '{"path": "a.md", "file_text": "x\\u0000y"}',
        '{"path": NaN}',
        {"path": "a.md", "file_text": "x\u0000y"},
    ],
)
def test_hostile_tool_arguments_are_422(owner, runner, agent, arguments):
    memory_id = file_memory(owner)
    run = accept(
        runner,
        new_thread(runner, agent, [{"name": "t", "memory_id": memory_id, "access": "write"}]),
    )
    response = Api(run_token=run["token"]).post(
        f"/api/v1/runs/{run['id']}/tool-calls",
        {"id": "c1", "name": "memory_file_create", "arguments": arguments},
    )
    assert response.status_code == 422, response.content
    assert owner.get(f"/api/v1/memories/{memory_id}/files/a.md").status_code == 404
