"""Who gets into the panel, and which workspaces each persona sees (404 elsewhere)."""

from __future__ import annotations

import pytest
from django.test import Client

from panel.services.access import seat
from panel.views.base import CSP
from tests.factories import create_agent, create_memory
from tests.panel.conftest import PASSWORD, logged_in

pytestmark = pytest.mark.django_db


def overview_url(tenant) -> str:
    return f"/panel/w/{tenant.workspace.id}/"


def test_every_page_needs_a_login(tenant):
    for url in ("/panel/", overview_url(tenant)):
        response = Client().get(url)
        assert response.status_code == 302
        assert response["Location"].startswith("/panel/login/?next=")


def test_logging_in_with_the_panels_own_page(viewer, tenant):
    page = Client().get("/panel/login/")
    assert page.status_code == 200 and b"Log in" in page.content
    assert page["Content-Security-Policy"] == CSP
    client = Client()
    wrong = client.post("/panel/login/", {"username": "vera", "password": "nope"})
    assert wrong.status_code == 200 and b"didn't match" in wrong.content
    response = client.post("/panel/login/", {"username": "vera", "password": PASSWORD})
    assert response.status_code == 302 and response["Location"] == "/panel/"
    # A member of one workspace goes straight into it.
    index = client.get("/panel/")
    assert index.status_code == 302 and index["Location"] == overview_url(tenant)
    out = client.post("/panel/logout/")
    assert out.status_code == 302 and out["Location"] == "/panel/login/"
    assert client.get(overview_url(tenant)).status_code == 302


def test_logout_is_a_post_with_csrf(viewer):
    client = Client(enforce_csrf_checks=True)
    client.force_login(viewer)
    assert client.post("/panel/logout/").status_code == 403  # no CSRF token
    assert client.get("/panel/logout/").status_code == 405


@pytest.mark.parametrize("persona", ["viewer", "editor", "panel_admin"])
def test_members_open_their_workspace(request, persona, tenant):
    user = request.getfixturevalue(persona)
    response = logged_in(user).get(overview_url(tenant))
    assert response.status_code == 200
    assert response["Content-Security-Policy"] == CSP
    assert b"Acme" in response.content


def test_a_member_of_another_workspace_gets_404(outsider, tenant, other_tenant):
    client = logged_in(outsider)
    assert client.get(overview_url(tenant)).status_code == 404
    assert client.get("/panel/w/nope/").status_code == 404
    assert client.get(overview_url(other_tenant)).status_code == 200


def test_a_user_without_memberships_sees_an_empty_state(db):
    from tests.panel.conftest import person

    response = logged_in(person("nobody")).get("/panel/")
    assert response.status_code == 200
    assert b"not a member of any workspace" in response.content


def test_a_superuser_sees_every_workspace(superuser, tenant, other_tenant):
    client = logged_in(superuser)
    index = client.get("/panel/")
    assert index.status_code == 200
    assert b"Acme" in index.content and b"Other" in index.content
    assert client.get(overview_url(other_tenant)).status_code == 200


@pytest.mark.parametrize(
    ("persona", "permission"),
    [("viewer", "read"), ("editor", "write"), ("panel_admin", "write")],
)
def test_the_services_see_the_role_as_an_api_permission(request, persona, permission, tenant):
    user = request.getfixturevalue(persona)
    here = seat(user, tenant.workspace.id)
    assert here.principal.permission == permission
    assert here.principal.kind == "staff" and here.principal.id == f"user:{user.username}"


def test_the_overview_shows_the_workspace_and_escapes_names(panel_admin, tenant):
    create_agent(tenant.owner, {"name": "<script>alert(1)</script>"})
    create_memory(tenant.owner, {"name": "Team notes", "type": "postgres"})
    response = logged_in(panel_admin).get(overview_url(tenant))
    body = response.content.decode()
    assert "<script>alert(1)</script>" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body
    assert "Team notes" in body
    assert "agent.create" in body  # the latest changes, from the audit log


def test_the_overview_runs_no_query_per_row(panel_admin, tenant, django_assert_max_num_queries):
    for n in range(30):
        create_agent(tenant.owner, {"name": f"agent {n}"})
        create_memory(tenant.owner, {"name": f"memory {n}", "type": "postgres"})
    client = logged_in(panel_admin)
    with django_assert_max_num_queries(12):
        response = client.get(overview_url(tenant))
    assert response.status_code == 200
    assert response.content.decode().count("agent ") >= 30
