"""End users: listed by the runtime's id; erasing one ends their runs and archives threads."""

from memoryhub.models import AuditEvent, EndUser, Run, Thread


def test_list_shows_the_runtime_ids(reader, thread):
    results = reader.get("/api/v1/end-users").json()["results"]
    assert [u["id"] for u in results] == ["alice"]


def test_erase_removes_the_person(owner, tenant, thread, running_run):
    response = owner.delete("/api/v1/end-users/alice")
    assert response.status_code == 204
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
