"""Fact ids tell nothing about other tenants: random, ``m_<digits>``, old ids still valid."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from django.db import connection

import facts.models
from facts.converters import FactIdConverter
from facts.models import Fact, FactQuota, FactVersion
from facts.validation import fact_pk
from tests.factories import create_agent
from tests.facts.conftest import run_for, save, seed_facts

FACTS = "/v0/memory/facts"


def _pk(fact_id: str) -> int:
    assert re.fullmatch(FactIdConverter.regex, fact_id), fact_id  # the URL answers to it
    return fact_pk(fact_id)  # and the API accepts it as replaces / before


def test_ids_say_nothing_about_other_tenants_writes(alice, other_tenant):
    """An attacker saving a fact, waiting, and saving another cannot count the facts other
    tenants saved in between: neither from the difference nor from the order of its ids."""
    stranger_agent = create_agent(other_tenant.owner, {"name": "Busy"})
    busy = run_for(other_tenant, stranger_agent, "carol")[1]
    mine = []
    for round_ in range(12):
        mine.append(_pk(save(alice, "a/", f"mine {round_}")["id"]))
        for n in range(round_ % 3 + 1):  # the other tenant writes 1-3 facts in between
            save(busy, "b/", f"theirs {round_} {n}")
    for round_, (first, second) in enumerate(zip(mine, mine[1:], strict=False)):
        assert second - first != round_ % 3 + 2, mine
    assert len(set(mine)) == len(mine)
    assert mine != sorted(mine), "ids grow with time"  # 1 chance in 12! of a false alarm


def test_facts_inserted_in_sql_get_random_ids_too(agent):
    """Bulk loads (seeding, imports, the benchmarks) get the database's default."""
    seed_facts(agent, 20)
    ids = list(Fact.objects.filter(agent=agent).order_by("created_at").values_list("id", flat=True))
    assert all(re.fullmatch(FactIdConverter.regex, f"m_{pk}") for pk in ids)
    assert fact_pk(f"m_{ids[0]}") == ids[0]
    assert ids != sorted(ids), "ids grow with time"
    assert not any(b - a == 1 for a, b in zip(ids, ids[1:], strict=False)), ids


def test_an_old_small_id_still_answers(alice, agent, running_run):
    run = running_run[0]
    now = datetime(2025, 1, 1, tzinfo=UTC)
    old = Fact.objects.create(
        id=42, workspace_id=agent.workspace_id, agent=agent, path="old/", text="old fact",
        run_id=run.id, written_by="code", created_at=now, updated_at=now, search_text="old fact",
    )  # fmt: skip
    FactVersion.objects.create(
        workspace_id=agent.workspace_id, agent=agent, fact=old, version=1, path="old/",
        text="old fact", confidence=1.0, run_id=run.id, written_by="code", created_at=now,
    )  # fmt: skip
    FactQuota.objects.create(workspace_id=agent.workspace_id, agent=agent, count=1)
    assert old.pk == 42

    assert alice.get(f"{FACTS}/m_42").json()["text"] == "old fact"
    assert alice.get(FACTS, {"before": "m_42"}).status_code == 200
    replaced = alice.post(FACTS, {"path": "old/", "text": "newer", "replaces": "m_42"})
    assert replaced.status_code == 201, replaced.content
    assert replaced.json()["id"] == "m_42" and replaced.json()["version"] == 2
    versions = alice.get(f"{FACTS}/m_42/versions").json()["versions"]
    assert [(v["id"], v["version"]) for v in versions] == [("m_42", 2), ("m_42", 1)]
    new = save(alice, "old/", "a new fact next to it")
    assert _pk(new["id"]) != 43
    assert alice.delete(f"{FACTS}/m_42").status_code == 204
    assert alice.get(f"{FACTS}/m_42").status_code == 404
    assert alice.get(f"{FACTS}/{new['id']}").status_code == 200


def test_paging_through_facts_of_one_moment_is_exact(alice):
    """Ids no longer follow time, yet ties on updated_at page exactly, one by one."""
    written = {save(alice, "same/", f"fact {n}")["id"] for n in range(30)}
    moment = datetime(2025, 6, 1, tzinfo=UTC)
    Fact.objects.filter(pk__in=[fact_pk(i) for i in written]).update(updated_at=moment)

    def walk() -> list[str]:
        seen, before = [], None
        while True:
            params = {"limit": 1, **({"before": before} if before else {})}
            page = alice.get(FACTS, params).json()
            seen += [f["id"] for f in page["facts"]]
            before = page["next"]
            if before is None:
                return seen

    first = walk()
    assert len(first) == 30 and set(first) == written
    assert first == walk()  # stable
    assert first == sorted(first, key=fact_pk, reverse=True)  # ties: id descending
    assert first == [f["id"] for f in alice.get(FACTS, {"limit": 50}).json()["facts"]]


def test_a_primary_key_collision_is_retried(alice, monkeypatch):
    existing = save(alice, "a/", "already here")
    draws = iter([fact_pk(existing["id"])])
    real = facts.models.new_fact_id
    monkeypatch.setattr(facts.models, "new_fact_id", lambda: next(draws, None) or real())

    response = alice.post(FACTS, {"path": "a/", "text": "collides once", "tags": ["x"]})
    assert response.status_code == 201, response.content
    saved = response.json()
    assert saved["id"] != existing["id"] and saved["text"] == "collides once"
    assert alice.get(f"{FACTS}/{saved['id']}").json()["tags"] == ["x"]
    assert alice.get(f"{FACTS}/{existing['id']}").json()["text"] == "already here"
    assert sum(FactQuota.objects.values_list("count", flat=True)) == 2
    with connection.cursor() as cursor:  # the term statistics counted the new fact once
        cursor.execute("SELECT sum(facts) FROM facts_factterm WHERE term = 'collides'")
        assert cursor.fetchall() == [(1,)]
