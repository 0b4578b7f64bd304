"""``/`` and the admin's "View site": a visitor learns what the service is, a signed-in user
lands in the panel, and nobody sees Django's list of every URL pattern."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

pytestmark = pytest.mark.django_db


def signed_in(**flags: bool) -> Client:
    user = get_user_model().objects.create_user("ada", password="a long passphrase", **flags)
    client = Client()
    client.force_login(user)
    return client


def test_a_visitor_reads_what_the_service_is_and_where_to_go():
    response = Client().get("/")
    assert response.status_code == 200
    page = response.content.decode()
    assert "A memory service for AI agents" in page
    assert 'href="/api/docs/"' in page
    assert 'href="/api/schema/"' in page
    assert 'href="/panel/login/"' in page
    assert "api/v1/" not in page  # no URL patterns listed
    assert "default-src 'none'" in response["Content-Security-Policy"]


def test_a_signed_in_user_goes_to_the_panel():
    response = signed_in(is_staff=True).get("/")
    assert response.status_code == 302
    assert response["Location"] == "/panel/"


def test_a_panel_user_without_staff_flag_also_goes_to_the_panel():
    # The panel lets in any account with a seat in a workspace; the admin wants is_staff.
    assert signed_in().get("/").status_code == 302


def test_the_front_door_takes_no_writes():
    response = Client().post("/", {"x": "1"})
    assert response.status_code == 405


def test_the_admins_view_site_link_leads_to_the_panel():
    page = signed_in(is_staff=True, is_superuser=True).get("/admin/").content.decode()
    links = re.findall(r'<a href="([^"]*)">View site</a>', page)
    assert links == ["/panel/"]
