"""/api/v1/memory-providers: create, read, change, delete and test; credentials never shown."""

from __future__ import annotations

import json
import logging

import pytest

from memoryhub.models import AuditEvent, MemoryProvider
from tests.conftest import error_of
from tests.records.conftest import OSS_ADMIN_KEY, OSS_KEY, PLATFORM_KEY, record_memory

URL = "/api/v1/memory-providers"


def _platform_body(server, **extra) -> dict:
    return {
        "type": "mem0_platform",
        "name": "mem0",
        "config": {"base_url": server.url},
        "credential": {"api_key": PLATFORM_KEY},
        **extra,
    }


def _create(api, body) -> dict:
    response = api.post(URL, body)
    assert response.status_code == 201, response.content
    return response.json()


def test_create_platform_provider_shows_no_credential(owner, platform_server):
    response = owner.post(URL, _platform_body(platform_server))
    assert response.status_code == 201, response.content
    data = response.json()
    assert set(data) == {
        "id",
        "type",
        "name",
        "config",
        "enabled",
        "has_credential",
        "etag",
        "created_at",
        "updated_at",
    }
    assert data["id"].startswith("memprov_")
    assert data["has_credential"] is True and data["enabled"] is True
    assert response["ETag"] == data["etag"] == '"1"'
    assert PLATFORM_KEY not in response.content.decode()
    stored = MemoryProvider.objects.get(pk=data["id"])
    assert PLATFORM_KEY not in stored.credential_encrypted


def test_platform_base_url_defaults_to_the_hosted_platform(owner):
    data = _create(
        owner, {"type": "mem0_platform", "name": "mem0", "credential": {"api_key": "m0-x"}}
    )
    assert data["config"] == {"base_url": "https://api.mem0.ai"}


def test_oss_needs_a_base_url_and_its_credential_is_optional(owner, oss_server):
    response = owner.post(URL, {"type": "mem0_oss", "name": "self", "config": {}})
    assert response.status_code == 422
    assert "base_url" in error_of(response)["message"]
    data = _create(
        owner, {"type": "mem0_oss", "name": "self", "config": {"base_url": oss_server.url}}
    )
    assert data["has_credential"] is False


def test_the_platform_needs_an_api_key(owner, platform_server):
    body = _platform_body(platform_server)
    del body["credential"]
    assert owner.post(URL, body).status_code == 422
    body["credential"] = {}
    assert owner.post(URL, body).status_code == 422


@pytest.mark.parametrize(
    "change",
    [
        {"type": "pinecone"},
        {"name": ""},
        {"name": "x" * 201},
        {"config": "https://api.mem0.ai"},
        {"config": {"base_url": "https://api.mem0.ai", "region": "eu"}},
        {"config": {"base_url": "not a url"}},
        {"config": {"base_url": "https://user:pw@api.mem0.ai"}},
        {"config": {"base_url": "https://api.mem0.ai?x=1"}},
        {"config": {"base_url": "https://api.mem0.ai?"}},
        {"config": {"base_url": "https://api.mem0.ai#"}},
        {"config": {"base_url": "https://1.2.3.4.5"}},
        {"config": {"base_url": "https://999.1.1.1"}},
        {"config": {"base_url": "https://api.mem0.ai:99999"}},
        {"config": {"base_url": "https://[abc"}},
        {"config": {"base_url": "https://a]b"}},
        {"config": {"base_url": "https://\uff03.example.com"}},
        {"config": {"base_url": "https://[v1.fe]"}},
        {"config": {"base_url": "https://[203.0.113.5]"}},
        {"config": {"base_url": "https://ex%ample.com"}},
        {"config": {"base_url": "https://-mem0.example.com"}},
        {"config": {"base_url": 42}},
        {"config": {"base_url": "https://api.mem0.ai", "read_timeout": 0}},
        {"config": {"base_url": "https://api.mem0.ai", "read_timeout": True}},
        {"config": {"base_url": "https://api.mem0.ai", "connect_timeout": 500}},
        {"credential": "m0-key"},
        {"credential": {"api_key": ""}},
        {"credential": {"api_key": 5}},
        {"credential": {"api_key": "a b"}},
        {"credential": {"api_key": "k", "admin_api_key": "k"}},
        {"enabled": "yes"},
        {"surprise": 1},
    ],
)
def test_bad_input_is_422_and_creates_nothing(owner, platform_server, change):
    body = {**_platform_body(platform_server), **change}
    response = owner.post(URL, body)
    assert response.status_code == 422, response.content
    assert error_of(response)["code"] == "invalid_argument"
    assert not MemoryProvider.objects.exists()


def test_malformed_json_is_400(owner):
    response = owner.generic("POST", URL, "{not json")
    assert response.status_code == 400


@pytest.mark.parametrize(
    "base_url",
    ["http://127.0.0.1:8000", "https://10.0.0.5", "https://localhost", "https://169.254.169.254"],
)
def test_the_outbound_policy_refuses_addresses_at_save_time(owner, settings, base_url):
    settings.MEMORYHUB_SETTINGS = {
        **settings.MEMORYHUB_SETTINGS,
        "outbound.allow_private": False,
        "outbound.allow_http": False,
    }
    response = owner.post(
        URL, {"type": "mem0_oss", "name": "self", "config": {"base_url": base_url}}
    )
    assert response.status_code == 422
    error = error_of(response)
    assert error["reason"] == "outbound"
    assert "outbound policy" in error["message"]


def test_plain_http_is_refused_unless_allowed(owner, settings):
    settings.MEMORYHUB_SETTINGS = {**settings.MEMORYHUB_SETTINGS, "outbound.allow_http": False}
    body = {"type": "mem0_oss", "name": "s", "config": {"base_url": "http://mem0.example.com"}}
    assert owner.post(URL, body).status_code == 422
    settings.MEMORYHUB_SETTINGS = {**settings.MEMORYHUB_SETTINGS, "outbound.allow_http": True}
    assert owner.post(URL, body).status_code == 201


def test_list_and_get_need_read_and_show_no_credential(owner, reader, platform_server):
    created = _create(owner, _platform_body(platform_server))
    listed = reader.get(URL)
    assert listed.status_code == 200
    assert listed.json()["count"] == 1
    assert listed.json()["results"][0]["id"] == created["id"]
    got = reader.get(f"{URL}/{created['id']}")
    assert got.status_code == 200 and got["ETag"] == '"1"'
    for response in (listed, got):
        assert PLATFORM_KEY not in response.content.decode()
        assert '"credential"' not in response.content.decode()


@pytest.mark.parametrize("persona", ["reader", "runner"])
def test_changes_need_write(request, owner, platform_server, persona):
    api = request.getfixturevalue(persona)
    assert api.post(URL, _platform_body(platform_server)).status_code == 403
    created = _create(owner, _platform_body(platform_server))
    pid = created["id"]
    assert api.patch(f"{URL}/{pid}", {"name": "x"}, HTTP_IF_MATCH='"1"').status_code == 403
    assert api.delete(f"{URL}/{pid}", HTTP_IF_MATCH='"1"').status_code == 403
    assert api.post(f"{URL}/{pid}/test").status_code == 403


def test_anonymous_is_401(anonymous):
    assert anonymous.get(URL).status_code == 401


def test_another_workspace_sees_404(owner, stranger, platform_server):
    pid = _create(owner, _platform_body(platform_server))["id"]
    assert stranger.get(f"{URL}/{pid}").status_code == 404
    assert stranger.patch(f"{URL}/{pid}", {"name": "x"}, HTTP_IF_MATCH="*").status_code == 404
    assert stranger.delete(f"{URL}/{pid}", HTTP_IF_MATCH="*").status_code == 404
    assert stranger.post(f"{URL}/{pid}/test").status_code == 404
    assert stranger.get(URL).json()["count"] == 0


def test_unknown_and_malformed_ids_are_404(owner):
    assert owner.get(f"{URL}/memprov_doesnotexist").status_code == 404
    assert owner.get(f"{URL}/NOT-AN-ID").status_code == 404


def test_patch_needs_if_match_and_refuses_a_stale_one(owner, platform_server):
    pid = _create(owner, _platform_body(platform_server))["id"]
    assert owner.patch(f"{URL}/{pid}", {"name": "x"}).status_code == 428
    response = owner.patch(f"{URL}/{pid}", {"name": "renamed"}, HTTP_IF_MATCH='"1"')
    assert response.status_code == 200 and response.json()["name"] == "renamed"
    assert response["ETag"] == '"2"'
    stale = owner.patch(f"{URL}/{pid}", {"name": "again"}, HTTP_IF_MATCH='"1"')
    assert stale.status_code == 412
    assert MemoryProvider.objects.get(pk=pid).name == "renamed"


def test_patch_enables_disables_and_replaces_the_credential(owner, platform_server):
    pid = _create(owner, _platform_body(platform_server))["id"]
    response = owner.patch(
        f"{URL}/{pid}",
        {"enabled": False, "credential": {"api_key": "m0-new-secret"}},
        HTTP_IF_MATCH='"1"',
    )
    assert response.status_code == 200
    assert response.json()["enabled"] is False
    assert "m0-new-secret" not in response.content.decode()
    from records.services.providers import credential_of

    assert credential_of(MemoryProvider.objects.get(pk=pid)) == {"api_key": "m0-new-secret"}


def test_patch_refuses_type_and_bad_values_and_changes_nothing(owner, platform_server):
    pid = _create(owner, _platform_body(platform_server))["id"]
    changes = (
        {"type": "mem0_oss"},
        {"config": {"base_url": "ftp://x"}},
        {"config": {"base_url": "https://[abc"}},
        {"credential": None},
    )
    for change in changes:
        response = owner.patch(f"{URL}/{pid}", change, HTTP_IF_MATCH='"1"')
        assert response.status_code == 422, change
    assert MemoryProvider.objects.get(pk=pid).version == 1


@pytest.mark.parametrize(
    "base_url",
    [
        "https://mem0.example.com",
        "https://mem0_api:8000",
        "https://bücher.example",
        "https://[2001:db8::1]",
    ],
)
def test_host_names_and_addresses_a_connection_can_reach_are_accepted(owner, base_url):
    body = {"type": "mem0_oss", "name": "self", "config": {"base_url": base_url}}
    response = owner.post(URL, body)
    assert response.status_code == 201, response.content
    assert response.json()["config"]["base_url"] == base_url


def test_patch_config_keeps_the_platform_default(owner):
    pid = _create(owner, {"type": "mem0_platform", "name": "p", "credential": {"api_key": "k"}})[
        "id"
    ]
    response = owner.patch(f"{URL}/{pid}", {"config": {"read_timeout": 10}}, HTTP_IF_MATCH='"1"')
    assert response.json()["config"] == {"base_url": "https://api.mem0.ai", "read_timeout": 10.0}


def test_delete_needs_if_match_and_refuses_while_memories_use_it(tenant, owner, platform_server):
    pid = _create(owner, _platform_body(platform_server))["id"]
    provider = MemoryProvider.objects.get(pk=pid)
    memory = record_memory(tenant, provider)
    assert owner.delete(f"{URL}/{pid}").status_code == 428
    response = owner.delete(f"{URL}/{pid}", HTTP_IF_MATCH='"1"')
    assert response.status_code == 409
    assert error_of(response)["reason"] == "provider_in_use"
    memory.delete()
    assert owner.delete(f"{URL}/{pid}", HTTP_IF_MATCH='"1"').status_code == 204
    assert not MemoryProvider.objects.filter(pk=pid).exists()


def test_delete_refuses_while_a_purge_is_pending(tenant, owner, platform_server):
    from records.models import PurgeJob

    pid = _create(owner, _platform_body(platform_server))["id"]
    PurgeJob.objects.create(
        workspace=tenant.workspace, provider_id=pid, namespace="ns", memory_id="mem_gone"
    )
    response = owner.delete(f"{URL}/{pid}", HTTP_IF_MATCH='"1"')
    assert response.status_code == 409
    assert error_of(response)["reason"] == "purge_pending"


def test_test_lists_one_page_of_an_unused_namespace_and_changes_nothing(
    owner, platform_server, oss_server
):
    for server, body in (
        (platform_server, _platform_body(platform_server)),
        (
            oss_server,
            {
                "type": "mem0_oss",
                "name": "self",
                "config": {"base_url": oss_server.url},
                "credential": {"api_key": OSS_KEY, "admin_api_key": OSS_ADMIN_KEY},
            },
        ),
    ):
        pid = _create(owner, body)["id"]
        response = owner.post(f"{URL}/{pid}/test")
        assert response.status_code == 200, response.content
        assert response.json()["ok"] is True
        assert len(server.requests) == 1
        request = server.requests[0]
        assert request["method"] in ("GET", "POST") and "search" not in request["path"]
        namespace = (request["body"] or {}).get("filters", {}).get("user_id") or request[
            "query"
        ].get("user_id")
        assert namespace.startswith("a13n-test-")
        assert server.records == {}


def test_test_reports_a_refused_key_without_echoing_it(owner, platform_server):
    body = _platform_body(platform_server, credential={"api_key": "m0-wrong-secret"})
    pid = _create(owner, body)["id"]
    response = owner.post(f"{URL}/{pid}/test")
    assert response.status_code == 503
    error = error_of(response)
    assert error["reason"] == "provider_auth"
    assert error["provider_id"] == pid
    assert error["dependency"] == "memory:mem0_platform"
    assert "m0-wrong-secret" not in response.content.decode()


def test_test_of_an_unreachable_provider_is_503(owner, platform_server):
    pid = _create(owner, _platform_body(platform_server))["id"]
    platform_server.fail(502)
    response = owner.post(f"{URL}/{pid}/test")
    assert response.status_code == 503
    assert error_of(response)["dependency"] == "memory:mem0_platform"


def test_test_refuses_a_body(owner, platform_server):
    pid = _create(owner, _platform_body(platform_server))["id"]
    assert owner.post(f"{URL}/{pid}/test", {"x": 1}).status_code == 422


def test_credentials_appear_in_no_audit_event_and_no_log_line(owner, platform_server, caplog):
    caplog.set_level(logging.DEBUG)
    pid = _create(owner, _platform_body(platform_server))["id"]
    owner.patch(f"{URL}/{pid}", {"credential": {"api_key": "m0-rotated"}}, HTTP_IF_MATCH='"1"')
    owner.post(f"{URL}/{pid}/test")
    owner.delete(f"{URL}/{pid}", HTTP_IF_MATCH='"2"')
    events = list(AuditEvent.objects.values("action", "details"))
    assert [e["action"] for e in events] == [
        "memory_provider.create",
        "memory_provider.update",
        "memory_provider.test",
        "memory_provider.delete",
    ]
    assert events[1]["details"] == {"fields": ["credential"]}
    dumped = json.dumps(events) + caplog.text
    assert PLATFORM_KEY not in dumped and "m0-rotated" not in dumped
