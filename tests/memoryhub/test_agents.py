"""/api/v1/agents: CRUD with ETags, toolset and default mounts validated, audited."""

from memoryhub.models import Agent, AuditEvent, Memory
from tests.conftest import error_of


def test_create_answers_the_agent_with_its_etag(owner):
    response = owner.post(
        "/api/v1/agents",
        {"name": "Support", "toolset": {"enabled": False, "disabled_tools": ["file_delete"]}},
    )
    assert response.status_code == 201
    agent = response.json()
    assert agent["id"].startswith("agt_")
    assert agent["toolset"] == {"enabled": False, "disabled_tools": ["file_delete"]}
    assert agent["memory_mounts"] == []
    assert response["ETag"] == agent["etag"]


def test_defaults_give_an_enabled_toolset(owner):
    agent = owner.post("/api/v1/agents", {"name": "Support"}).json()
    assert agent["toolset"] == {"enabled": True, "disabled_tools": []}


def test_patch_needs_if_match(owner, agent):
    response = owner.patch(f"/api/v1/agents/{agent.id}", {"name": "New"})
    assert response.status_code == 428
    assert error_of(response)["code"] == "precondition_required"
    assert Agent.objects.get(pk=agent.id).name == "Support bot"


def test_patch_with_a_stale_etag_is_412_and_changes_nothing(owner, agent):
    assert (
        owner.patch(f"/api/v1/agents/{agent.id}", {"name": "A"}, HTTP_IF_MATCH='"1"').status_code
        == 200
    )
    response = owner.patch(f"/api/v1/agents/{agent.id}", {"name": "B"}, HTTP_IF_MATCH='"1"')
    assert response.status_code == 412
    assert error_of(response)["code"] == "precondition_failed"
    assert Agent.objects.get(pk=agent.id).name == "A"


def test_patch_changes_the_etag(owner, agent):
    response = owner.patch(f"/api/v1/agents/{agent.id}", {"name": "A"}, HTTP_IF_MATCH='"1"')
    assert response.json()["name"] == "A"
    assert response["ETag"] == '"2"'
    assert owner.get(f"/api/v1/agents/{agent.id}")["ETag"] == '"2"'


def test_delete_needs_the_current_etag(owner, agent):
    assert owner.delete(f"/api/v1/agents/{agent.id}").status_code == 428
    assert owner.delete(f"/api/v1/agents/{agent.id}", HTTP_IF_MATCH='"7"').status_code == 412
    assert owner.delete(f"/api/v1/agents/{agent.id}", HTTP_IF_MATCH='"1"').status_code == 204
    assert owner.get(f"/api/v1/agents/{agent.id}").status_code == 404


def test_memory_mounts_must_name_memories_of_the_workspace(owner, tenant, other_tenant):
    mine = Memory.objects.create(
        workspace=tenant.workspace, kind="file", type="postgres", name="Team"
    )
    theirs = Memory.objects.create(
        workspace=other_tenant.workspace, kind="file", type="postgres", name="Theirs"
    )
    ok = owner.post(
        "/api/v1/agents",
        {"name": "A", "memory_mounts": [{"name": "team", "memory_id": mine.id, "access": "write"}]},
    )
    assert ok.status_code == 201
    assert ok.json()["memory_mounts"] == [
        {"name": "team", "memory_id": mine.id, "access": "write", "recall": True}
    ]
    bad_mounts = [
        [{"name": "team", "memory_id": theirs.id, "access": "read"}],
        [{"name": "Team", "memory_id": mine.id, "access": "read"}],
        [{"name": "team", "memory_id": mine.id, "access": "admin"}],
        [{"name": "team", "memory_id": mine.id, "recall": "yes"}],
        [{"name": "team", "memory_id": mine.id, "colour": "red"}],
        [{"name": "a", "memory_id": mine.id}, {"name": "a", "memory_id": mine.id}],
        ["team"],
    ]
    for mounts in bad_mounts:
        response = owner.post("/api/v1/agents", {"name": "B", "memory_mounts": mounts})
        assert response.status_code == 422, mounts
    assert Agent.objects.count() == 1


def test_changes_are_audited_without_content(owner, tenant):
    agent_id = owner.post("/api/v1/agents", {"name": "Secret plans"}).json()["id"]
    owner.patch(f"/api/v1/agents/{agent_id}", {"name": "More secrets"}, HTTP_IF_MATCH='"1"')
    events = AuditEvent.objects.filter(workspace=tenant.workspace).order_by("id")
    assert [e.action for e in events] == ["agent.create", "agent.update"]
    assert all(e.object_id == agent_id and e.principal_type == "api_key" for e in events)
    assert all(e.request_id for e in events)
    assert "secret" not in str([(e.details, e.object_id) for e in events]).lower()


def test_list_pages(owner):
    for n in range(3):
        owner.post("/api/v1/agents", {"name": f"A{n}"})
    page = owner.get("/api/v1/agents?limit=2").json()
    assert page["count"] == 3
    assert [a["name"] for a in page["results"]] == ["A2", "A1"]
    assert page["next"]
    for bad in ("limit=0", "limit=201", "limit=x", "offset=-1", "limit=1.5"):
        assert owner.get(f"/api/v1/agents?{bad}").status_code == 422, bad
