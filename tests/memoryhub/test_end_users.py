"""End users: listed by the runtime's id; erasing one ends their runs and archives threads."""

import pytest

from memoryhub.models import AuditEvent, EndUser, Run, Thread


def test_list_shows_the_runtime_ids(reader, thread):
    results = reader.get("/api/v1/end-users").json()["results"]
    assert [u["id"] for u in results] == ["alice"]


def test_erase_removes_the_person(owner, tenant, thread, running_run):
    response = owner.delete("/api/v1/end-users/alice")
    assert response.status_code == 200
    receipt = response.json()
    assert receipt["threads_archived"] == 1 and receipt["runs_ended"] == 1
    assert receipt["runs_scrubbed"] == 1  # the run's input {"message": "hi"} went
    assert receipt["verified"] is True and receipt["remaining"] == {}
    assert "alice" not in response.content.decode()
    assert not EndUser.objects.filter(workspace=tenant.workspace).exists()
    assert Run.objects.get(pk=running_run[0].id).status == "ended"
    stored = Thread.objects.get(pk=thread.id)
    assert stored.status == "archived" and stored.end_user is None
    event = AuditEvent.objects.get(action="end_user.erase")
    assert "alice" not in str(event.details) + event.object_id


def test_erase_of_an_unknown_person_is_404(owner, thread):
    assert owner.delete("/api/v1/end-users/bob").status_code == 404


def test_erase_cannot_reach_another_workspace(stranger, thread):
    assert stranger.delete("/api/v1/end-users/alice").status_code == 404
    assert EndUser.objects.filter(external_id="alice").exists()


def test_erase_removes_what_the_person_said(owner, runner, thread):
    run = runner.post(f"/api/v1/threads/{thread.id}/runs", {"input": "my SSN is 123"}).json()
    from threads.models import ToolCall

    ToolCall.objects.create(
        workspace_id=thread.workspace_id,
        run_id=run["id"],
        call_id="c",
        name="memory_file_view",
        arguments_digest="x",
        status="done",
        content="SSN 123",
    )
    assert owner.delete("/api/v1/end-users/alice").status_code == 200
    assert Run.objects.get(pk=run["id"]).input is None
    assert not ToolCall.objects.filter(run_id=run["id"]).exists()


@pytest.mark.parametrize("bad", ["Jane Doe", "a/b", "{user}", "x" * 101, "", "tab\t"])
def test_end_user_ids_must_be_folder_names(runner, agent, bad):
    response = runner.post("/api/v1/threads", {"agent_id": agent.id, "end_user": bad})
    assert response.status_code == 422


def test_end_user_ids_may_hold_letters_digits_and_marks(runner, agent):
    for good in ("jane.doe@example.com", "Ayşe_Yılmaz", "user:42", "a-b"):
        response = runner.post("/api/v1/threads", {"agent_id": agent.id, "end_user": good})
        assert response.status_code == 201, good
