"""Threads (create, list, fork, archive) and the run lifecycle (accept, get, end)."""

from memoryhub.ids import hash_secret
from memoryhub.models import EndUser, Run, Thread
from tests.conftest import Api, error_of


def test_create_a_thread_for_an_end_user(runner, agent, tenant):
    response = runner.post("/api/v1/threads", {"agent_id": agent.id, "end_user": "bob"})
    assert response.status_code == 201
    thread = response.json()
    assert thread["id"].startswith("thr_")
    assert thread["end_user"] == "bob" and thread["status"] == "active"
    assert EndUser.objects.filter(workspace=tenant.workspace, external_id="bob").exists()


def test_a_thread_needs_an_agent_of_the_workspace(runner, other_tenant):
    from tests.factories import create_agent

    theirs = create_agent(other_tenant.owner, {"name": "Theirs"})
    assert runner.post("/api/v1/threads", {}).status_code == 422
    assert runner.post("/api/v1/threads", {"agent_id": theirs.id}).status_code == 422
    assert runner.post("/api/v1/threads", {"agent_id": 5}).status_code == 422


def test_bad_end_user_ids_are_422(runner, agent):
    for bad in ("", "a/b", " padded", "x" * 101, 7, "tab\there"):
        response = runner.post("/api/v1/threads", {"agent_id": agent.id, "end_user": bad})
        assert response.status_code == 422, bad
    assert not Thread.objects.exists()


def test_list_filters(runner, agent, thread):
    runner.post("/api/v1/threads", {"agent_id": agent.id, "end_user": "bob"})
    assert runner.get("/api/v1/threads").json()["count"] == 2
    only = runner.get("/api/v1/threads?end_user=alice").json()["results"]
    assert [t["id"] for t in only] == [thread.id]
    assert runner.get("/api/v1/threads?status=archived").json()["count"] == 0


def test_fork_keeps_agent_and_end_user(runner, thread):
    fork = runner.post(f"/api/v1/threads/{thread.id}/fork").json()
    assert fork["forked_from"] == thread.id
    assert fork["end_user"] == "alice" and fork["agent_id"] == thread.agent_id
    assert fork["id"] != thread.id


def test_archive_then_no_more_runs(runner, thread):
    response = runner.post(f"/api/v1/threads/{thread.id}/archive")
    assert response.json()["status"] == "archived"
    response = runner.post(f"/api/v1/threads/{thread.id}/runs", {"input": "hi"})
    assert response.status_code == 409
    assert error_of(response)["reason"] == "thread_archived"
    assert not Run.objects.exists()


def test_archive_with_a_stale_if_match_is_412(runner, thread):
    response = runner.post(f"/api/v1/threads/{thread.id}/archive", HTTP_IF_MATCH='"9"')
    assert response.status_code == 412
    assert Thread.objects.get(pk=thread.id).status == "active"


def test_accept_a_run_gives_a_token_once(runner, thread):
    response = runner.post(f"/api/v1/threads/{thread.id}/runs", {"input": {"q": "hi"}})
    assert response.status_code == 201
    run = response.json()
    assert run["status"] == "running" and run["end_user"] == "alice"
    assert run["token"] and run["mounts"] == [] and run["context"] == "" and run["tools"] == []
    stored = Run.objects.get(pk=run["id"])
    assert stored.token_hash == hash_secret(run["token"]) and run["token"] not in stored.token_hash
    again = runner.get(f"/api/v1/runs/{run['id']}").json()
    assert "token" not in again
    assert Api(run_token=run["token"]).get(f"/api/v1/runs/{run['id']}").status_code == 200


def test_end_a_run(runner, running_run):
    run, token = running_run
    response = runner.post(f"/api/v1/runs/{run.id}/end")
    assert response.json()["status"] == "ended" and response.json()["ended_at"]
    assert runner.post(f"/api/v1/runs/{run.id}/end").status_code == 200  # idempotent


def test_child_runs_of_an_eval_share_its_root(runner, thread):
    root = runner.post(f"/api/v1/threads/{thread.id}/runs", {"eval": True}).json()
    child = runner.post(f"/api/v1/threads/{thread.id}/runs", {"parent_run_id": root["id"]}).json()
    grandchild = runner.post(
        f"/api/v1/threads/{thread.id}/runs", {"parent_run_id": child["id"]}
    ).json()
    assert child["eval"] and grandchild["eval"]
    assert Run.objects.get(pk=grandchild["id"]).eval_root_id == root["id"]
    assert Run.objects.get(pk=root["id"]).eval_root_id is None


def test_run_fields_are_validated(runner, thread, other_tenant):
    path = f"/api/v1/threads/{thread.id}/runs"
    for body in (
        {"eval": "yes"},
        {"history_compacted": 1},
        {"parent_run_id": "run_nope"},
        {"parent_run_id": 3},
        {"inline": True},
        {"colour": "red"},
    ):
        assert runner.post(path, body).status_code == 422, body
    assert not Run.objects.exists()
