"""Real parallel connections: the facts limit, idempotency keys and concurrent replaces."""

from __future__ import annotations

from collections import Counter

import pytest

from facts.models import Fact, FactVersion
from tests.conftest import Api
from tests.facts.conftest import counted, run_for, save, seed_facts, token_for
from tests.parallel import in_parallel

FACTS = "/v0/memory/facts"
pytestmark = pytest.mark.django_db(transaction=True)


def test_twenty_writers_cannot_overshoot_100000_facts(tenant, agent):
    seed_facts(agent, 99_990)
    tokens = [run_for(tenant, agent, f"user{i}")[1] for i in range(20)]
    results = in_parallel(
        20, lambda i: tokens[i].post(FACTS, {"path": "race/", "text": f"racer {i}"}).status_code
    )
    assert Counter(results) == {201: 10, 409: 10}, results
    assert Fact.objects.filter(agent=agent).count() == 100_000
    assert counted(agent) == 100_000


def test_two_writes_with_the_same_key_at_once(tenant, agent):
    _, token = token_for(tenant, agent, "alice")

    def write(i: int):
        response = Api(run_token=token).post(
            FACTS, {"path": "notes/", "text": f"attempt {i}", "key": "once"}
        )
        return response.status_code, response.json()

    results = in_parallel(2, write)
    assert sorted(status for status, _ in results) == [200, 201], results
    assert results[0][1] == results[1][1]
    assert Fact.objects.count() == 1 and FactVersion.objects.count() == 1
    assert counted(agent) == 1


def test_concurrent_replaces_keep_versions_gapless(tenant, agent):
    _, token = token_for(tenant, agent, "alice")
    api = Api(run_token=token)
    fact = save(api, "notes/", "v1")

    def replace(i: int):
        response = Api(run_token=token).post(
            FACTS, {"path": "notes/", "text": f"writer {i}", "replaces": fact["id"]}
        )
        return response.status_code, response.json()["version"]

    results = in_parallel(10, replace)
    assert all(status == 201 for status, _ in results), results
    assert sorted(version for _, version in results) == list(range(2, 12))
    versions = api.get(f"{FACTS}/{fact['id']}/versions").json()["versions"]
    assert [v["version"] for v in versions] == list(range(11, 0, -1))
    assert api.get(f"{FACTS}/{fact['id']}").json()["version"] == 11


def test_parallel_first_writers_of_a_new_memory_all_succeed(tenant, agent):
    # The first facts of a memory create its counter row: no deadlock, no 500.
    apis = [run_for(tenant, agent, f"user{i}")[1] for i in range(16)]
    results = in_parallel(
        16, lambda i: apis[i].post(FACTS, {"path": "r/", "text": f"fact {i}"}).status_code
    )
    assert results == [201] * 16, results
    assert counted(agent) == 16
    from facts.models import FactTerm

    assert sum(t.facts for t in FactTerm.objects.filter(agent=agent, term="")) == 16
