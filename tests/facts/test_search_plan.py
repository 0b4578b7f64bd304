"""The search's plans keep their shape whatever the planner's statistics say (issue 18).

Statistics gathered before an agent's facts were written say the agent has none: the
planner then expected one row in its range of ``fact_agent_newest`` and read the whole
range and sorted it, instead of reading newest first and stopping at k.
"""

from __future__ import annotations

import random

import pytest
from django.db import connection

from facts import terms
from facts.paths import Folder, Viewer
from facts.ranking import weigh
from facts.scope import REAL_MEMORY, FactScope
from facts.search import _where
from facts.services.reading import search_facts
from facts.topk import MAX_DRIVERS, TopK, sufficient_sets
from tests.facts.conftest import run_for, save, seed_facts
from tests.protocol import round_trips

FACTS = 5000
UNSORTED = TopK._fetch_unsorted  # how the search runs a newest-first read
FETCH = TopK._fetch  # how it runs the others


@pytest.fixture
def stale(agent, tenant):
    """The agent's facts written after the table was analyzed with another agent's only."""
    from tests.factories import create_agent

    seed_facts(create_agent(tenant.owner, {"name": "Noise"}), FACTS, words="common filler")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE facts_fact")
    seed_facts(agent, FACTS, words="common filler text")
    viewer = Viewer(is_run=True, end_user_id="usr_me", end_user_external_id="me")
    return FactScope(agent.workspace_id, agent.id, REAL_MEMORY, viewer)


def newest_first_sql(stale, monkeypatch, query: str) -> list[tuple[str, list]]:
    seen: list[tuple[str, list]] = []

    def recorded(sql: str, params: list) -> list[tuple]:
        seen.append((sql, params))
        return UNSORTED(sql, params)

    monkeypatch.setattr(TopK, "_fetch_unsorted", staticmethod(recorded))
    found = search_facts(stale, query, folders=[Folder("", None, False)], k=5)
    assert len(found) == 5
    return seen


@pytest.mark.django_db
def test_a_common_word_reads_newest_first_with_stale_statistics(stale, monkeypatch):
    seen = newest_first_sql(stale, monkeypatch, "common")
    assert seen, "a word in every fact is found newest first"
    monkeypatch.undo()
    for sql, params in seen:
        rows = UNSORTED("EXPLAIN " + sql, params)
        plan = "\n".join(row[0] for row in rows)
        assert plan.startswith("Limit"), plan
        assert "Index Scan using fact_agent_newest" in plan, plan
        assert "Sort" not in plan, plan


@pytest.mark.django_db
def test_scoring_every_match_reads_the_matches_alone_with_stale_statistics(
    stale, agent, monkeypatch
):
    """A word in a few of the memory's facts is scored through the GIN index, not by
    reading the memory's whole range, which the planner chose when it expected no rows
    there (27 ms instead of 2 for a word in 433 of 100,000 facts)."""
    seed_facts(agent, 40, path="rare/", words="lighthouse keeper")
    memory, owners = stale.memory, stale.statistics_owners()
    stats = terms.document_frequencies(memory, ["lighthouse"], owners)
    held = [n > 0 for n in stats.whole_dfs]
    words = weigh(stats.total, ["lighthouse"], stats.dfs, held, stats.longer)
    topk = TopK(memory, _where(stale.facts()), None, stats, 5)
    topk.common(words)  # which reads the words' postings counts
    seen: list[tuple[str, list]] = []

    def recorded(sql: str, params: list) -> list[tuple]:
        seen.append((sql, params))
        return FETCH(sql, params)

    monkeypatch.setattr(TopK, "_fetch", staticmethod(recorded))
    hits = topk._score_every_match(words, words)
    assert [hit.score for hit in hits] == [words[0].most] * 5  # each holds it whole
    monkeypatch.undo()
    [(sql, params)] = seen
    plan = "\n".join(row[0] for row in FETCH("EXPLAIN " + sql, params))
    assert "fact_memory_terms_gin" in plan and "newest" not in plan, plan


def test_every_fact_reaching_the_threshold_holds_a_sufficient_set():
    words = weigh(1000, ["a", "b", "c", "d"], [10, 50, 400, 900])
    total = sum(w.idf for w in words)
    sets = sufficient_sets(words, total * 0.6)
    assert sets is not None
    for mask in range(16):
        held = [w for i, w in enumerate(words) if mask >> i & 1]
        if sum(w.idf for w in held) >= total * 0.6:
            assert any({w.text for w in s} <= {w.text for w in held} for s in sets), held


def test_a_long_question_s_drivers_each_alone_still_hold_every_fact_reaching_it():
    """A 32-word question needs more drivers than conjunctions of them can take: each
    driver alone is then a set, and a fact holding none of them falls short."""
    rng = random.Random(18)
    texts = [f"w{i}" for i in range(MAX_DRIVERS + 8)]
    words = weigh(100_000, texts, [rng.randint(50, 20_000) for _ in texts])
    threshold = sum(sorted(w.idf for w in words)[-3:])  # about three mid-rare words' worth
    sets = sufficient_sets(words, threshold)
    assert sets is not None and all(len(each) == 1 for each in sets)
    assert len(sets) > MAX_DRIVERS, "more drivers than conjunctions take"
    drivers = {each[0].text for each in sets}
    for _ in range(20_000):
        held = [w for w in words if rng.random() < 0.5]
        if sum(w.idf for w in held) >= threshold:
            assert drivers & {w.text for w in held}, held
    lightest = [w for w in words if w.text not in drivers]
    assert sum(w.idf for w in lightest) < threshold, "the words left out cannot reach it"


@pytest.mark.django_db(transaction=True)
def test_a_newest_first_read_outside_a_transaction_is_one_round_trip(stale, monkeypatch):
    """As a request runs it (autocommit): its planner setting lasts for the read alone."""
    seen = newest_first_sql(stale, monkeypatch, "common")
    with round_trips() as sent:
        rows = UNSORTED(*seen[0])
    assert len(rows) == 5
    assert len(sent) == 1, sent
    monkeypatch.undo()
    plan = "\n".join(row[0] for row in UNSORTED("EXPLAIN " + seen[0][0], seen[0][1]))
    assert "Index Scan using fact_agent_newest" in plan and "Sort" not in plan, plan
    with connection.cursor() as cursor:
        cursor.execute("SHOW enable_sort")
        assert cursor.fetchone()[0] == "on"


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("query", "found"),
    [
        ("zebra", ["a zebra at noon"]),  # a rare word: its facts through GIN, scored
        ("the", ["the third", "the second", "the first"]),  # a common one: newest first
    ],
)
def test_a_short_query_loads_its_facts_with_the_query_that_finds_them(tenant, agent, query, found):
    """Three round trips on a connection that prepared its statements: the run token, the
    words' statistics, the search's one query, which reads the facts' columns too: none
    more to load them."""
    _, alice = run_for(tenant, agent, "alice")
    for text in ["the first", "a zebra at noon", "the second", "the third"]:
        save(alice, "notes/", text)
    alice.post("/v0/memory/search", {"query": "noon"})  # its statements prepared
    with round_trips() as sent:
        response = alice.post("/v0/memory/search", {"query": query})
    assert [fact["text"] for fact in response.json()["facts"]] == found
    assert len(sent) == 3, sent


@pytest.mark.django_db
def test_the_caller_s_transaction_keeps_its_planner_settings(stale, monkeypatch):
    """The tests run in a transaction, as a search inside a caller's atomic block does."""
    assert newest_first_sql(stale, monkeypatch, "common")
    with connection.cursor() as cursor:
        cursor.execute("SHOW enable_sort")
        assert cursor.fetchone()[0] == "on"
