"""/v0/memory/search: prefix OR full-text search, Turkish and English case folding, ranking,
hostile queries and the GIN index.
"""

from __future__ import annotations

import random

import pytest
from django.db import connection, transaction

from facts import search
from facts.paths import Folder, Viewer
from facts.scope import REAL_MEMORY, FactScope
from facts.services.reading import search_facts
from tests.conftest import error_of
from tests.facts.conftest import save, seed_facts

SEARCH = "/v0/memory/search"


def found(api, query, **fields) -> list[str]:
    response = api.post(SEARCH, {"query": query, **fields})
    assert response.status_code == 200, response.content
    return [f["text"] for f in response.json()["facts"]]


def test_prefix_matching_finds_longer_words(alice):
    save(alice, text="The directors met on Monday.")
    save(alice, text="Nothing related.")
    assert found(alice, "direct") == ["The directors met on Monday."]
    assert found(alice, "irectors") == []  # prefixes, not infixes


def test_every_word_is_or_ed(alice):
    save(alice, text="apples are red")
    save(alice, text="bananas are yellow")
    save(alice, text="cherries")
    assert sorted(found(alice, "apple banana")) == ["apples are red", "bananas are yellow"]


def test_no_stemming(alice):
    save(alice, text="running fast")
    assert found(alice, "runs") == []
    assert found(alice, "run") == ["running fast"]


@pytest.mark.parametrize("query", ["İSTANBUL", "Istanbul", "istanbul", "ıstanbul", "iSTAN"])
def test_istanbul_in_every_case(alice, query):
    save(alice, text="Ofis İstanbul'da.")
    save(alice, text="Office in ISTANBUL.")
    save(alice, text="istanbul is big")
    save(alice, text="Ankara")
    assert len(found(alice, query)) == 3


@pytest.mark.parametrize("query", ["IŞIK", "Işık", "ışık", "işik", "ISIK", "isik"])
def test_isik_in_every_case_and_without_accents(alice, query):
    save(alice, text="IŞIK Holding")
    save(alice, text="Işık ailesi")
    save(alice, text="ışık hızı")
    save(alice, text="Ankara")
    assert len(found(alice, query)) == 3


@pytest.mark.parametrize(
    ("text", "query"),
    [("ŞEHİR", "şehir"), ("ĞÜÖÇ", "ğüöç"), ("çiçek", "ÇİÇEK"), ("Öğretmen", "ÖĞRET"),
     ("Ayşe Yılmaz", "AYŞE YILMAZ"), ("Director", "DIRECTOR"), ("ÜSTÜN", "üstün")],
)  # fmt: skip
def test_turkish_and_english_letters_fold_by_case(alice, text, query):
    save(alice, text=text)
    assert found(alice, query) == [text]


def test_fold():
    assert search.fold("İSTANBUL Işık IŞIK ŞĞÜÖÇ") == "istanbul isik isik sguoc"
    assert search.fold("I\u0307stanbul") == "istanbul"  # decomposed İ
    assert search.fold("İZMİR İzmir izmir") == "izmir izmir izmir"
    assert search.fold("Crème brûlée, año, Noël, Ångström") == "creme brulee, ano, noel, angstrom"
    assert search.fold("ﬁle ＡＢＣ") == "file abc"  # NFKD: ligatures and fullwidth letters
    assert search.fold("ガス 한국") == "ガス 한국"  # kana voicing and Hangul are not accents
    assert search.fold("øłß") == "øłß"  # letters without a decomposition stay


def test_ranked_best_first_with_scores(alice):
    # facts.ranking: each matched word adds its weight; repeating a word adds nothing.
    best = save(alice, text="green tea")
    repeated = save(alice, text="tea tea tea with more tea")
    newest = save(alice, text="tea")
    results = alice.post(SEARCH, {"query": "green tea"}).json()["facts"]
    assert [f["id"] for f in results] == [best["id"], newest["id"], repeated["id"]]
    assert results[0]["score"] > results[1]["score"] == results[2]["score"] > 0


def test_ties_are_newest_first(alice):
    ids = [save(alice, text="same words")["id"] for _ in range(3)]
    results = alice.post(SEARCH, {"query": "same"}).json()["facts"]
    assert [f["id"] for f in results] == ids[::-1]
    assert len({f["score"] for f in results}) == 1


def test_empty_query_lists_the_newest_with_null_score(alice):
    ids = [save(alice, text=f"fact {i}")["id"] for i in range(7)]
    for query in ("", "   "):
        results = alice.post(SEARCH, {"query": query}).json()["facts"]
        assert [f["id"] for f in results] == ids[:1:-1]  # k defaults to 5
        assert all(f["score"] is None for f in results)
    assert len(alice.post(SEARCH, {}).json()["facts"]) == 5


def test_k_tags_and_path(alice):
    for i in range(6):
        save(alice, "a/", f"match {i}", tags=["x", "y"] if i % 2 else ["x"])
    save(alice, "b/", "match b", tags=["x", "y"])
    assert len(found(alice, "match", k=50)) == 7
    assert len(found(alice, "match", k=1)) == 1
    assert len(found(alice, "match", k=50, tags=["x", "y"])) == 4
    assert len(found(alice, "match", k=50, tags=["x", "y"], path="a/")) == 3


@pytest.mark.parametrize(
    "fields",
    [{"k": 0}, {"k": 51}, {"k": "5"}, {"k": 1.5}, {"query": 5}, {"query": ["a"]},
     {"tags": "x"}, {"tags": ["a b"]}, {"path": "a//"}, {"other": 1}],
)  # fmt: skip
def test_bad_search_arguments_are_422(alice, fields):
    response = alice.post(SEARCH, {"query": "x", **fields})
    assert response.status_code == 422, response.content
    assert error_of(response)["code"] == "invalid_argument"


def test_search_is_scoped_to_the_agent_and_workspace(alice, tenant, other_tenant):
    from tests.factories import create_agent
    from tests.facts.conftest import run_for

    save(alice, text="needle")
    other_agent = create_agent(tenant.owner, {"name": "Other"})
    assert found(run_for(tenant, other_agent, "alice")[1], "needle") == []
    stranger_agent = create_agent(other_tenant.owner, {"name": "Stranger"})
    assert found(run_for(other_tenant, stranger_agent, "alice")[1], "needle") == []


def _hostile_queries() -> list[str]:
    rng = random.Random(1234)
    specials = ["'", '"', "&", "|", "!", ":*", "(", ")", "\\", "<->", "<1>", ":", "*", "%",
                "_", ";", "--", "/*", "\x01", "\u0307", "\ufeff", "🙂", "\u202e", "$$",
                "\t"]  # fmt: skip
    words = ["direct", "İstanbul", "ışık", "a", "or", "and", "not", "select", "drop"]
    queries = [*specials, "".join(specials), "' | '", "a & !b", "'a':* | ", "!!!", "(((",
               "\\'", "''", "x:*A", "a:B", "a <-> b", "&&&&&", "|" * 1000,
               " ".join(words * 500), "w " * 3000, "x" * 5000, "ab" * 2000 + " c"]  # fmt: skip
    for _ in range(300):
        pieces = [rng.choice(specials + words) for _ in range(rng.randint(1, 12))]
        queries.append(rng.choice(["", " "]).join(pieces))
    return queries


def test_hostile_queries_answer_200_or_422_never_500(alice):
    save(alice, text="The directors of İstanbul ışık")
    statuses = set()
    for query in _hostile_queries():
        for api_call in (
            lambda q: alice.post(SEARCH, {"query": q}),
            lambda q: alice.post("/v0/memory/context", {"query": q}),
        ):
            response = api_call(query)
            assert response.status_code in (200, 422), (query, response.content)
            statuses.add(response.status_code)
    assert 200 in statuses


def test_only_punctuation_finds_nothing(alice):
    save(alice, text="something")
    assert found(alice, "!!! ''' &|") == []


def test_thousands_of_words_use_the_first_ones(alice):
    save(alice, text="needle")
    assert found(alice, "needle " + " ".join(f"w{i}" for i in range(5000))) == ["needle"]


def test_query_text_is_escaped_into_prefix_terms():
    words = search.query_words("Direct' | !x:* (İSTANBUL) a\\b")
    assert words == ["direct", "x", "istanbul", "a", "b"]
    assert search.tsquery_text(["it's"]) == "'it''s':*"
    assert search.tsquery_text(["a\\b"]) == "'a\\\\b':*"


@pytest.mark.django_db
def test_search_uses_the_gin_index(agent):
    seed_facts(agent, 5000, words="common filler text")
    seed_facts(agent, 3, words="needle")
    scope = FactScope(agent.workspace_id, agent.id, REAL_MEMORY, Viewer(is_run=False))
    assert len(search_facts(scope, "needle", folders=[Folder("", None, False)], k=5)) == 3
    words = search.query_words("needle")
    tsquery = search.SearchQuery(search.tsquery_text(words), search_type="raw", config="simple")
    with transaction.atomic(), connection.cursor() as cursor:
        # A table this small is cheaper to scan; the bench shows the plan at 100,000 facts.
        cursor.execute("ANALYZE facts_fact")
        cursor.execute("SET LOCAL enable_seqscan = off")
        plan = scope.facts().filter(search_vector=tsquery).explain()
    assert "Bitmap Index Scan on fact_search_gin" in plan, plan
