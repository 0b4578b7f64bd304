"""The documented ranking (facts.ranking) on a hand-made corpus, and the term statistics
the triggers keep on every kind of write.
"""

from __future__ import annotations

import math

import pytest
from django.db import connection
from django.db.models import Sum

from facts import ranking
from facts.models import Fact, FactTerm
from tests.facts.conftest import save, seed_facts

SEARCH = "/v0/memory/search"


def ranked(api, query: str, **fields) -> list[tuple[str, float]]:
    response = api.post(SEARCH, {"query": query, "k": 50, **fields})
    assert response.status_code == 200, response.content
    return [(f["text"], f["score"]) for f in response.json()["facts"]]


def texts(api, query: str) -> list[str]:
    return [text for text, _ in ranked(api, query)]


@pytest.fixture
def common_words(alice):
    """Twenty facts full of the common words "the", "user" and "is"."""
    for i in range(20):
        save(alice, text=f"the user is here {i}")
    return alice


def test_a_rare_word_outranks_only_common_words(common_words):
    rare = save(common_words, "notes/", "zebra")["text"]
    results = texts(common_words, "the user zebra")
    assert results[0] == rare
    assert len(results) == 21


def test_more_matched_words_outrank_fewer(alice):
    both = save(alice, text="apple banana")["text"]
    save(alice, text="apple pie")
    save(alice, text="banana split")
    results = ranked(alice, "apple banana")
    assert results[0][0] == both
    assert results[0][1] > results[1][1] == results[2][1]


def test_newest_first_on_ties_and_common_only_below(common_words):
    older = save(common_words, text="the user likes tea")["text"]
    newer = save(common_words, text="tea for the user")["text"]
    results = texts(common_words, "tea user")
    assert results[:2] == [newer, older]
    assert results[2] == "the user is here 19"  # then the newest of the common-only


def test_the_score_is_the_documented_sum(alice):
    for text in ["red apple", "green apple", "red car", "blue sky"]:
        save(alice, text=text)
    score = dict(ranked(alice, "red apple"))
    red, apple = ranking.idf(4, 2), ranking.idf(4, 2)
    assert score["red apple"] == pytest.approx(red + apple + 2 * ranking.WHOLE)
    assert score["red car"] == pytest.approx(red + ranking.WHOLE)
    assert ranking.idf(4, 2) == pytest.approx(math.log1p(2.5 / 2.5))


def test_a_word_held_whole_outranks_a_longer_word_it_starts(alice):
    whole = save(alice, text="the direct route")["text"]
    longer = save(alice, text="the directors met")["text"]  # newer, but only a prefix
    results = ranked(alice, "direct")
    assert [text for text, _ in results] == [whole, longer]
    assert results[0][1] == pytest.approx(results[1][1] + ranking.WHOLE)


def test_matching_more_words_outranks_holding_them_whole(alice):
    both = save(alice, text="directors and routes")["text"]  # both only by prefix
    save(alice, text="the direct way")
    save(alice, text="filler words")
    assert texts(alice, "direct route")[0] == both


def test_facts_holding_the_same_words_whole_tie_newest_first(alice):
    older = save(alice, text="direct flights")["text"]
    newer = save(alice, text="a direct line")["text"]
    save(alice, text="directors")
    results = ranked(alice, "direct")
    assert [text for text, _ in results[:2]] == [newer, older]
    assert results[0][1] == results[1][1]


def test_a_prefix_weighs_by_all_the_words_it_starts(alice):
    for text in ["director", "directors meet", "direction", "other"]:
        save(alice, text=text)
    scores = {score for _, score in ranked(alice, "direct")}
    assert scores == {round(ranking.idf(4, 3), 6)}  # none holds "direct" whole


@pytest.mark.parametrize("query", ["İSTANBUL", "ıstanbul", "Istanbul", "istan"])
def test_turkish_folding_ranks_every_spelling_alike(alice, query):
    first = save(alice, text="Ofis İstanbul'da.")["text"]
    second = save(alice, text="Office in ISTANBUL.")["text"]
    third = save(alice, text="ıstanbul is big")["text"]
    save(alice, text="Ankara")
    results = ranked(alice, query)
    assert [text for text, _ in results] == [third, second, first]
    assert len({score for _, score in results}) == 1


def terms_of(agent, scope: str = "") -> dict[str, int]:
    """The memory's statistics, every owner's rows added up."""
    rows = FactTerm.objects.filter(agent=agent, scope=scope).values("term")
    return {row["term"]: row["facts"] for row in rows.annotate(facts=Sum("facts"))}


def recount(agent, scope: str = "") -> dict[str, int]:
    """The statistics computed from scratch, to compare with the ones kept on write."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT term, count(*) FROM (SELECT unnest(tsvector_to_array(search_vector)) AS term"
            " FROM facts_fact WHERE agent_id = %s AND scope = %s UNION ALL SELECT ''"
            " FROM facts_fact WHERE agent_id = %s AND scope = %s) t GROUP BY term",
            [agent.id, scope, agent.id, scope],
        )
        return dict(cursor.fetchall())


def test_statistics_follow_saves_replaces_and_deletes(alice, agent):
    first = save(alice, text="Tea and coffee")
    save(alice, text="tea again")
    assert terms_of(agent) == {"": 2, "tea": 2, "and": 1, "coffee": 1, "again": 1}
    save(alice, text="coffee only", replaces=first["id"])
    assert terms_of(agent) == {"": 2, "tea": 1, "coffee": 1, "only": 1, "again": 1}
    assert alice.delete(f"/v0/memory/facts/{first['id']}").status_code == 204
    assert terms_of(agent) == {"": 1, "tea": 1, "again": 1}
    assert terms_of(agent) == recount(agent)


def test_statistics_follow_bulk_writes_and_erasure(alice, bob, agent):
    seed_facts(agent, 300, words="bulk words")
    save(bob, "users/{user}/", "bob's secret")
    save(alice, "users/{user}/", "alice's note")
    assert terms_of(agent) == recount(agent)
    assert terms_of(agent)[""] == 302
    Fact.objects.filter(agent=agent, text__startswith="bulk words 1").delete()
    assert terms_of(agent) == recount(agent)
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM facts_fact WHERE agent_id = %s", [agent.id])
    assert terms_of(agent) == {}


def test_statistics_are_per_memory(tenant, alice, agent):
    from tests.factories import create_agent
    from tests.facts.conftest import run_for

    other = create_agent(tenant.owner, {"name": "Other"})
    save(run_for(tenant, other, "alice")[1], text="shared word")
    save(alice, text="shared word here")
    assert terms_of(agent)["shared"] == 1
    assert terms_of(other) == {"": 1, "shared": 1, "word": 1}


def test_ranking_needs_one_memory():
    from facts import search

    with pytest.raises(ValueError, match="one memory"):
        search.ranked(Fact.objects.all(), "tea", 5)
    assert search.memory_of(Fact.objects.filter(agent_id="agt_1", scope="")) == (
        search.terms.Memory("agt_1", "")
    )
