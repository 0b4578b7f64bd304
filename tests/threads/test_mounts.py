"""Memory mounts on threads: names, access, recall, If-Match, the limit, forks, defaults."""

import threading

import pytest
from django.db import connection
from django.test import override_settings

from memoryhub.conf import DEFAULTS
from memoryhub.models import Memory, Thread
from tests.conftest import Api, error_of
from tests.factories import create_agent
from threads.models import RunMount, ThreadMount


def _mount(client, thread_id, etag, **body):
    return client.post(f"/api/v1/threads/{thread_id}/memories", body, HTTP_IF_MATCH=etag)


def test_mount_and_list_with_the_threads_etag(runner, thread, make_memory):
    memory = make_memory()
    response = _mount(runner, thread.id, '"1"', name="team", memory_id=memory.id, access="write")
    assert response.status_code == 201
    assert response["ETag"] == '"2"'
    listed = runner.get(f"/api/v1/threads/{thread.id}/memories")
    assert listed["ETag"] == '"2"'
    assert listed.json()["memories"] == [
        {"name": "team", "memory_id": memory.id, "kind": "file", "access": "write", "recall": True}
    ]


def test_mount_changes_need_if_match_and_run(runner, reader, thread, make_memory):
    memory = make_memory()
    assert _mount(reader, thread.id, '"1"', name="team", memory_id=memory.id).status_code == 403
    no_etag = runner.post(
        f"/api/v1/threads/{thread.id}/memories", {"name": "team", "memory_id": memory.id}
    )
    assert no_etag.status_code == 428
    stale = _mount(runner, thread.id, '"5"', name="team", memory_id=memory.id)
    assert stale.status_code == 412
    assert not ThreadMount.objects.exists()


@pytest.mark.parametrize(
    "body",
    [
        {"name": "Team"},
        {"name": "1team"},
        {"name": "t" * 64},
        {"name": "te_am"},
        {"access": "admin"},
        {"recall": "no"},
        {"memory_id": "mem_unknown"},
    ],
)
def test_bad_mounts_are_422(runner, thread, make_memory, body):
    memory = make_memory()
    response = _mount(runner, thread.id, '"1"', **{"name": "team", "memory_id": memory.id, **body})
    assert response.status_code == 422, response.content
    assert Thread.objects.get(pk=thread.id).version == 1


def test_a_memory_of_another_workspace_cannot_be_mounted(runner, thread, make_memory, other_tenant):
    theirs = make_memory(workspace=other_tenant.workspace)
    assert _mount(runner, thread.id, '"1"', name="x", memory_id=theirs.id).status_code == 422


def test_each_name_and_each_memory_once(runner, thread, make_memory):
    a, b = make_memory("A"), make_memory("B")
    assert _mount(runner, thread.id, '"1"', name="a", memory_id=a.id).status_code == 201
    same_name = _mount(runner, thread.id, '"2"', name="a", memory_id=b.id)
    assert same_name.status_code == 409 and error_of(same_name)["code"] == "already_exists"
    same_memory = _mount(runner, thread.id, '"2"', name="b", memory_id=a.id)
    assert same_memory.status_code == 409
    assert ThreadMount.objects.count() == 1


def test_patch_changes_access_and_recall_only(runner, thread, make_memory):
    memory = make_memory()
    _mount(runner, thread.id, '"1"', name="team", memory_id=memory.id)
    path = f"/api/v1/threads/{thread.id}/memories/team"
    response = runner.patch(path, {"access": "write", "recall": False}, HTTP_IF_MATCH='"2"')
    assert response.status_code == 200
    assert response.json()["memories"][0] == {
        "name": "team",
        "memory_id": memory.id,
        "kind": "file",
        "access": "write",
        "recall": False,
    }
    assert runner.patch(path, {"memory_id": memory.id}, HTTP_IF_MATCH='"3"').status_code == 422
    assert (
        runner.patch(
            f"/api/v1/threads/{thread.id}/memories/nope", {"access": "read"}, HTTP_IF_MATCH='"3"'
        ).status_code
        == 404
    )


def test_delete_a_mount(runner, thread, make_memory):
    memory = make_memory()
    _mount(runner, thread.id, '"1"', name="team", memory_id=memory.id)
    response = runner.delete(f"/api/v1/threads/{thread.id}/memories/team", HTTP_IF_MATCH='"2"')
    assert response.status_code == 200 and response.json()["memories"] == []
    assert response["ETag"] == '"3"'


@override_settings(MEMORYHUB_SETTINGS={**DEFAULTS, "memory.mounts_per_thread": 2})
def test_the_mount_limit(runner, thread, make_memory):
    memories = [make_memory(f"M{i}") for i in range(3)]
    assert _mount(runner, thread.id, '"1"', name="a", memory_id=memories[0].id).status_code == 201
    assert _mount(runner, thread.id, '"2"', name="b", memory_id=memories[1].id).status_code == 201
    response = _mount(runner, thread.id, '"3"', name="c", memory_id=memories[2].id)
    assert response.status_code == 409
    error = error_of(response)
    assert (error["code"], error["reason"]) == ("conflict", "memory_mount_limit")


@pytest.mark.django_db(transaction=True)
def test_the_mount_limit_holds_under_parallel_requests(tenant):
    agent = create_agent(tenant.owner, {"name": "A"})
    thread = Thread.objects.create(workspace=tenant.workspace, agent=agent)
    memories = [
        Memory.objects.create(
            workspace=tenant.workspace, kind="file", type="postgres", name=f"M{i}"
        )
        for i in range(12)
    ]
    barrier = threading.Barrier(12)
    statuses = []

    def attempt(i: int) -> None:
        client = Api(key=tenant.keys["run"])
        try:
            barrier.wait()
            # If-Match: * so that every request races for a slot, not for the ETag.
            response = _mount(client, thread.id, "*", name=f"m{i}", memory_id=memories[i].id)
            statuses.append(response.status_code)
        finally:
            connection.close()

    workers = [threading.Thread(target=attempt, args=(i,)) for i in range(12)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert sorted(statuses) == [201] * 8 + [409] * 4
    assert ThreadMount.objects.filter(thread=thread).count() == 8


def test_new_threads_and_forks_take_initial_mounts(runner, agent, make_memory):
    a, b = make_memory("A"), make_memory("B")
    created = runner.post(
        "/api/v1/threads",
        {"agent_id": agent.id, "memories": [{"name": "a", "memory_id": a.id, "access": "write"}]},
    )
    assert created.status_code == 201
    thread_id = created.json()["id"]
    fork = runner.post(
        f"/api/v1/threads/{thread_id}/fork", {"memories": [{"name": "b", "memory_id": b.id}]}
    ).json()
    names = [
        m["name"] for m in runner.get(f"/api/v1/threads/{fork['id']}/memories").json()["memories"]
    ]
    assert names == ["a", "b"]
    bad = runner.post("/api/v1/threads", {"agent_id": agent.id, "memories": [{"name": "x"}]})
    assert bad.status_code == 422
    assert Thread.objects.count() == 2


def test_archiving_removes_the_mounts(runner, thread, make_memory):
    _mount(runner, thread.id, '"1"', name="a", memory_id=make_memory().id)
    runner.post(f"/api/v1/threads/{thread.id}/archive")
    assert not ThreadMount.objects.filter(thread=thread).exists()
    again = _mount(runner, thread.id, "*", name="b", memory_id=make_memory("B").id)
    assert again.status_code == 409 and error_of(again)["reason"] == "thread_archived"


def test_deleting_a_memory_removes_its_mounts(runner, thread, make_memory):
    memory = make_memory()
    _mount(runner, thread.id, '"1"', name="a", memory_id=memory.id)
    memory.delete()
    assert runner.get(f"/api/v1/threads/{thread.id}/memories").json()["memories"] == []


def _accept(client, thread_id, **body):
    return client.post(f"/api/v1/threads/{thread_id}/runs", body)


def test_a_run_freezes_the_mounts(runner, thread, make_memory):
    a, b = make_memory("A"), make_memory("B")
    _mount(runner, thread.id, '"1"', name="a", memory_id=a.id, access="write")
    run = _accept(runner, thread.id, input="hi").json()
    assert [m["name"] for m in run["mounts"]] == ["a"]
    _mount(runner, thread.id, '"2"', name="b", memory_id=b.id)
    assert [m.name for m in RunMount.objects.filter(run_id=run["id"])] == ["a"]
    later = _accept(runner, thread.id, input="again").json()
    assert [m["name"] for m in later["mounts"]] == ["a", "b"]


def test_agent_defaults_join_on_the_first_run_only(runner, owner, tenant, make_memory):
    team, prefs, other = make_memory("Team"), make_memory("Prefs"), make_memory("Other")
    agent = create_agent(
        tenant.owner,
        {
            "name": "A",
            "memory_mounts": [
                {"name": "team", "memory_id": team.id, "access": "write"},
                {"name": "prefs", "memory_id": prefs.id},
                {"name": "mine", "memory_id": other.id},
            ],
        },
    )
    thread = runner.post(
        "/api/v1/threads",
        {"agent_id": agent.id, "memories": [{"name": "mine", "memory_id": team.id}]},
    ).json()
    first = _accept(runner, thread["id"], input="hi").json()
    # "mine" is taken by the thread's own mount, and team is mounted already under "mine".
    assert [(m["name"], m["memory_id"]) for m in first["mounts"]] == [
        ("mine", team.id),
        ("prefs", prefs.id),
    ]
    runner.delete(f"/api/v1/threads/{thread['id']}/memories/prefs", HTTP_IF_MATCH="*")
    second = _accept(runner, thread["id"], input="again").json()
    assert [m["name"] for m in second["mounts"]] == ["mine"]  # a removed default stays removed


def test_a_default_of_a_deleted_memory_fails_the_first_run(runner, tenant, make_memory):
    gone = make_memory("Gone")
    agent = create_agent(
        tenant.owner, {"name": "A", "memory_mounts": [{"name": "gone", "memory_id": gone.id}]}
    )
    thread = runner.post("/api/v1/threads", {"agent_id": agent.id}).json()
    gone.delete()
    response = _accept(runner, thread["id"], input="hi")
    assert response.status_code == 422
    assert error_of(response)["code"] == "invalid_argument"
    assert Thread.objects.get(pk=thread["id"]).first_run_at is None


@override_settings(MEMORYHUB_SETTINGS={**DEFAULTS, "memory.mounts_per_thread": 1})
def test_defaults_over_the_limit_fail_the_first_run(runner, tenant, make_memory):
    a, b = make_memory("A"), make_memory("B")
    agent = create_agent(
        tenant.owner,
        {
            "name": "A",
            "memory_mounts": [{"name": "a", "memory_id": a.id}, {"name": "b", "memory_id": b.id}],
        },
    )
    thread = runner.post("/api/v1/threads", {"agent_id": agent.id}).json()
    response = _accept(runner, thread["id"], input="hi")
    assert response.status_code == 409
    assert error_of(response)["reason"] == "memory_mount_limit"
    assert not ThreadMount.objects.filter(thread_id=thread["id"]).exists()


def test_an_async_subagent_starts_with_the_parent_runs_mounts(runner, tenant, thread, make_memory):
    shared, own = make_memory("Shared"), make_memory("Own")
    _mount(runner, thread.id, '"1"', name="shared", memory_id=shared.id, access="write")
    parent = _accept(runner, thread.id, input="hi").json()
    sub_agent = create_agent(
        tenant.owner, {"name": "Sub", "memory_mounts": [{"name": "own", "memory_id": own.id}]}
    )
    sub_thread = runner.post("/api/v1/threads", {"agent_id": sub_agent.id}).json()
    child = _accept(runner, sub_thread["id"], input="task", parent_run_id=parent["id"]).json()
    assert [(m["name"], m["access"]) for m in child["mounts"]] == [
        ("shared", "write"),
        ("own", "read"),
    ]


def test_an_inline_subagent_gets_no_memory(runner, thread, make_memory):
    _mount(runner, thread.id, '"1"', name="a", memory_id=make_memory().id)
    parent = _accept(runner, thread.id, input="hi").json()
    inline = _accept(runner, thread.id, input="x", parent_run_id=parent["id"], inline=True)
    assert inline.status_code == 201
    assert inline.json()["mounts"] == [] and inline.json()["tools"] == []
    assert inline.json()["context"] == ""


@pytest.mark.parametrize("name", ["abc\n", "a" * 63 + "\n"])
def test_a_mount_name_with_a_trailing_newline_is_422(runner, owner, thread, make_memory, name):
    memory = make_memory()
    assert _mount(runner, thread.id, '"1"', name=name, memory_id=memory.id).status_code == 422
    response = owner.post(
        "/api/v1/agents", {"name": "x", "memory_mounts": [{"name": name, "memory_id": memory.id}]}
    )
    assert response.status_code == 422


def test_repeated_initial_mounts_are_409(runner, agent, make_memory):
    memory = make_memory()
    response = runner.post(
        "/api/v1/threads",
        {
            "agent_id": agent.id,
            "memories": [
                {"name": "a", "memory_id": memory.id},
                {"name": "a", "memory_id": make_memory("B").id},
            ],
        },
    )
    assert response.status_code == 409
    assert error_of(response)["code"] == "already_exists"
    assert not Thread.objects.exists()


def test_joined_defaults_change_the_threads_etag(runner, tenant, make_memory):
    memory = make_memory()
    agent = create_agent(
        tenant.owner, {"name": "A", "memory_mounts": [{"name": "d", "memory_id": memory.id}]}
    )
    thread = runner.post("/api/v1/threads", {"agent_id": agent.id}).json()
    before = runner.get(f"/api/v1/threads/{thread['id']}/memories")["ETag"]
    _accept(runner, thread["id"], input="hi")
    after = runner.get(f"/api/v1/threads/{thread['id']}/memories")
    assert [m["name"] for m in after.json()["memories"]] == ["d"]
    assert after["ETag"] != before
    stale = _mount(runner, thread["id"], before, name="x", memory_id=make_memory("X").id)
    assert stale.status_code == 412


def test_deleting_a_mounted_memory_changes_the_threads_etag(runner, owner, thread, make_memory):
    """The cascade takes the mount: a client holding the old ETag must learn of it."""
    memory = make_memory()
    etag = _mount(runner, thread.id, '"1"', name="team", memory_id=memory.id)["ETag"]
    other = create_thread_for(thread)
    memory_etag = owner.get(f"/api/v1/memories/{memory.id}")["ETag"]
    assert (
        owner.delete(f"/api/v1/memories/{memory.id}", HTTP_IF_MATCH=memory_etag).status_code == 204
    )
    listed = runner.get(f"/api/v1/threads/{thread.id}/memories")
    assert listed.json()["memories"] == [] and listed["ETag"] != etag
    stale = _mount(runner, thread.id, etag, name="again", memory_id=make_memory("B").id)
    assert stale.status_code == 412
    assert Thread.objects.get(pk=other.pk).version == 1  # threads without the mount keep theirs


def create_thread_for(thread: Thread) -> Thread:
    return Thread.objects.create(workspace=thread.workspace, agent=thread.agent)
