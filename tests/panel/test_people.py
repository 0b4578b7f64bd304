"""People in the panel: the list with their counts, and erasing one with a receipt."""

from __future__ import annotations

import pytest

from facts.models import Fact
from memoryhub.models import EndUser, Run
from tests.facts.conftest import run_for, save
from tests.panel.conftest import logged_in

pytestmark = pytest.mark.django_db


def people_url(tenant, rest: str = "") -> str:
    return f"/panel/w/{tenant.workspace.id}/people/{rest}"


@pytest.fixture
def ayse(tenant, agent):
    """Ayşe: two facts (one with two versions) in one thread, and Bob beside her."""
    run, api = run_for(tenant, agent, "ayse", input="Merhaba")
    first = save(api, "users/{user}/", "Ayşe çay sever")
    save(api, "users/{user}/", "Ayşe yüzer")
    save(api, "users/{user}/", "Ayşe çok çay sever", replaces=first["id"])
    _, bob = run_for(tenant, agent, "bob")
    save(bob, "users/{user}/", "Bob likes tea")
    return run


def test_the_list_counts_facts_and_threads_without_a_query_per_row(
    viewer, tenant, agent, ayse, django_assert_max_num_queries
):
    for n in range(60):
        run_for(tenant, agent, f"person{n}")
    client = logged_in(viewer)
    with django_assert_max_num_queries(10):
        response = client.get(people_url(tenant), {"page": 2})
    assert response.status_code == 200
    last = response.content.decode()  # newest first: the first two people are on page 2
    assert "ayse" in last and "Page 2 of 2 (62 people)" in last
    counts = {person.external_id: n for person, n in response.context["people"]}
    assert counts["ayse"] == 2 and counts["bob"] == 1
    threads = {person.external_id: person.thread_count for person, _ in response.context["people"]}
    assert threads["ayse"] == 1
    threads_url = f"/panel/w/{tenant.workspace.id}/threads/?end_user=ayse"
    assert f'<a href="{threads_url}">1</a>' in last  # her threads, one click away
    assert "Erase…" not in last  # a viewer is offered no erase


@pytest.mark.parametrize("persona", ["viewer", "editor"])
def test_only_admins_may_erase(request, persona, tenant, ayse):
    client = logged_in(request.getfixturevalue(persona))
    assert client.get(people_url(tenant, "ayse/erase/")).status_code == 403
    assert client.post(people_url(tenant, "ayse/erase/")).status_code == 403
    assert EndUser.objects.filter(external_id="ayse").exists()


def test_erasing_says_what_will_go_then_what_went(panel_admin, tenant, ayse):
    client = logged_in(panel_admin)
    confirm = client.get(people_url(tenant, "ayse/erase/")).content.decode()
    for line in ("<strong>2</strong> facts", "<strong>3</strong> versions",
                 "<strong>1</strong> thread archived", "<strong>1</strong> run cleared",
                 "<strong>1</strong> running run ended"):  # fmt: skip
        assert line in confirm, line
    assert EndUser.objects.filter(external_id="ayse").exists()  # nothing went yet
    receipt = client.post(people_url(tenant, "ayse/erase/")).content.decode()
    assert "is gone" in receipt and "<strong>2</strong> facts" in receipt
    assert "Verified: a search afterwards found nothing of theirs." in receipt
    assert not EndUser.objects.filter(external_id="ayse").exists()
    assert not Fact.objects.filter(path="users/ayse/").exists()
    assert Run.objects.get(pk=ayse.pk).input is None
    assert Fact.objects.filter(path="users/bob/").count() == 1
    event = tenant.workspace.audit_events.get(action="end_user.erase")
    assert (event.principal_type, event.principal_id) == ("staff", "user:ada")
    assert client.get(people_url(tenant, "ayse/erase/")).status_code == 404


def test_another_workspaces_people_are_404(outsider, tenant, ayse):
    client = logged_in(outsider)
    assert client.get(people_url(tenant)).status_code == 404
    assert client.post(people_url(tenant, "ayse/erase/")).status_code == 404
