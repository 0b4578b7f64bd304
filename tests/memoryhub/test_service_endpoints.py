"""/healthz, the OpenAPI schema and its docs, and the admin."""

import pytest
from django.test import Client, override_settings

from memoryhub.celery import app


def test_healthz_checks_database_and_broker(db):
    response = Client().get("/healthz")
    assert response.status_code == 200
    assert response.json() == {
        "status": "ok",
        "checks": {"database": "ok", "broker": "ok", "memory_providers": "ok"},
    }


def test_healthz_is_503_when_the_broker_is_down(db):
    previous = app.conf.broker_url
    app.conf.broker_url = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    try:
        response = Client().get("/healthz")
    finally:
        app.conf.broker_url = previous
    assert response.status_code == 503
    assert response.json()["checks"]["broker"].startswith("error")


def test_openapi_schema_lists_the_api(db):
    response = Client().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    schema = response.json()
    assert schema["openapi"].startswith("3.")
    assert "/api/v1/agents" in schema["paths"]
    assert "/api/v1/threads/{thread_id}/runs" in schema["paths"]


def test_docs_page_serves_offline_assets(db):
    response = Client().get("/api/docs/")
    assert response.status_code == 200
    assert b"swagger" in response.content.lower()


@pytest.mark.parametrize("path", ["/admin/", "/admin/memoryhub/run/"])
def test_admin_asks_for_a_login(db, path):
    response = Client().get(path)
    assert response.status_code == 302 and "/admin/login/" in response["Location"]


@override_settings(DEBUG=False)
def test_admin_lists_the_shared_models(db, admin_client):
    page = admin_client.get("/admin/").content.decode()
    for name in (
        "Workspaces",
        "Api keys",
        "Agents",
        "End users",
        "Threads",
        "Runs",
        "Memories",
        "Memory providers",
        "Audit events",
    ):
        assert name in page, name


def test_the_schema_generates_without_warnings_and_validates(db, tmp_path):
    from django.core.management import call_command

    # --fail-on-warn turns any guess drf-spectacular had to make into a failure.
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "s.yml"))
    text = (tmp_path / "s.yml").read_text()
    assert "x-agentos-run-token" in text and "/v0/memory/search" in text
