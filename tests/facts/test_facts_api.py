"""/v0/memory/facts: the fact's shape, paths, writes, versions, keys, limits and listing."""

from __future__ import annotations

import json

import pytest
from django.test import override_settings

from facts.models import Fact, FactVersion
from memoryhub.models import AuditEvent
from tests.conftest import Api, error_of
from tests.facts.conftest import save, seed_facts

FACTS = "/v0/memory/facts"
LONGEST = "x" * 100 + "/" + "y" * 100 + "/" + "z" * 98  # 300 characters


# -- authentication ----------------------------------------------------------------------
def test_missing_token_is_401(anonymous):
    for response in (
        anonymous.get(FACTS),
        anonymous.post(FACTS, {"path": "a/", "text": "x"}),
        anonymous.post("/v0/memory/search", {"query": "x"}),
        anonymous.post("/v0/memory/context", {"query": "x"}),
        anonymous.get("/v0/memory/tools"),
    ):
        assert response.status_code == 401, response.content
        assert error_of(response)["code"] == "unauthenticated"


def test_api_keys_and_bad_tokens_are_not_run_tokens(owner):
    assert owner.get(FACTS).status_code == 401
    assert Api(run_token="rt_nope").get(FACTS).status_code == 401


# -- shape -------------------------------------------------------------------------------
def test_fact_has_the_documented_shape(alice, running_run):
    response = alice.post(
        FACTS,
        {
            "path": "companies/6120095417",
            "text": "Ayşe Yılmaz is the sole director.",
            "tags": ["director"],
            "confidence": 0.95,
        },
    )
    assert response.status_code == 201, response.content
    fact = response.json()
    assert set(fact) == {
        "id", "path", "text", "tags", "confidence", "version",
        "created_at", "updated_at", "source",
    }  # fmt: skip
    assert fact["id"].startswith("m_")
    assert fact["path"] == "companies/6120095417/"
    assert fact["tags"] == ["director"] and fact["confidence"] == 0.95
    assert fact["version"] == 1
    assert fact["source"] == {"run_id": running_run[0].id, "written_by": "code"}
    assert fact["created_at"].endswith("Z") and fact["created_at"] == fact["updated_at"]
    got = alice.get(f"{FACTS}/{fact['id']}")
    assert got.status_code == 200 and got.json() == fact


def test_defaults_and_written_by_model(alice):
    fact = save(alice, text="plain")
    assert fact["tags"] == [] and fact["confidence"] == 1.0
    assert save(alice, written_by="model")["source"]["written_by"] == "model"


# -- paths -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("given", "stored"),
    [
        ("", ""),
        ("/", ""),
        ("a", "a/"),
        ("a/", "a/"),
        ("a.b/c_d/e:f/g@h/i-j/{k}/", "a.b/c_d/e:f/g@h/i-j/{k}/"),
        ("şirketler/İstanbul/", "şirketler/İstanbul/"),
        (LONGEST, LONGEST + "/"),
    ],
)  # fmt: skip
def test_valid_paths_are_stored_with_one_trailing_slash(alice, given, stored):
    assert save(alice, given)["path"] == stored


@pytest.mark.parametrize(
    "given",
    [
        "a//b/",
        "//",
        "/a/",
        "a/b//",
        "a b/",
        "a/é!/",
        "x" * 101,
        "a/" * 150 + "b",
        "a\\b",
        "notes/{user}/",
        "users/{user}x/",
        "users/x/{user}/",
        "{user}/",
        5,
        None,
    ],
)
def test_invalid_paths_are_422(alice, given):
    response = alice.post(FACTS, {"path": given, "text": "x"})
    assert response.status_code == 422, response.content
    assert Fact.objects.count() == 0


def test_path_filter_matches_whole_segments_and_sub_folders(alice):
    seven = save(alice, "companies/7/", "seven")
    save(alice, "companies/77/", "seventy-seven")
    deeper = save(alice, "companies/7/board/", "board of seven")
    listed = alice.get(FACTS, {"path": "companies/7"}).json()["facts"]
    assert {f["id"] for f in listed} == {seven["id"], deeper["id"]}
    found = alice.post("/v0/memory/search", {"query": "seven", "path": "companies/7/"}).json()
    assert {f["id"] for f in found["facts"]} == {seven["id"], deeper["id"]}
    assert len(alice.get(FACTS, {"path": "/"}).json()["facts"]) == 3


# -- users' folders -----------------------------------------------------------------------
def test_user_folder_is_filled_from_the_runs_end_user(alice, bob):
    mine = save(alice, "users/{user}/prefs/", "likes tea")
    assert mine["path"] == "users/alice/prefs/"
    # Its own folder may also be named by the end user's id.
    assert save(alice, "users/alice/", "likes cake")["path"] == "users/alice/"
    theirs = save(bob, "users/{user}/", "likes coffee")
    assert theirs["path"] == "users/bob/"


def test_other_users_folder_is_403_other_user(alice, bob):
    save(bob, "users/{user}/", "bob's secret")
    for response in (
        alice.post(FACTS, {"path": "users/bob/", "text": "x"}),
        alice.get(FACTS, {"path": "users/bob/"}),
        alice.post("/v0/memory/search", {"query": "secret", "path": "users/bob/"}),
        alice.post("/v0/memory/context", {"query": "", "paths": ["users/bob/"]}),
    ):
        assert response.status_code == 403, response.content
        assert error_of(response)["reason"] == "other_user"


def test_other_users_fact_by_id_is_404(alice, bob):
    theirs = save(bob, "users/{user}/", "bob's secret")
    for response in (
        alice.get(f"{FACTS}/{theirs['id']}"),
        alice.get(f"{FACTS}/{theirs['id']}/versions"),
        alice.delete(f"{FACTS}/{theirs['id']}"),
        alice.post(FACTS, {"path": "notes/", "text": "x", "replaces": theirs["id"]}),
    ):
        assert response.status_code == 404, response.content
    assert Fact.objects.get().text == "bob's secret"


def test_whole_memory_never_shows_another_users_facts(alice, bob):
    shared = save(alice, "notes/", "secret shared note")
    own = save(alice, "users/{user}/", "secret of alice")
    save(bob, "users/{user}/", "secret of bob")
    listed = {f["id"] for f in alice.get(FACTS).json()["facts"]}
    assert listed == {shared["id"], own["id"]}
    listed = {f["id"] for f in alice.get(FACTS, {"path": "users/"}).json()["facts"]}
    assert listed == {own["id"]}
    found = {f["id"] for f in alice.post("/v0/memory/search", {"query": "secret", "k": 50})
             .json()["facts"]}  # fmt: skip
    assert found == {shared["id"], own["id"]}
    newest = alice.post("/v0/memory/search", {"query": "", "k": 50}).json()["facts"]
    assert {f["id"] for f in newest} == {shared["id"], own["id"]}
    context = alice.post("/v0/memory/context", {"query": "secret"}).json()["context"]
    assert "alice" in context and "bob" not in context


def test_no_end_user_is_409_no_user(nobody):
    for response in (
        nobody.post(FACTS, {"path": "users/{user}/", "text": "x"}),
        nobody.get(FACTS, {"path": "users/{user}/"}),
        nobody.post("/v0/memory/context", {"query": "", "paths": ["users/{user}/"]}),
    ):
        assert response.status_code == 409, response.content
        assert error_of(response)["reason"] == "no_user"
    denied = nobody.post(FACTS, {"path": "users/alice/", "text": "x"})
    assert error_of(denied)["reason"] == "other_user"


def test_the_users_folder_itself_holds_no_facts(alice):
    response = alice.post(FACTS, {"path": "users/", "text": "x"})
    assert response.status_code == 422


@pytest.mark.parametrize(("start", "target"), [("notes/", "users/{user}/"),
                                               ("users/{user}/", "notes/")])  # fmt: skip
def test_replaces_cannot_move_into_or_out_of_users_folders(alice, start, target):
    fact = save(alice, start, "movable?")
    response = alice.post(FACTS, {"path": target, "text": "moved", "replaces": fact["id"]})
    assert response.status_code == 422, response.content
    assert error_of(response)["reason"] == "user_folder_move"
    assert alice.get(f"{FACTS}/{fact['id']}").json()["version"] == 1


def test_replaces_within_the_users_folder_is_allowed(alice):
    fact = save(alice, "users/{user}/", "a")
    moved = save(alice, "users/{user}/sub/", "b", replaces=fact["id"])
    assert moved["path"] == "users/alice/sub/" and moved["version"] == 2


# -- writes and ended runs ------------------------------------------------------------------
def test_ended_run_cannot_write_but_can_read(alice, ended_run_api, running_run):
    fact = save(alice, "notes/", "kept")
    for response in (
        ended_run_api.post(FACTS, {"path": "notes/", "text": "x"}),
        ended_run_api.delete(f"{FACTS}/{fact['id']}"),
    ):
        assert response.status_code == 401, response.content
        assert error_of(response)["reason"] == "run_ended"
    assert ended_run_api.get(f"{FACTS}/{fact['id']}").status_code == 200
    assert ended_run_api.post("/v0/memory/search", {"query": "kept"}).status_code == 200
    assert ended_run_api.get(FACTS).status_code == 200


def test_writes_are_audited_without_content(alice):
    fact = save(alice, "notes/", "confidential words")
    event = AuditEvent.objects.get(action="fact.write")
    assert event.object_id == fact["id"] and event.details["path"] == "notes/"
    assert "confidential" not in json.dumps(event.details)


# -- replaces and versions -----------------------------------------------------------------
def test_replaces_writes_a_new_version_keeping_left_out_fields(alice):
    first = save(alice, "notes/", "v1", tags=["a", "b"], confidence=0.5)
    second = save(alice, "archive/", "v2", replaces=first["id"])
    assert second["id"] == first["id"] and second["version"] == 2
    assert second["path"] == "archive/"
    assert second["tags"] == ["a", "b"] and second["confidence"] == 0.5
    assert second["created_at"] == first["created_at"]
    assert second["updated_at"] > first["updated_at"]
    third = save(alice, "archive/", "v3", replaces=first["id"], tags=["c"], confidence=0.9)
    assert third["version"] == 3 and third["tags"] == ["c"] and third["confidence"] == 0.9
    versions = alice.get(f"{FACTS}/{first['id']}/versions").json()["versions"]
    assert [v["version"] for v in versions] == [3, 2, 1]
    assert [v["text"] for v in versions] == ["v3", "v2", "v1"]
    assert versions[2] == first
    current = alice.get(f"{FACTS}/{first['id']}").json()
    assert current == third


def test_replaces_unknown_or_malformed_fact(alice):
    response = alice.post(FACTS, {"path": "a/", "text": "x", "replaces": "m_999999"})
    assert response.status_code == 404
    response = alice.post(FACTS, {"path": "a/", "text": "x", "replaces": "nope"})
    assert response.status_code == 422


def test_delete_removes_the_fact_and_all_versions(alice):
    fact = save(alice, "notes/", "v1")
    save(alice, "notes/", "v2", replaces=fact["id"])
    assert alice.delete(f"{FACTS}/{fact['id']}").status_code == 204
    assert alice.get(f"{FACTS}/{fact['id']}").status_code == 404
    assert alice.get(f"{FACTS}/{fact['id']}/versions").status_code == 404
    assert alice.delete(f"{FACTS}/{fact['id']}").status_code == 404
    assert not FactVersion.objects.exists()


def test_unknown_and_malformed_ids_are_404(alice):
    for url in (f"{FACTS}/m_12345", f"{FACTS}/m_abc", f"{FACTS}/x_1", f"{FACTS}/m_1/versions"):
        response = alice.get(url)
        assert response.status_code == 404, url
        assert error_of(response)["code"] == "not_found"


# -- idempotency keys ---------------------------------------------------------------------
def test_same_key_in_the_same_run_answers_the_first_write(alice, bob):
    first = alice.post(FACTS, {"path": "notes/", "text": "once", "key": "note"})
    assert first.status_code == 201
    again = alice.post(FACTS, {"path": "notes/", "text": "twice?", "key": "note"})
    assert again.status_code == 200 and again.json() == first.json()
    assert Fact.objects.count() == 1
    # Another run may use the same key.
    assert bob.post(FACTS, {"path": "notes/", "text": "bob", "key": "note"}).status_code == 201


def test_key_replays_the_first_write_even_after_a_replace(alice):
    first = alice.post(FACTS, {"path": "notes/", "text": "once", "key": "k1"}).json()
    save(alice, "notes/", "changed", replaces=first["id"])
    again = alice.post(FACTS, {"path": "notes/", "text": "once", "key": "k1"})
    assert again.status_code == 200 and again.json()["version"] == 1
    assert again.json()["text"] == "once"


@pytest.mark.parametrize("key", ["", "a b", "k" * 201, 7, "ü"])
def test_bad_keys_are_422(alice, key):
    assert alice.post(FACTS, {"path": "a/", "text": "x", "key": key}).status_code == 422


# -- limits -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "fields",
    [
        {"text": ""},
        {"text": "   "},
        {"text": "x" * 4001},
        {"text": 5},
        {"tags": ["t"] * 21},
        {"tags": ["a b"]},
        {"tags": ["x" * 51]},
        {"tags": [""]},
        {"tags": "a,b"},
        {"tags": [1]},
        {"confidence": -0.01},
        {"confidence": 1.01},
        {"confidence": "0.5"},
        {"confidence": True},
        {"written_by": "human"},
        {"unknown": 1},
    ],
)
def test_field_limits_are_422(alice, fields):
    data = {"path": "a/", "text": "ok", **fields}
    response = alice.post(FACTS, data)
    assert response.status_code == 422, response.content
    assert error_of(response)["code"] == "invalid_argument"
    assert Fact.objects.count() == 0


def test_field_limits_at_their_edges_are_accepted(alice):
    fact = save(alice, "a/", "x" * 4000, tags=[f"t{i}" for i in range(20)], confidence=0)
    assert len(fact["text"]) == 4000 and len(fact["tags"]) == 20
    assert save(alice, "a/", "y", tags=["A-z.0_9:" + "x" * 42], confidence=1)["confidence"] == 1


def test_missing_fields_and_non_object_bodies_are_422(alice):
    assert alice.post(FACTS, {"text": "x"}).status_code == 422
    assert alice.post(FACTS, {"path": "a/"}).status_code == 422
    assert alice.post(FACTS, [1, 2]).status_code == 422
    response = alice.generic("POST", FACTS, "{not json")
    assert response.status_code == 400


def test_body_over_64_kib_is_413(alice):
    response = alice.post(FACTS, {"path": "a/", "text": "x" * (64 * 1024)})
    assert response.status_code == 413
    assert error_of(response)["code"] == "payload_too_large"


def test_memory_full_is_409(alice, agent):
    with override_settings(MEMORYHUB_SETTINGS={"facts.max_facts_per_agent": 3}):
        seed_facts(agent, 2)
        fact = save(alice, "a/", "third")
        response = alice.post(FACTS, {"path": "a/", "text": "fourth"})
        assert response.status_code == 409
        assert error_of(response)["reason"] == "memory_full"
        # Replacing doesn't add a fact; deleting frees room.
        save(alice, "a/", "third again", replaces=fact["id"])
        assert alice.delete(f"{FACTS}/{fact['id']}").status_code == 204
        save(alice, "a/", "fits again")


def test_limit_counts_each_agent_separately(tenant, agent, alice):
    from tests.factories import create_agent
    from tests.facts.conftest import run_for

    other = create_agent(tenant.owner, {"name": "Other"})
    with override_settings(MEMORYHUB_SETTINGS={"facts.max_facts_per_agent": 1}):
        save(alice, "a/", "one")
        assert save(run_for(tenant, other, "alice")[1], "a/", "one too")


# -- listing ------------------------------------------------------------------------------
def test_listing_is_newest_first_with_a_next_cursor(alice):
    ids = [save(alice, "notes/", f"fact {i}")["id"] for i in range(5)]
    page = alice.get(FACTS, {"limit": 2}).json()
    assert [f["id"] for f in page["facts"]] == ids[:-3:-1]
    assert page["next"] == ids[3]
    page = alice.get(FACTS, {"limit": 2, "before": page["next"]}).json()
    assert [f["id"] for f in page["facts"]] == [ids[2], ids[1]]
    page = alice.get(FACTS, {"limit": 2, "before": page["next"]}).json()
    assert [f["id"] for f in page["facts"]] == [ids[0]] and page["next"] is None
    # A replaced fact is the newest.
    save(alice, "notes/", "changed", replaces=ids[0])
    assert alice.get(FACTS, {"limit": 1}).json()["facts"][0]["id"] == ids[0]


def test_listing_default_limit_is_50(alice, agent):
    seed_facts(agent, 60)
    page = alice.get(FACTS).json()
    assert len(page["facts"]) == 50 and page["next"]


def test_tag_filter_needs_every_tag(alice):
    both = save(alice, "t/", "both", tags=["a", "b"])
    save(alice, "t/", "only a", tags=["a"])
    listed = alice.get(FACTS, {"tags": "a,b"}).json()["facts"]
    assert [f["id"] for f in listed] == [both["id"]]
    assert len(alice.get(FACTS, {"tags": "a"}).json()["facts"]) == 2


@pytest.mark.parametrize(
    "params",
    [{"limit": 0}, {"limit": 201}, {"limit": "x"}, {"limit": -1}, {"before": "zzz"},
     {"before": "m_99999"}, {"tags": "a b"}, {"path": "a//"}],
)  # fmt: skip
def test_bad_list_parameters_are_422(alice, params):
    response = alice.get(FACTS, params)
    assert response.status_code == 422, response.content


def test_limit_edges(alice):
    save(alice)
    assert alice.get(FACTS, {"limit": 1}).status_code == 200
    assert alice.get(FACTS, {"limit": 200}).status_code == 200


def test_the_key_is_unique_in_the_database_not_only_checked_first(alice, monkeypatch):
    """A second write that misses the first one's key (a race) hits the unique constraint
    and still answers the first write."""
    from facts.services import writing

    first = alice.post(FACTS, {"path": "notes/", "text": "once", "key": "raced"}).json()
    real_replay = writing._replay
    calls = []

    def replay_missing_the_first_time(scope, key):
        calls.append(key)
        return None if len(calls) == 1 else real_replay(scope, key)

    monkeypatch.setattr(writing, "_replay", replay_missing_the_first_time)
    again = alice.post(FACTS, {"path": "notes/", "text": "twice", "key": "raced"})
    assert again.status_code == 200 and again.json() == first
    assert len(calls) == 2 and Fact.objects.count() == 1
