"""A record memory's records in the panel, against the faithful local mem0 servers over a
real socket: list, page, search, edit and delete; roles; a backend down or refusing."""

from __future__ import annotations

import socket

import pytest
from django.test import Client

from memoryhub.models import Memory
from records.services import records
from tests import factories
from tests.panel.conftest import logged_in
from tests.records import conftest as mem0_fixtures
from tests.records.conftest import OSS_ADMIN_KEY, OSS_KEY, record_memory

# The faithful local mem0 servers over a real socket, and providers on them.
allow_loopback = mem0_fixtures.allow_loopback
platform_server, oss_server = mem0_fixtures.platform_server, mem0_fixtures.oss_server
platform_provider, oss_provider = mem0_fixtures.platform_provider, mem0_fixtures.oss_provider
any_provider, memory = mem0_fixtures.any_provider, mem0_fixtures.memory

pytestmark = pytest.mark.django_db

SCRIPT = "<script>alert('x')</script>"


def page_url(memory: Memory, rest: str = "") -> str:
    return f"/panel/w/{memory.workspace_id}/memories/{memory.id}/records/{rest}"


def add(tenant, memory: Memory, text: str, metadata: dict | None = None) -> str:
    return records.add_record(tenant.owner, memory, text, metadata).id


@pytest.fixture
def oss_memory(tenant, oss_provider) -> Memory:
    return record_memory(tenant, oss_provider)


def closed_port() -> int:
    """A loopback port nobody listens on: connections to it are refused."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def provider_at(tenant, base_url: str, **config):
    return factories.create_provider(
        tenant.owner,
        {
            "type": "mem0_oss",
            "name": "elsewhere",
            "config": {"base_url": base_url, "read_timeout": 1, **config},
            "credential": {"api_key": OSS_KEY, "admin_api_key": OSS_ADMIN_KEY},
        },
    )


# --- reading --------------------------------------------------------------------------------


def test_the_records_show_newest_first_with_their_metadata(viewer, tenant, memory):
    add(tenant, memory, "The user prefers metric units", {"source": "chat"})
    add(tenant, memory, "The user lives in Ankara")
    response = logged_in(viewer).get(page_url(memory))
    body = response.content.decode()
    assert response.status_code == 200
    assert body.index("lives in Ankara") < body.index("prefers metric units")
    assert "{&quot;source&quot;: &quot;chat&quot;}" in body
    assert "Records 1–2 of 2" in body
    assert memory.namespace in body and "User facts" in body
    assert "Edit</a>" not in body and "Delete…" not in body  # a viewer reads only


def test_the_list_pages_as_the_backend_allows(
    viewer, tenant, oss_memory, django_assert_max_num_queries
):
    for n in range(60):
        add(tenant, oss_memory, f"record number {n}")
    client = logged_in(viewer)
    # 5 reads, and the provider's outage row cleared (a DELETE, in a savepoint here only
    # because the test holds a transaction: records.services.health).
    with django_assert_max_num_queries(8):
        first = client.get(page_url(oss_memory))
    body = first.content.decode()
    assert first.status_code == 200
    assert body.count("<tr>") == 51  # the header and 50 records
    assert "record number 59" in body and "record number 9<" not in body
    assert "Records 1–50 of 60" in body and 'href="?offset=50&amp;limit=50">Older' in body
    second = client.get(page_url(oss_memory), {"offset": 50})
    assert second.content.decode().count("<tr>") == 11
    assert "Records 51–60 of 60" in second.content.decode()
    assert 'href="?offset=0&amp;limit=50">← Newer' in second.content.decode()


def test_an_empty_memory_says_so(viewer, oss_memory):
    body = logged_in(viewer).get(page_url(oss_memory)).content.decode()
    assert "No records yet" in body


def test_search_is_the_apis_search(viewer, tenant, memory):
    add(tenant, memory, "The user prefers metric units")
    add(tenant, memory, "The user lives in Ankara")
    response = logged_in(viewer).get(page_url(memory), {"query": "which units"})
    body = response.content.decode()
    assert response.status_code == 200
    assert "prefers metric units" in body and "Ankara" not in body
    assert "Closest matches first." in body and "0.50" in body  # the backend's score
    nothing = logged_in(viewer).get(page_url(memory), {"query": "zebra"}).content.decode()
    assert "No record matches." in nothing


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"query": "x" * 8001}, "query is at most 8000 characters"),
        ({"offset": "-1"}, "offset must be a whole number from 0 to 1000000"),
        ({"limit": "500"}, "limit must be a whole number from 1 to 200"),
    ],
)
def test_bad_input_is_a_clear_message(viewer, tenant, oss_memory, oss_server, params, message):
    add(tenant, oss_memory, "kept")
    sent = len(oss_server.requests)
    response = logged_in(viewer).get(page_url(oss_memory), params)
    body = response.content.decode()
    assert response.status_code == 422
    assert 'role="alert"' in body and message in body
    assert len(oss_server.requests) == sent  # refused before the backend was asked


def test_a_script_in_a_record_is_shown_as_text(editor, tenant, oss_memory):
    record_id = add(tenant, oss_memory, SCRIPT, {"note": SCRIPT})
    client = logged_in(editor)
    for url in (
        page_url(oss_memory),
        page_url(oss_memory) + "?query=alert",
        page_url(oss_memory, f"{record_id}/edit/"),
        page_url(oss_memory, f"{record_id}/delete/"),
    ):
        response = client.get(url)
        body = response.content.decode()
        assert response.status_code == 200, url
        assert "<script>" not in body, url
        assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in body, url


# --- who may see and do what ----------------------------------------------------------------


def test_another_workspace_gets_404(outsider, other_tenant, tenant, oss_memory):
    record_id = add(tenant, oss_memory, "private")
    client = logged_in(outsider)
    assert client.get(page_url(oss_memory)).status_code == 404
    assert client.get(page_url(oss_memory, f"{record_id}/edit/")).status_code == 404
    assert client.post(page_url(oss_memory, f"{record_id}/delete/")).status_code == 404
    # Their own workspace's address with this memory's id: no such memory there.
    theirs = f"/panel/w/{other_tenant.workspace.id}/memories/{oss_memory.id}/records/"
    assert client.get(theirs).status_code == 404
    assert records.get_record(tenant.owner, oss_memory, record_id).text == "private"


def test_a_file_memory_or_unknown_record_is_404(viewer, editor, tenant, oss_memory):
    files = factories.create_memory(tenant.owner, {"name": "Docs"})
    assert logged_in(viewer).get(page_url(files)).status_code == 404
    client = logged_in(editor)
    assert client.get(page_url(oss_memory, "not-a-uuid/edit/")).status_code == 404
    unknown = "00000000-0000-4000-8000-000000000000"
    assert client.get(page_url(oss_memory, f"{unknown}/delete/")).status_code == 404
    assert client.post(page_url(oss_memory, f"{unknown}/delete/")).status_code == 404


def test_a_viewer_may_not_edit_or_delete(viewer, tenant, oss_memory):
    record_id = add(tenant, oss_memory, "keep me")
    client = logged_in(viewer)
    for action in ("edit", "delete"):
        assert client.get(page_url(oss_memory, f"{record_id}/{action}/")).status_code == 403
    refused = client.post(page_url(oss_memory, f"{record_id}/edit/"), {"text": "changed"})
    assert refused.status_code == 403 and "needs the run permission" in refused.content.decode()
    assert client.post(page_url(oss_memory, f"{record_id}/delete/")).status_code == 403
    assert records.get_record(tenant.owner, oss_memory, record_id).text == "keep me"


def test_pages_need_a_login(client, oss_memory):
    response = client.get(page_url(oss_memory))
    assert response.status_code == 302 and response["Location"].startswith("/panel/login/")


# --- editing and deleting -------------------------------------------------------------------


def test_an_editor_edits_a_record_and_it_is_audited(editor, tenant, memory):
    record_id = add(tenant, memory, "The user prefers metric units", {"source": "chat"})
    client = logged_in(editor)
    form = client.get(page_url(memory, f"{record_id}/edit/"))
    assert form.status_code == 200
    assert "The user prefers metric units" in form.content.decode()
    assert "{&quot;source&quot;: &quot;chat&quot;}</textarea>" in form.content.decode()
    saved = client.post(
        page_url(memory, f"{record_id}/edit/"),
        {"text": "The user prefers imperial units", "metadata": '{"source": "panel"}'},
        follow=True,
    )
    body = saved.content.decode()
    assert f"Saved record {record_id}." in body
    assert "prefers imperial units" in body
    stored = records.get_record(tenant.owner, memory, record_id)
    assert (stored.text, stored.metadata) == (
        "The user prefers imperial units",
        {"source": "panel"},
    )
    event = tenant.workspace.audit_events.get(action="record.update")
    assert (event.principal_type, event.principal_id) == ("staff", "user:ed")
    assert (event.object_type, event.object_id) == ("record", record_id)
    assert event.details == {"memory": memory.id}  # the record's id, never its text


@pytest.mark.parametrize(
    ("form", "message"),
    [
        ({"text": "   ", "metadata": ""}, "text must be a non-empty string"),
        ({"text": "x" * 8001, "metadata": ""}, "text is at most 8000 characters"),
        ({"text": "ok", "metadata": "[1]"}, "metadata must be an object"),
        ({"text": "ok", "metadata": "{oops"}, "metadata is not valid JSON"),
    ],
)
def test_a_bad_edit_changes_nothing(editor, tenant, oss_memory, oss_server, form, message):
    record_id = add(tenant, oss_memory, "unchanged", {"k": 1})
    response = logged_in(editor).post(page_url(oss_memory, f"{record_id}/edit/"), form)
    body = response.content.decode()
    assert response.status_code == 422
    assert 'role="alert"' in body and message in body
    assert "<textarea" in body  # the form again, with what was typed
    assert not [r for r in oss_server.requests if r["method"] == "PUT"]
    stored = records.get_record(tenant.owner, oss_memory, record_id)
    assert (stored.text, stored.metadata) == ("unchanged", {"k": 1})
    assert not tenant.workspace.audit_events.filter(action="record.update").exists()


def test_an_editor_deletes_a_record_after_confirming(editor, tenant, memory):
    record_id = add(tenant, memory, "The user lives in Ankara")
    add(tenant, memory, "The user prefers tea")
    client = logged_in(editor)
    confirm = client.get(page_url(memory, f"{record_id}/delete/"))
    body = confirm.content.decode()
    assert confirm.status_code == 200
    assert "The user lives in Ankara" in body and "cannot be undone" in body
    assert records.get_record(tenant.owner, memory, record_id)  # a GET deletes nothing
    done = client.post(page_url(memory, f"{record_id}/delete/"), follow=True)
    body = done.content.decode()
    assert f"Deleted record {record_id}." in body
    assert "Ankara" not in body and "prefers tea" in body
    event = tenant.workspace.audit_events.get(action="record.delete")
    assert (event.principal_id, event.object_id) == ("user:ed", record_id)
    assert client.get(page_url(memory, f"{record_id}/delete/")).status_code == 404


def test_an_unconfirmed_write_says_it_may_have_happened(editor, tenant, oss_memory, oss_server):
    record_id = add(tenant, oss_memory, "before")
    oss_server.drop_after_write = True
    response = logged_in(editor).post(
        page_url(oss_memory, f"{record_id}/edit/"), {"text": "after", "metadata": ""}
    )
    body = response.content.decode()
    assert response.status_code == 409
    assert 'role="alert"' in body and "may or may not have happened" in body
    event = tenant.workspace.audit_events.get(action="record.update")
    assert event.details == {"memory": oss_memory.id, "confirmed": False}


# --- a backend down or refusing -------------------------------------------------------------


def test_a_backend_nobody_listens_on_shows_an_alert(editor, tenant):
    memory = record_memory(tenant, provider_at(tenant, f"http://127.0.0.1:{closed_port()}"))
    client = logged_in(editor)
    record_id = "00000000-0000-4000-8000-000000000000"
    for url in (
        page_url(memory),
        page_url(memory) + "?query=units",
        page_url(memory, f"{record_id}/edit/"),
        page_url(memory, f"{record_id}/delete/"),
    ):
        response = client.get(url)
        body = response.content.decode()
        assert response.status_code == 503, url
        assert 'role="alert"' in body and "The memory backend is unavailable." in body, url
        assert "the connection failed" in body and "User facts" in body, url
    confirm = client.get(page_url(memory, f"{record_id}/delete/")).content.decode()
    assert "Delete the record</button>" not in confirm  # nothing shown, nothing offered


def test_a_slow_backend_times_out_into_an_alert(viewer, tenant, oss_server):
    memory = record_memory(tenant, provider_at(tenant, oss_server.url, read_timeout=0.3))
    oss_server.delay = 1.0
    response = logged_in(viewer).get(page_url(memory))
    body = response.content.decode()
    assert response.status_code == 503
    assert 'role="alert"' in body and "The memory backend is unavailable." in body


def test_a_backend_refusing_the_key_shows_an_alert(viewer, tenant, oss_memory, oss_server):
    oss_server.refuse_auth = True
    response = logged_in(viewer).get(page_url(oss_memory))
    body = response.content.decode()
    assert response.status_code == 503
    assert 'role="alert"' in body and "The memory backend refused the provider's key." in body
    assert "refused its credential (HTTP 401)" in body
    assert OSS_KEY not in body


def test_a_failing_backend_shows_an_alert(editor, tenant, oss_memory, oss_server):
    record_id = add(tenant, oss_memory, "still here")
    oss_server.fail(500)
    client = logged_in(editor)
    listed = client.get(page_url(oss_memory))
    assert listed.status_code == 503 and "it failed (HTTP 500)" in listed.content.decode()
    deleted = client.post(page_url(oss_memory, f"{record_id}/delete/"))
    assert deleted.status_code == 503 and 'role="alert"' in deleted.content.decode()
    oss_server.reset_switches()
    assert records.get_record(tenant.owner, oss_memory, record_id).text == "still here"


def test_a_disabled_provider_says_so(viewer, tenant, oss_memory, oss_provider):
    oss_provider.enabled = False
    oss_provider.save()
    response = logged_in(viewer).get(page_url(oss_memory))
    body = response.content.decode()
    assert response.status_code == 422
    assert "The provider of this memory is disabled." in body
    assert f'href="/panel/w/{tenant.workspace.id}/providers/"' in body


def test_a_delete_needs_the_forms_csrf_token(editor, tenant, oss_memory):
    record_id = add(tenant, oss_memory, "guarded")
    client = Client(enforce_csrf_checks=True)
    client.force_login(editor)
    form = client.get(page_url(oss_memory, f"{record_id}/delete/")).content.decode()
    assert 'name="csrfmiddlewaretoken"' in form
    assert client.post(page_url(oss_memory, f"{record_id}/delete/")).status_code == 403
    assert records.get_record(tenant.owner, oss_memory, record_id).text == "guarded"


def test_a_superuser_works_in_any_workspace(superuser, tenant, oss_memory):
    record_id = add(tenant, oss_memory, "seen by root")
    client = logged_in(superuser)
    assert "seen by root" in client.get(page_url(oss_memory)).content.decode()
    done = client.post(page_url(oss_memory, f"{record_id}/delete/"))
    assert done.status_code == 302
    event = tenant.workspace.audit_events.get(action="record.delete")
    assert event.principal_id == "user:root"
