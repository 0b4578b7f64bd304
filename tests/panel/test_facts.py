"""An agent's facts in the panel: tree, list, search, versions with diffs, forgetting."""

from __future__ import annotations

import pytest

from facts.models import Fact
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


@pytest.mark.parametrize("query", ["ayse cay", "yuzer", "AYŞE ÇAY"])
def test_search_ignores_accents(viewer, tenant, agent, remembered, query):
    response = logged_in(viewer).get(facts_url(tenant, agent), {"query": query})
    body = response.content.decode()
    assert response.status_code == 200
    assert "Ayşe sabahları yüzer" in body  # shown as written
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


def test_a_viewer_may_not_correct(viewer, tenant, agent, remembered):
    url = facts_url(tenant, agent, remembered["id"] + "/edit/")
    client = logged_in(viewer)
    assert client.get(url).status_code == 403
    assert client.post(url, {"text": "x", "tags": "", "confidence": "1"}).status_code == 403


def test_an_editor_corrects_a_fact_as_a_new_version_in_their_name(
    editor, tenant, agent, remembered
):
    client = logged_in(editor)
    url = facts_url(tenant, agent, remembered["id"] + "/edit/")
    form = client.get(url)
    assert form.status_code == 200 and "Ayşe İzmir&#x27;de yaşıyor" in form.content.decode()
    saved = client.post(
        url,
        {"text": "Ayşe Ankara'da yaşıyor ve çay sever", "tags": "moved, city", "confidence": "0.8"},
        follow=True,
    )
    body = saved.content.decode()
    assert "Saved version 3 of" in body
    assert "<del>İzmir&#x27;de</del><ins>Ankara&#x27;da</ins>" in body
    assert "corrected by <strong>user:ed</strong>" in body
    # The API shows the person's version as such, in no run.
    api = tenant.api("read").get(f"/api/v1/agents/{agent.id}/facts/{remembered['id']}").json()
    assert api["version"] == 3 and api["tags"] == ["moved", "city"] and api["confidence"] == 0.8
    assert api["source"] == {"run_id": "", "written_by": "person"}
    event = tenant.workspace.audit_events.get(action="fact.correct")
    assert event.principal_id == "user:ed" and event.details["version"] == 3
    # And the search finds the new text.
    found = client.get(facts_url(tenant, agent), {"query": "ANKARA"}).content.decode()
    assert "Ankara&#x27;da" in found


@pytest.mark.parametrize(
    ("form", "message"),
    [
        ({"text": "   ", "tags": "", "confidence": "1"}, "text is 1-4000 characters"),
        ({"text": "ok", "tags": "a/b", "confidence": "1"}, "each tag is 1-50 of"),
        ({"text": "ok", "tags": "", "confidence": "2"}, "confidence is a number from 0 to 1"),
        ({"text": "ok", "tags": "", "confidence": "x"}, "confidence is a number from 0 to 1"),
    ],
)
def test_a_bad_correction_changes_nothing(editor, tenant, agent, remembered, form, message):
    client = logged_in(editor)
    response = client.post(facts_url(tenant, agent, remembered["id"] + "/edit/"), form)
    assert response.status_code == 422 and message in response.content.decode()
    assert Fact.objects.get(pk=int(remembered["id"][2:])).version == 2


def test_the_api_cannot_claim_a_person_wrote_a_fact(run_api):
    response = run_api.post(
        "/v0/memory/facts", {"path": "notes/", "text": "x", "written_by": "person"}
    )
    assert response.status_code == 422
    assert response.json()["error"]["message"] == "written_by is code or model"


def test_an_eval_runs_facts_are_never_shown(viewer, tenant, agent, remembered):
    _, evaluating = run_for(tenant, agent, "ayse", eval=True)
    save(evaluating, "users/{user}/", "Evaluation-only fact about zeppelins")
    save(evaluating, "evals/", "Another zeppelins fact of the eval")
    client = logged_in(viewer)
    listed = client.get(facts_url(tenant, agent)).content.decode()
    found = client.get(facts_url(tenant, agent) + "?query=zeppelins").content.decode()
    assert "zeppelins" not in listed and "evals" not in listed
    assert "zeppelins" not in found.replace('value="zeppelins"', "")
    assert 'href="?path=">/ <span class="count">4</span>' in listed  # the real memory's 4
