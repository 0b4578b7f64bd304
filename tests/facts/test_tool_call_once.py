"""/v0/memory/tools/call runs each tool call id at most once per run, and its tools refuse
arguments their definitions do not declare.

The record of executed calls is the run's, shared with /api/v1/runs/{id}/tool-calls.
"""

from __future__ import annotations

import json

import pytest

from facts.models import Fact, FactVersion
from memoryhub.models import ToolCall
from tests.conftest import Api, error_of
from tests.facts.conftest import run_for, save, token_for
from tests.parallel import in_parallel

CALL = "/v0/memory/tools/call"
ONE_PATH = ["users/{user}/"]


def send(api: Api, name: str, arguments: dict, call_id: str = "c1", paths=ONE_PATH):
    tool_call = {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }
    return api.post(CALL, {"paths": list(paths), "tool_call": tool_call})


def content_of(response) -> str:
    assert response.status_code == 200, response.content
    return response.json()["content"]


# -- at most once ----------------------------------------------------------------------------


def test_the_same_save_sent_twice_saves_one_fact(alice):
    first = send(alice, "save_memory", {"text": "Likes jazz"})
    again = send(alice, "save_memory", {"text": "Likes jazz"})
    assert not content_of(first).startswith("error"), first.json()
    assert again.status_code == 200 and again.json() == first.json()
    assert Fact.objects.count() == 1 and FactVersion.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_twenty_concurrent_sends_of_one_id_save_one_fact(tenant, agent):
    _, token = token_for(tenant, agent, "alice")

    def attempt(_: int):
        response = send(Api(run_token=token), "save_memory", {"text": "Likes tea"}, "race")
        return response.status_code, response.json()

    results = in_parallel(20, attempt)
    assert all(isinstance(r, tuple) and r[0] == 200 for r in results), results
    assert len({json.dumps(body, sort_keys=True) for _, body in results}) == 1, results
    assert not results[0][1]["content"].startswith("error"), results[0]
    assert Fact.objects.count() == 1 and FactVersion.objects.count() == 1
    assert ToolCall.objects.get(call_id="race").status == "done"


def test_the_same_id_with_other_arguments_is_409(alice):
    content_of(send(alice, "save_memory", {"text": "first"}))
    for name, arguments, paths in [
        ("save_memory", {"text": "second"}, ONE_PATH),
        ("search_memory", {"query": "first"}, ONE_PATH),
        ("save_memory", {"text": "first"}, ["notes/"]),  # other folders: another call
    ]:
        response = send(alice, name, arguments, paths=paths)
        assert response.status_code == 409, response.content
        error = error_of(response)
        assert (error["code"], error["reason"]) == ("conflict", "tool_call_reused")
    assert list(Fact.objects.values_list("text", "path")) == [("first", "users/alice/")]


def test_an_ended_run_replaying_an_id_is_still_401(tenant, agent):
    run, api = run_for(tenant, agent, "alice")
    content_of(send(api, "save_memory", {"text": "x"}))
    assert ToolCall.objects.filter(run=run, call_id="c1", status="done").exists()
    api.post(f"/api/v1/runs/{run.id}/end")
    again = send(api, "save_memory", {"text": "x"})
    assert again.status_code == 401 and error_of(again)["reason"] == "run_ended"


def test_call_ids_belong_to_their_run(tenant, agent):
    _, alice = run_for(tenant, agent, "alice")
    _, alice_later = run_for(tenant, agent, "alice")
    for api, text in ((alice, "from run one"), (alice_later, "from run two")):
        assert not content_of(send(api, "save_memory", {"text": text}, "c1")).startswith("error")
    assert sorted(Fact.objects.values_list("text", flat=True)) == ["from run one", "from run two"]
    assert ToolCall.objects.filter(call_id="c1").count() == 2  # one record per run


def _file_run(owner, runner, agent) -> dict:
    memory = owner.post("/api/v1/memories", {"name": "Team", "type": "postgres"}).json()
    mounts = [{"name": "team", "memory_id": memory["id"], "access": "write"}]
    thread = runner.post(
        "/api/v1/threads", {"agent_id": agent.id, "end_user": "alice", "memories": mounts}
    ).json()
    run = runner.post(f"/api/v1/threads/{thread['id']}/runs", {"input": "hi"}).json()
    return {**run, "memory_id": memory["id"]}


def test_an_id_used_on_the_run_endpoint_is_taken_here(owner, runner, agent):
    run = _file_run(owner, runner, agent)
    api = Api(run_token=run["token"])
    done = api.post(
        f"/api/v1/runs/{run['id']}/tool-calls",
        {"id": "shared", "name": "memory_file_create",
         "arguments": {"path": "a.md", "file_text": "x"}},
    )  # fmt: skip
    assert done.status_code == 200 and not done.json()["content"].startswith("error")
    response = send(api, "save_memory", {"text": "x"}, "shared")
    assert response.status_code == 409, response.content
    assert error_of(response)["reason"] == "tool_call_reused"
    assert not Fact.objects.exists()
    assert ToolCall.objects.filter(run_id=run["id"]).count() == 1


def test_an_id_used_here_is_taken_on_the_run_endpoint(owner, runner, agent):
    run = _file_run(owner, runner, agent)
    api = Api(run_token=run["token"])
    content_of(send(api, "save_memory", {"text": "x"}, "shared"))
    response = api.post(
        f"/api/v1/runs/{run['id']}/tool-calls",
        {"id": "shared", "name": "memory_file_create",
         "arguments": {"path": "a.md", "file_text": "x"}},
    )  # fmt: skip
    assert response.status_code == 409, response.content
    assert error_of(response)["reason"] == "tool_call_reused"
    assert owner.get(f"/api/v1/memories/{run['memory_id']}/files/a.md").status_code == 404
    assert Fact.objects.count() == 1


# -- undeclared arguments --------------------------------------------------------------------

UNKNOWN_PATH = "error: invalid_argument: unknown arguments: path"


def test_one_path_refuses_a_path_argument(alice):
    kept = save(alice, "users/{user}/", "kept")
    for number, (name, arguments) in enumerate(
        [
            ("save_memory", {"text": "x", "path": "users/{user}/"}),
            ("search_memory", {"query": "kept", "path": "users/{user}/"}),
            ("forget_memory", {"id": kept["id"], "path": "users/{user}/"}),
        ]
    ):
        assert content_of(send(alice, name, arguments, f"p{number}")) == UNKNOWN_PATH
    assert list(Fact.objects.values_list("text", flat=True)) == ["kept"]


def test_several_paths_still_take_a_path(alice):
    paths = ["users/{user}/", "notes/"]
    saved = json.loads(content_of(send(alice, "save_memory", {"text": "n", "path": "notes/"},
                                       paths=paths)))  # fmt: skip
    assert alice.get(f"/v0/memory/facts/{saved['saved']}").json()["path"] == "notes/"
    other = send(alice, "save_memory", {"text": "n", "colour": "red", "path": "notes/"}, "c2",
                 paths)  # fmt: skip
    assert content_of(other) == "error: invalid_argument: unknown arguments: colour"


def test_a_retry_naming_the_same_folders_otherwise_is_the_same_call(alice):
    """Order and spelling (``users/{user}/`` or the user's own id) do not make another call."""
    paths = ["users/{user}/", "notes/"]
    first = content_of(send(alice, "save_memory", {"text": "t", "path": "notes/"}, paths=paths))
    for retry in (["notes/", "users/{user}/"], ["users/alice/", "notes/"]):
        again = send(alice, "save_memory", {"text": "t", "path": "notes/"}, paths=retry)
        assert again.status_code == 200 and content_of(again) == first
    assert Fact.objects.count() == 1
