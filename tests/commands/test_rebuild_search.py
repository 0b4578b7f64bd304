"""rebuild_search: stale folded text is recomputed, the search and its statistics follow."""

from __future__ import annotations

import pytest
from django.core.management import CommandError

from facts.models import Fact
from tests.commands.conftest import run, run_json
from tests.facts.conftest import run_for, save


@pytest.fixture
def stale(tenant, agent):
    """Three facts, one whose folded text predates the folding rules (it reads 'OLD')."""
    _, api = run_for(tenant, agent, "alice")
    facts = [save(api, "notes/", text) for text in ("İSTANBUL trip", "tea", "coffee")]
    Fact.objects.filter(text="İSTANBUL trip").update(search_text="OLD FOLDING")
    return api, facts


def _found(api, query: str) -> list[str]:
    response = api.post("/v0/memory/search", {"query": query})
    assert response.status_code == 200, response.content
    return [fact["text"] for fact in response.json()["facts"]]


def test_stale_search_text_is_refolded_and_found_again(stale):
    api, _ = stale
    assert _found(api, "istanbul") == []
    result = run_json("rebuild_search", "--batch", "2")
    assert result == {"facts": 3, "refolded": 1, "terms_recounted": False}
    assert _found(api, "istanbul") == ["İSTANBUL trip"]
    assert run_json("verify") == {"differences": [], "repaired": []}
    assert run_json("rebuild_search")["refolded"] == 0  # a rerun changes nothing


def test_after_resumes_past_the_facts_already_done(stale):
    ids = sorted(Fact.objects.values_list("id", flat=True))
    assert run_json("rebuild_search", "--after", str(ids[-1]))["facts"] == 0
    assert run_json("rebuild_search", "--after", str(ids[0]))["facts"] == 2


def test_a_bad_batch_size_is_refused(stale):
    with pytest.raises(CommandError):
        run("rebuild_search", "--batch", "0")
    assert Fact.objects.filter(search_text="OLD FOLDING").exists()


def test_a_fact_folded_before_accents_were_dropped_becomes_findable(tenant, agent):
    _, api = run_for(tenant, agent, "alice")
    save(api, "notes/", "Ayşe şirketin müdürü")
    save(api, "notes/", "tea")
    # Folded the old way: case only, the accents kept.
    Fact.objects.filter(text="Ayşe şirketin müdürü").update(search_text="ayşe şirketin müdürü")
    assert _found(api, "ayse") == _found(api, "sirket mudur") == []
    assert run_json("rebuild_search") == {"facts": 2, "refolded": 1, "terms_recounted": False}
    for query in ("ayse", "sirket mudur", "Ayşe", "ŞİRKET"):
        assert _found(api, query) == ["Ayşe şirketin müdürü"]  # returned as written
    assert run_json("verify") == {"differences": [], "repaired": []}
