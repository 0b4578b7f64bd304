"""Accent-insensitive fact search (issue 18): ``ayse`` finds ``Ayşe`` and ``Ayşe`` finds
``ayse``, over the search endpoint, the context block and the search tool; one word's
spellings rank alike and share their statistics; the upgrade refolds stored facts.
"""

from __future__ import annotations

import importlib
import json
import unicodedata

import pytest
from django.apps import apps as django_apps

from facts import search, terms
from facts.models import Fact, FactTerm
from facts.services import checks
from tests.facts.conftest import save

SEARCH = "/v0/memory/search"

# (as written in the fact, as typed on an English keyboard)
TURKISH = [("Ayşe", "ayse"), ("şirket", "sirket"), ("müdür", "mudur"), ("çağrı", "cagri")]
PAIRS = [
    *TURKISH,
    ("Crème brûlée", "creme brulee"),
    ("año", "ano"),
    ("Noël", "noel"),
    ("île", "ile"),
    ("São Paulo", "sao paulo"),
    ("pâté", "pate"),
]
# Each pair both ways: the accented spelling stored and the plain one typed, and the reverse.
BOTH_WAYS = [(s, q) for a, b in PAIRS for s, q in ((a, b), (b, a))]
TURKISH_BOTH_WAYS = [(s, q) for a, b in TURKISH for s, q in ((a, b), (b, a))]


def found(api, query: str, **fields) -> list[dict]:
    response = api.post(SEARCH, {"query": query, "k": 50, **fields})
    assert response.status_code == 200, response.content
    return response.json()["facts"]


def texts(api, query: str) -> list[str]:
    return [fact["text"] for fact in found(api, query)]


@pytest.mark.parametrize(("stored", "query"), BOTH_WAYS)
def test_search_finds_each_spelling_by_the_other(alice, stored, query):
    text = f"{stored} bu hafta aradı"
    save(alice, text=text)
    save(alice, text="Ankara ofisi")
    assert texts(alice, query) == [text]  # the text as written, accents and all
    assert texts(alice, query.upper()) == [text]


@pytest.mark.parametrize(("stored", "query"), TURKISH_BOTH_WAYS)
def test_the_context_block_finds_each_spelling_by_the_other(alice, stored, query):
    fact = save(alice, "notes/", f"{stored} bu hafta aradı")
    save(alice, "notes/", "Ankara ofisi")
    response = alice.post("/v0/memory/context", {"query": query, "paths": ["notes/"]})
    assert response.status_code == 200, response.content
    lines = response.json()["context"].splitlines()
    assert lines[2:-1] == [f"- {stored} bu hafta aradı ({fact['updated_at'][:10]}, {fact['id']})"]


def _search_tool(api, query: str, call_id: str) -> list[str]:
    tool_call = {
        "id": call_id,
        "type": "function",
        "function": {"name": "search_memory", "arguments": json.dumps({"query": query})},
    }
    body = {"paths": ["users/{user}/"], "tool_call": tool_call}
    response = api.post("/v0/memory/tools/call", body)
    assert response.status_code == 200, response.content
    return [fact["text"] for fact in json.loads(response.json()["content"])["facts"]]


@pytest.mark.parametrize(("stored", "query"), TURKISH_BOTH_WAYS)
def test_the_search_tool_finds_each_spelling_by_the_other(alice, stored, query):
    save(alice, "users/{user}/", f"{stored} bu hafta aradı")
    save(alice, "users/{user}/", "Ankara ofisi")
    assert _search_tool(alice, query, "call_1") == [f"{stored} bu hafta aradı"]


@pytest.mark.parametrize("query", ["izmir", "IZMIR", "İZMİR", "İzmir", "ızmır", "izm"])
def test_turkish_capitals_still_fold(alice, query):
    capitals = save(alice, text="İZMİR şubesi")["text"]
    plain = save(alice, text="izmir subesi")["text"]
    save(alice, text="Ankara")
    assert texts(alice, query) == [plain, capitals]


def test_a_prefix_without_accents_finds_accented_words(alice):
    save(alice, text="Çağrı Öztürk müdürümüz")
    assert texts(alice, "oztu") == texts(alice, "müdürü") == ["Çağrı Öztürk müdürümüz"]


@pytest.fixture
def spellings(alice):
    """Facts spelling Ayşe and şirket both ways, among other facts."""
    for text in [
        "Ayşe şirketin müdürü",
        "ayse sirkette calisiyor",
        "AYŞE toplantıda",
        "şirket Ankara'da",
        "Mehmet çağrı merkezinde",
        "sirket kurallari",
        "başka bir not",
        "Ayse",
    ]:
        save(alice, text=text)
    return alice


@pytest.mark.parametrize("words", [["ayse", "Ayşe", "AYŞE", "aysE"], ["sirket", "şirket"],
                                   ["ayse sirket", "Ayşe şirket", "AYŞE sirket"]])  # fmt: skip
def test_every_spelling_gives_the_same_order_and_scores(spellings, words):
    first, *others = [[(f["id"], f["score"]) for f in found(spellings, w)] for w in words]
    assert len(first) >= 3
    for other in others:
        assert other == first


def test_exact_and_folded_spellings_tie_newest_first(alice):
    older = save(alice, text="Ayşe aradı")["text"]
    newer = save(alice, text="ayse aradi")["text"]
    for query in ("Ayşe", "ayse"):
        results = found(alice, query)
        assert [f["text"] for f in results] == [newer, older]  # the exact one is not first
        assert results[0]["score"] == results[1]["score"]


def test_an_accented_word_is_held_whole_by_its_unaccented_query(alice):
    whole = save(alice, text="Ayşe aradı")["text"]
    longer = save(alice, text="ayseler geldi")["text"]  # newer, but only a longer word
    for query in ("ayse", "AYŞE"):
        assert [f["text"] for f in found(alice, query)] == [whole, longer], query


def test_one_word_has_one_statistic_whatever_its_spelling(spellings, agent):
    memory = terms.Memory(agent.id, "")
    accented, plain = (
        terms.document_frequencies(memory, search.query_words(word))
        for word in ("şirket", "sirket")
    )
    assert accented == plain
    assert plain.dfs == [4]  # şirketin, sirkette, şirket, sirket: every spelling counted
    counted = FactTerm.objects.filter(agent=agent).values_list("term", flat=True)
    assert "sirket" in counted and "ayse" in counted
    assert all(term.isascii() for term in counted)  # no accented spelling counted apart


def test_folding_twice_changes_nothing():
    """A rerun of rebuild_search finds nothing to refold, whatever the text."""
    everything = "".join(chr(c) for c in range(0x20, 0x10000) if not 0xD800 <= c <= 0xDFFF)
    once = search.fold(everything)
    assert search.fold(once) == once


# -- the upgrade ----------------------------------------------------------------------------
MIGRATION = importlib.import_module("facts.migrations.0010_accent_folding")


def _old_fold(text: str) -> str:
    """The folding before accents were dropped (case only), as stored facts still hold it."""
    composed = unicodedata.normalize("NFC", text)
    return composed.translate(str.maketrans({"I": "i", "İ": "i", "ı": "i"})).lower()


@pytest.fixture
def old_folded(alice):
    """Two facts whose search text was folded before accents were dropped."""
    for text in ("Ayşe Yılmaz şirketin müdürü", "Çağrı Bey aradı"):
        save(alice, text=text)
        Fact.objects.filter(text=text).update(search_text=_old_fold(text))
    assert _old_fold("Ayşe Yılmaz") == "ayşe yilmaz"
    return alice


def test_the_migration_refolds_old_facts_and_keeps_statistics_exact(old_folded):
    assert texts(old_folded, "ayse") == texts(old_folded, "cagri") == []
    MIGRATION.refold(django_apps, None)
    assert texts(old_folded, "ayse mudur") == ["Ayşe Yılmaz şirketin müdürü"]
    assert texts(old_folded, "Çağrı") == texts(old_folded, "cagri") == ["Çağrı Bey aradı"]
    assert checks.term_differences() == []  # what manage.py verify checks


def test_the_migration_refolds_backwards_too():
    (refold,) = MIGRATION.Migration.operations
    assert refold.code is refold.reverse_code is MIGRATION.refold
    assert not MIGRATION.Migration.atomic  # batches of short transactions, as rebuild_search
