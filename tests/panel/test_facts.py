"""An agent's facts in the panel: tree, list, search, versions with diffs, forgetting."""

from __future__ import annotations

import pytest

from tests.facts.conftest import run_for, save, seed_facts
from tests.panel.conftest import logged_in

pytestmark = pytest.mark.django_db


def facts_url(tenant, agent, rest: str = "") -> str:
    return f"/panel/w/{tenant.workspace.id}/agents/{agent.id}/facts/{rest}"


@pytest.fixture
def remembered(tenant, agent):
    """Facts of two people and a shared folder; one corrected once."""
    _, ayse = run_for(tenant, agent, "ayse")
    _, bob = run_for(tenant, agent, "bob")
    first = save(ayse, "users/{user}/", "Ayşe İstanbul'da yaşıyor ve çay sever")
    save(ayse, "users/{user}/", "Ayşe sabahları yüzer", replaces=None)
    corrected = save(ayse, "users/{user}/", "Ayşe İzmir'de yaşıyor ve çay sever",
                     replaces=first["id"], tags=["moved"])  # fmt: skip
    save(bob, "users/{user}/", "Bob prefers metric units")
    save(bob, "notes/", "The office closes at six")
    return corrected


def test_the_tree_counts_facts_per_folder(viewer, tenant, agent, remembered):
    body = logged_in(viewer).get(facts_url(tenant, agent)).content.decode()
    # users/ holds 3 facts (2 of Ayşe, 1 of Bob); the root holds all 4.
    assert 'href="?path=users/ayse/">ayse <span class="count">2</span>' in body
    assert 'href="?path=users/">users <span class="count">3</span>' in body
    assert 'href="?path=">/ <span class="count">4</span>' in body
    assert "The office closes at six" in body


def test_search_finds_a_turkish_word_written_in_capitals(viewer, tenant, agent, remembered):
    response = logged_in(viewer).get(facts_url(tenant, agent), {"query": "İZMİR"})
    body = response.content.decode()
    assert response.status_code == 200
    assert "Ayşe İzmir&#x27;de yaşıyor" in body
    assert "Bob prefers" not in body


def test_a_bad_filter_is_a_clear_error_not_a_500(viewer, tenant, agent, remembered):
    response = logged_in(viewer).get(facts_url(tenant, agent), {"tags": "a b"})
    assert response.status_code == 422
    assert "each tag is 1-50 of" in response.content.decode()


def test_the_list_pages_through_many_facts(viewer, tenant, agent, django_assert_max_num_queries):
    seed_facts(agent, 120)
    client = logged_in(viewer)
    with django_assert_max_num_queries(10):
        first = client.get(facts_url(tenant, agent), {"path": "bulk/"})
    assert first.status_code == 200
    assert first.content.decode().count("<tr>") == 51  # the header and 50 facts
    cursor = first.context["next"]
    second = client.get(facts_url(tenant, agent), {"path": "bulk/", "before": cursor})
    assert second.content.decode().count("<tr>") == 51
    assert not set(f.pk for f in first.context["facts"]) & set(
        f.pk for f in second.context["facts"]
    )


def test_a_fact_shows_every_version_with_a_diff(viewer, tenant, agent, remembered):
    response = logged_in(viewer).get(facts_url(tenant, agent, remembered["id"] + "/"))
    body = response.content.decode()
    assert response.status_code == 200
    assert "Version 2" in body and "Version 1" in body
    assert "<del>İstanbul&#x27;da</del><ins>İzmir&#x27;de</ins>" in body
    assert "Tags were none." in body


def test_a_fact_of_another_agent_or_workspace_is_404(outsider, viewer, tenant, agent, remembered):
    assert logged_in(outsider).get(facts_url(tenant, agent)).status_code == 404
    assert logged_in(viewer).get(facts_url(tenant, agent, "m_1/")).status_code == 404
    assert (
        logged_in(viewer).get(f"/panel/w/{tenant.workspace.id}/agents/nope/facts/").status_code
        == 404
    )


def test_a_viewer_may_not_forget(viewer, tenant, agent, remembered):
    client = logged_in(viewer)
    url = facts_url(tenant, agent, remembered["id"] + "/forget/")
    assert client.get(url).status_code == 403
    assert client.post(url).status_code == 403
    assert client.get(facts_url(tenant, agent, remembered["id"] + "/")).status_code == 200


def test_an_editor_forgets_a_fact_after_confirming(editor, tenant, agent, remembered):
    client = logged_in(editor)
    url = facts_url(tenant, agent, remembered["id"] + "/forget/")
    confirm = client.get(url)
    assert confirm.status_code == 200 and "all its 2 versions" in confirm.content.decode()
    done = client.post(url, follow=True)
    assert done.status_code == 200
    assert f"Forgot {remembered['id']} and its 2 versions." in done.content.decode()
    assert client.get(facts_url(tenant, agent, remembered["id"] + "/")).status_code == 404
    event = tenant.workspace.audit_events.filter(action="fact.delete").get()
    assert (event.principal_type, event.principal_id) == ("staff", "user:ed")


def test_a_script_in_a_fact_is_shown_as_text(viewer, tenant, agent):
    _, run = run_for(tenant, agent, "mallory")
    saved = save(run, "notes/", "<script>alert('x')</script>")
    for url in (facts_url(tenant, agent), facts_url(tenant, agent, saved["id"] + "/")):
        body = logged_in(viewer).get(url).content.decode()
        assert "<script>alert" not in body
        assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in body
