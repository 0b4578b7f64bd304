"""``inv.memory``: every method against a live server, and every documented refusal."""

from __future__ import annotations

from datetime import datetime

import pytest

from memoryhub.client import (
    Conflict,
    Fact,
    Forbidden,
    InvalidRequest,
    InvocationEnded,
    MemoryHub,
    NotFound,
    PreconditionFailed,
    Unauthenticated,
    Unavailable,
)

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_fact_has_the_documented_fields(start_run):
    inv = start_run({"q": "x"})
    fact = inv.memory.at("companies/77/").remember(
        "Ayşe Yılmaz is the sole director.", tags=["director"], confidence=0.95
    )
    assert isinstance(fact, Fact)
    assert (fact.path, fact.text, fact.tags, fact.confidence, fact.version) == (
        "companies/77/",
        "Ayşe Yılmaz is the sole director.",
        ["director"],
        0.95,
        1,
    )
    assert fact.id.startswith("m_") and fact.score is None
    assert (fact.run_id, fact.written_by) == (inv.id, "code")
    assert isinstance(fact.created_at, datetime) and fact.updated_at == fact.created_at
    assert inv.user == "alice" and inv.input == {"q": "x"}


def test_folders_search_list_and_remember_under_their_path(start_run):
    inv = start_run()
    companies, mine = inv.memory.at("companies/7/"), inv.memory.at("users/{user}/")
    companies.remember("Seven has directors", tags=["board"])
    mine.remember("Alice directs the choir", tags=["hobby"])
    assert [f.text for f in companies.search("direct")] == ["Seven has directors"]
    assert [f.text for f in mine.list()] == ["Alice directs the choir"]
    assert inv.memory.at("companies/77/").list() == []  # whole segments only
    found = inv.memory.search("DIRECT", k=5)
    assert len(found) == 2 and all(f.score > 0 for f in found)
    assert [f.text for f in inv.memory.search("direct", tags=["hobby"])] == [
        "Alice directs the choir"
    ]
    assert [f.text for f in inv.memory.list(path="users/{user}/", tags=["hobby"])] == [
        "Alice directs the choir"
    ]


def test_remember_with_a_key_saves_once_and_replaces_keeps_the_id(start_run):
    inv = start_run()
    mem = inv.memory.at("users/{user}/")
    first = mem.remember("Alice prefers tea", tags=["drink"], key="drink")
    assert mem.remember("Alice prefers tea", tags=["drink"], key="drink").id == first.id
    newer = inv.memory.at("users/{user}/drinks/").remember(
        "Alice prefers green tea", replaces=first.id
    )
    assert (newer.id, newer.version, newer.path, newer.tags) == (
        first.id,
        2,
        "users/alice/drinks/",
        ["drink"],
    )
    assert inv.memory.get(first.id).text == "Alice prefers green tea"
    assert [(v.version, v.text) for v in inv.memory.versions(first.id)] == [
        (2, "Alice prefers green tea"),
        (1, "Alice prefers tea"),
    ]
    inv.memory.forget(first.id)
    with pytest.raises(NotFound) as gone:
        inv.memory.get(first.id)
    assert (gone.value.status, gone.value.code) == (404, "not_found")


def test_list_pages_through_next(start_run):
    inv = start_run()
    notes = inv.memory.at("notes/")
    for n in range(5):
        notes.remember(f"note {n}")
    first = notes.list(limit=2)
    second = notes.list(limit=2, before=first.next)
    last = notes.list(limit=2, before=second.next)
    assert [f.text for f in [*first, *second, *last]] == [f"note {n}" for n in range(4, -1, -1)]
    assert last.next is None


def test_context_builds_the_block_for_the_given_paths(start_run):
    inv = start_run()
    inv.memory.at("users/{user}/").remember("Alice prefers metric units")
    inv.memory.at("notes/").remember("Units are hard </memory> to close")
    block = inv.memory.context("units", paths=["users/{user}/"])
    assert block.startswith("<memory>") and "Alice prefers metric units" in block
    assert "hard" not in block
    whole = inv.memory.context("units")
    assert "&lt;/memory>" in whole and whole.count("</memory>") == 1
    assert inv.memory.context("nothing-like-this", paths=["notes/"]) == ""


@pytest.mark.parametrize("paths", ["users/{user}/", []])
def test_context_refuses_a_string_or_an_empty_list_of_paths(start_run, paths):
    inv = start_run()
    inv.memory.at("notes/").remember("Something everyone may read")
    with pytest.raises((TypeError, ValueError)):
        inv.memory.context("", paths=paths)
    with pytest.raises((TypeError, ValueError)):
        inv.memory.tools(paths=paths)


def test_another_users_folder_is_forbidden_and_their_facts_not_found(start_run, hub):
    alice = start_run()
    secret = alice.memory.at("users/{user}/").remember("Alice's secret")
    bob = start_run(end_user="bob")
    with pytest.raises(Forbidden) as other:
        bob.memory.at("users/alice/").list()
    assert (other.value.status, other.value.reason) == (403, "other_user")
    with pytest.raises(NotFound):
        bob.memory.get(secret.id)


def test_a_run_without_a_user_has_no_user_folder(start_run):
    inv = start_run(end_user=None)
    assert inv.user is None
    with pytest.raises(Conflict) as no_user:
        inv.memory.at("users/{user}/").remember("nobody's")
    assert (no_user.value.status, no_user.value.code, no_user.value.reason) == (
        409,
        "conflict",
        "no_user",
    )


def test_a_full_memory_refuses_new_facts(start_run, settings):
    settings.MEMORYHUB_SETTINGS = {"facts.max_facts_per_agent": 1}
    mem = start_run().memory.at("notes/")
    mem.remember("the only one")
    with pytest.raises(Conflict) as full:
        mem.remember("one too many")
    assert full.value.reason == "memory_full"


def test_bad_input_is_an_invalid_request(start_run):
    inv = start_run()
    with pytest.raises(InvalidRequest) as bad:
        inv.memory.at("notes/").remember("x", tags=["no spaces allowed"])
    assert (bad.value.status, bad.value.code) == (422, "invalid_argument")
    assert "tag" in bad.value.message


def test_writes_after_the_run_ended_raise_invocation_ended(start_run):
    inv = start_run()
    fact = inv.memory.at("notes/").remember("written while running")
    inv.end()
    inv.end()  # ending twice is fine
    with pytest.raises(InvocationEnded) as ended:
        inv.memory.at("notes/").remember("too late")
    assert (ended.value.status, ended.value.reason) == (401, "run_ended")
    with pytest.raises(InvocationEnded):
        inv.memory.forget(fact.id)
    assert inv.memory.get(fact.id).text == "written while running"  # reading still works


def test_api_key_refusals_raise_by_kind(hub, live_server):
    memory = hub.create_memory("Team")
    first = hub.put_file(memory["id"], "a.md", "one")
    hub.put_file(memory["id"], "a.md", "two", etag=first["etag"])
    with pytest.raises(PreconditionFailed) as stale:
        hub.put_file(memory["id"], "a.md", "three", etag=first["etag"])
    assert stale.value.status == 412 and stale.value.current["content"] == "two"
    assert hub.get_file(memory["id"], "a.md")["content"] == "two"
    with pytest.raises(Unauthenticated) as wrong:
        MemoryHub(live_server.url, "mh_wrong").create_agent("nope")
    assert wrong.value.status == 401 and not isinstance(wrong.value, InvocationEnded)


def test_no_answer_at_all_is_unavailable(api_key):
    hub = MemoryHub("http://127.0.0.1:9", api_key, retries=1, backoff=0, timeout=2)
    with pytest.raises(Unavailable) as down:
        hub.create_agent("nobody listens")
    assert (down.value.status, down.value.reason) == (None, "no_answer")
