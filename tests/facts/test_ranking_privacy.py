"""A run's scores never depend on other end users' private facts."""

from __future__ import annotations

from tests.facts.conftest import save

SEARCH = "/v0/memory/search"


def _scores(api, query: str) -> dict[str, float]:
    return {f["id"]: f["score"] for f in api.post(SEARCH, {"query": query}).json()["facts"]}


def test_another_users_private_facts_do_not_move_my_scores(alice, bob):
    shared = save(bob, "notes/", "zebra crossing near the office")
    save(bob, "notes/", "the office is on the corner")
    before = _scores(bob, "zebra office")
    for n in range(5):
        save(alice, "users/{user}/", f"zebra sighting number {n}")
    assert _scores(bob, "zebra office") == before
    # Alice's own facts count in her own statistics, so her scores change.
    assert _scores(alice, "zebra office")[shared["id"]] != before[shared["id"]]


def test_staff_weigh_words_by_every_fact(alice, bob, reader, agent):
    shared = save(bob, "notes/", "zebra crossing")
    save(bob, "notes/", "a plain note")
    url = f"/api/v1/agents/{agent.id}/facts/search"
    before = {
        f["id"]: f["score"] for f in reader.post(url, {"query": "zebra", "k": 10}).json()["facts"]
    }
    for n in range(5):
        save(alice, "users/{user}/", f"zebra {n}")
    after = {
        f["id"]: f["score"] for f in reader.post(url, {"query": "zebra", "k": 10}).json()["facts"]
    }
    assert after[shared["id"]] < before[shared["id"]]  # zebra became common
