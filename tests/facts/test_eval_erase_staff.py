"""Eval memories, erasing an end user, and the staff API over an agent's facts."""

from __future__ import annotations

from facts.models import Fact, FactQuota, FactVersion
from tests.conftest import error_of
from tests.facts.conftest import child_of, counted, run_for, save
from threads.services.runs import end_run

FACTS = "/v0/memory/facts"


def staff_url(agent, rest: str = "") -> str:
    return f"/api/v1/agents/{agent.id}/facts{rest}"


# -- evals --------------------------------------------------------------------------------
def test_eval_memory_is_separate_shared_and_deleted_with_its_root(tenant, agent, alice):
    real = save(alice, "notes/", "real memory fact")
    root, root_api = run_for(tenant, agent, "alice", eval=True)
    assert root_api.get(FACTS).json()["facts"] == []  # empty at the start
    assert root_api.get(f"{FACTS}/{real['id']}").status_code == 404
    assert root_api.post("/v0/memory/search", {"query": "real"}).json()["facts"] == []
    assert root_api.delete(f"{FACTS}/{real['id']}").status_code == 404
    in_eval = save(root_api, "notes/", "eval fact")
    child, child_api = child_of(tenant, root)
    grandchild, grandchild_api = child_of(tenant, child)
    assert [f["id"] for f in grandchild_api.get(FACTS).json()["facts"]] == [in_eval["id"]]
    save(child_api, "users/{user}/", "eval user fact")
    # The real memory never sees the eval's facts.
    assert [f["id"] for f in alice.get(FACTS).json()["facts"]] == [real["id"]]
    assert alice.get(f"{FACTS}/{in_eval['id']}").status_code == 404
    # A child ending leaves the memory; the root ending deletes it.
    end_run(tenant.owner, child.id)
    assert Fact.objects.filter(scope=root.id).count() == 2
    end_run(tenant.owner, root.id)
    assert not Fact.objects.filter(scope=root.id).exists()
    assert not FactVersion.objects.exclude(fact_id=int(real["id"][2:])).exists()
    assert not FactQuota.objects.filter(scope=root.id).exists()
    assert Fact.objects.filter(pk=int(real["id"][2:])).exists()
    # The eval tree cannot write into a memory that is gone.
    response = grandchild_api.post(FACTS, {"path": "notes/", "text": "late"})
    assert response.status_code == 409
    assert error_of(response)["reason"] == "eval_ended"


def test_staff_never_see_eval_facts(tenant, agent, reader):
    _, eval_api = run_for(tenant, agent, "alice", eval=True)
    hidden = save(eval_api, "notes/", "eval only")
    assert reader.get(staff_url(agent)).json()["facts"] == []
    assert reader.get(staff_url(agent, f"/{hidden['id']}")).status_code == 404
    assert reader.post(staff_url(agent, "/search"), {"query": "eval"}).json()["facts"] == []


# -- erasing an end user --------------------------------------------------------------------
def test_erasing_an_end_user_removes_every_fact_and_version(tenant, agent, owner, alice, bob):
    from tests.factories import create_agent

    mine = save(alice, "users/{user}/", "alice v1")
    save(alice, "users/{user}/deep/", "alice v2", replaces=mine["id"])
    shared = save(alice, "notes/", "shared note")
    other_agent = create_agent(tenant.owner, {"name": "Second"})
    save(run_for(tenant, other_agent, "alice")[1], "users/{user}/", "alice elsewhere")
    _, eval_api = run_for(tenant, agent, "alice", eval=True)
    save(eval_api, "users/{user}/", "alice in an eval")
    bobs = save(bob, "users/{user}/", "bob stays")
    response = owner.delete("/api/v1/end-users/alice")
    assert response.status_code == 200, response.content
    assert response.json()["verified"] is True
    remaining = set(Fact.objects.values_list("text", flat=True))
    assert remaining == {"shared note", "bob stays"}
    assert set(FactVersion.objects.values_list("fact_id", flat=True)) == {
        int(shared["id"][2:]),
        int(bobs["id"][2:]),
    }
    assert counted(agent) == 2
    assert counted(other_agent) == 0


# -- staff API ----------------------------------------------------------------------------
def test_staff_read_every_end_users_facts(agent, reader, alice, bob):
    a = save(alice, "users/{user}/", "alice fact")
    b = save(bob, "users/{user}/", "bob fact")
    n = save(alice, "notes/", "note fact")
    listed = reader.get(staff_url(agent)).json()
    assert [f["id"] for f in listed["facts"]] == [n["id"], b["id"], a["id"]]
    assert listed["next"] is None
    assert [f["id"] for f in reader.get(staff_url(agent), {"path": "users/bob/"}).json()["facts"]] \
        == [b["id"]]  # fmt: skip
    found = reader.post(staff_url(agent, "/search"), {"query": "FACT", "k": 10}).json()["facts"]
    assert {f["id"] for f in found} == {a["id"], b["id"], n["id"]}
    assert all(f["score"] > 0 for f in found)
    found = reader.get(staff_url(agent, "/search"), {"query": "bob", "k": "3"}).json()["facts"]
    assert [f["id"] for f in found] == [b["id"]]
    assert reader.get(staff_url(agent, f"/{a['id']}")).json() == a
    versions = reader.get(staff_url(agent, f"/{a['id']}/versions")).json()["versions"]
    assert versions == [a]


def test_staff_delete_needs_write(agent, reader, runner, owner, alice):
    fact = save(alice, "users/{user}/", "erase me")
    save(alice, "users/{user}/", "erase me v2", replaces=fact["id"])
    for api in (reader, runner):
        response = api.delete(staff_url(agent, f"/{fact['id']}"))
        assert response.status_code == 403, response.content
    assert owner.delete(staff_url(agent, f"/{fact['id']}")).status_code == 204
    assert not Fact.objects.exists() and not FactVersion.objects.exists()
    assert owner.delete(staff_url(agent, f"/{fact['id']}")).status_code == 404
    assert counted(agent) == 0


def test_staff_api_is_scoped_to_the_workspace(agent, stranger, anonymous, alice):
    fact = save(alice, "notes/", "private")
    for response in (
        stranger.get(staff_url(agent)),
        stranger.get(staff_url(agent, f"/{fact['id']}")),
        stranger.delete(staff_url(agent, f"/{fact['id']}")),
        stranger.post(staff_url(agent, "/search"), {"query": "private"}),
    ):
        assert response.status_code == 404, response.content
    assert anonymous.get(staff_url(agent)).status_code == 401
    assert Fact.objects.count() == 1


def test_run_tokens_cannot_use_the_staff_api(agent, alice):
    assert alice.get(staff_url(agent)).status_code == 401


def test_staff_bad_arguments(agent, reader):
    assert reader.get(staff_url(agent), {"limit": 0}).status_code == 422
    assert reader.get(staff_url(agent), {"path": "users/{user}/"}).status_code == 422
    assert reader.post(staff_url(agent, "/search"), {"query": "x", "k": 0}).status_code == 422
    assert reader.get(staff_url(agent, "/search"), {"k": "x"}).status_code == 422
    assert reader.get("/api/v1/agents/agt_unknown/facts").status_code == 404
