"""A provider's stored credential stays with the server it was given for (issue 38).

A PATCH that moves a provider to another server (another scheme, host or port) without a
credential in the same request is 422 ``credential_required`` and changes nothing: the
stored key is never sent to the new address, by a test call, a record call or a purge. A
new path on the same server, a new spelling of the same address or a new timeout keeps it.
"""

from __future__ import annotations

import json
from urllib.parse import urlsplit

import pytest
import requests

from memoryhub.models import AuditEvent, MemoryProvider
from records.services import providers
from records.services.providers import credential_of
from support.fakes.mem0 import OssServer, PlatformServer
from tests import factories
from tests.conftest import error_of
from tests.records.conftest import OSS_ADMIN_KEY, OSS_KEY, PLATFORM_KEY, record_memory

URL = "/api/v1/memory-providers"
MEMORIES = "/api/v1/memories"
NEW_KEY = "m0-key-for-the-new-server"
OLD_KEYS = {"mem0_platform": {"api_key": PLATFORM_KEY}}
OLD_KEYS["mem0_oss"] = {"api_key": OSS_KEY, "admin_api_key": OSS_ADMIN_KEY}


@pytest.fixture
def elsewhere(any_provider):
    """Another server of the provider's type: the address a PATCH moves it to. It takes
    only NEW_KEY, and logs every request it is sent."""
    if any_provider.type == "mem0_platform":
        server = PlatformServer(api_key=NEW_KEY).start()
    else:
        server = OssServer(api_key=NEW_KEY, admin_key=NEW_KEY).start()
    yield server
    server.stop()


def patch(api, provider: MemoryProvider, body: dict, etag: str = '"1"'):
    return api.patch(f"{URL}/{provider.id}", body, HTTP_IF_MATCH=etag)


def moved_config(provider: MemoryProvider, base_url: str) -> dict:
    return {"config": {**provider.config, "base_url": base_url}}


def keys_seen_by(server) -> set[str]:
    """Every stored key of the suite that reached this server, in any header."""
    headers = json.dumps([r["headers"] for r in server.requests])
    return {key for key in (PLATFORM_KEY, OSS_KEY, OSS_ADMIN_KEY) if key in headers}


def as_stored(provider: MemoryProvider, base_url: str) -> None:
    provider.refresh_from_db()
    assert provider.version == 1
    assert provider.config["base_url"] == base_url
    assert credential_of(provider) == OLD_KEYS[provider.type]


# --- a move without its credential is refused -----------------------------------------------


def test_a_new_base_url_alone_is_422_and_changes_nothing(owner, any_provider, elsewhere):
    old_url = any_provider.config["base_url"]
    response = patch(owner, any_provider, moved_config(any_provider, elsewhere.url))
    assert response.status_code == 422, response.content
    error = error_of(response)
    assert (error["code"], error["reason"]) == ("invalid_argument", "credential_required")
    assert error["message"] == (
        "a new base_url (another scheme, host or port) needs its credential in the same "
        "request: the stored one is never sent to another address"
    )
    as_stored(any_provider, old_url)
    assert not AuditEvent.objects.filter(action="memory_provider.update").exists()
    assert elsewhere.requests == []


def _other_host(url: str) -> str:
    return url.replace("127.0.0.1", "localhost")


def _other_scheme(url: str) -> str:
    return url.replace("http://", "https://")


@pytest.mark.parametrize("moved", [_other_host, _other_scheme], ids=["host", "scheme"])
def test_another_host_or_scheme_on_the_same_port_is_a_move_too(owner, any_provider, moved):
    old_url = any_provider.config["base_url"]
    response = patch(owner, any_provider, moved_config(any_provider, moved(old_url)))
    assert response.status_code == 422, response.content
    assert error_of(response)["reason"] == "credential_required"
    as_stored(any_provider, old_url)


def test_after_a_refused_move_the_new_server_never_sees_the_key(
    owner, any_provider, elsewhere, server_of
):
    """The repro: PATCH only base_url, then test the provider."""
    response = patch(owner, any_provider, moved_config(any_provider, elsewhere.url))
    tested = owner.post(f"{URL}/{any_provider.id}/test")
    assert keys_seen_by(elsewhere) == set() and elsewhere.requests == []
    assert response.status_code == 422
    assert tested.status_code == 200, tested.content  # still the old server, with its key
    assert len(server_of(any_provider).requests) == 1


def test_after_a_refused_move_record_calls_stay_on_the_old_server(
    tenant, owner, any_provider, elsewhere, server_of
):
    memory = record_memory(tenant, any_provider)
    patch(owner, any_provider, moved_config(any_provider, elsewhere.url))
    listed = owner.get(f"{MEMORIES}/{memory.id}/records")
    assert elsewhere.requests == []
    assert listed.status_code == 200, listed.content
    assert server_of(any_provider).requests


def test_after_a_refused_move_the_purge_sends_the_admin_key_only_to_the_old_server(
    tenant, owner, oss_provider, oss_server, eager_celery, django_capture_on_commit_callbacks
):
    attacker = OssServer(api_key=NEW_KEY, admin_key=NEW_KEY).start()
    try:
        memory = record_memory(tenant, oss_provider, namespace="doomed")
        patch(owner, oss_provider, moved_config(oss_provider, attacker.url))
        with django_capture_on_commit_callbacks(execute=True):
            deleted = owner.delete(f"{MEMORIES}/{memory.id}", HTTP_IF_MATCH=f'"{memory.version}"')
        assert keys_seen_by(attacker) == set() and attacker.requests == []
    finally:
        attacker.stop()
    assert deleted.status_code == 204
    purge = [r for r in oss_server.requests if r["method"] == "DELETE"]
    assert len(purge) == 1 and purge[0]["headers"]["X-API-Key"] == OSS_ADMIN_KEY


def test_the_platform_moved_back_to_its_default_address_needs_its_key(owner, platform_provider):
    """An empty config means the hosted platform: another server than a custom base_url."""
    old_url = platform_provider.config["base_url"]
    response = patch(owner, platform_provider, {"config": {}})
    assert response.status_code == 422
    assert error_of(response)["reason"] == "credential_required"
    as_stored(platform_provider, old_url)


# --- a move with its credential, or with nothing to carry ----------------------------------


def test_a_new_base_url_with_a_credential_is_200_and_the_new_key_is_used(
    owner, any_provider, elsewhere, server_of
):
    body = {**moved_config(any_provider, elsewhere.url), "credential": {"api_key": NEW_KEY}}
    response = patch(owner, any_provider, body)
    assert response.status_code == 200, response.content
    assert response.json()["config"]["base_url"] == elsewhere.url
    assert NEW_KEY not in response.content.decode()
    any_provider.refresh_from_db()
    assert credential_of(any_provider) == {"api_key": NEW_KEY}  # the old admin key is gone
    tested = owner.post(f"{URL}/{any_provider.id}/test")
    assert tested.status_code == 200, tested.content
    assert len(elsewhere.requests) == 1
    assert NEW_KEY in json.dumps(elsewhere.requests[0]["headers"])
    assert keys_seen_by(elsewhere) == set()
    assert server_of(any_provider).requests == []
    event = AuditEvent.objects.get(action="memory_provider.update")
    assert event.details == {"fields": ["config", "credential"]}


def test_a_self_hosted_provider_moves_with_credential_null_and_sends_no_key(
    owner, oss_provider, oss_server
):
    keyless = OssServer().start()  # a self-hosted server without auth
    try:
        response = patch(
            owner, oss_provider, {**moved_config(oss_provider, keyless.url), "credential": None}
        )
        assert response.status_code == 200, response.content
        assert response.json()["has_credential"] is False
        tested = owner.post(f"{URL}/{oss_provider.id}/test")
        assert tested.status_code == 200, tested.content
        assert [r["headers"].get("X-API-Key") for r in keyless.requests] == [None]
    finally:
        keyless.stop()
    assert oss_server.requests == []


def test_the_platform_cannot_move_with_credential_null(owner, platform_provider, elsewhere):
    body = {**moved_config(platform_provider, elsewhere.url), "credential": None}
    response = patch(owner, platform_provider, body)
    assert response.status_code == 422
    assert "credential.api_key is required for mem0_platform" in error_of(response)["message"]
    as_stored(platform_provider, platform_provider.config["base_url"])


def test_a_provider_without_a_credential_moves_freely(tenant, owner, oss_server):
    provider = factories.create_provider(
        tenant.owner,
        {"type": "mem0_oss", "name": "open", "config": {"base_url": oss_server.url}},
    )
    response = patch(owner, provider, {"config": {"base_url": "https://mem0.example.com"}})
    assert response.status_code == 200, response.content
    assert response.json()["has_credential"] is False


# --- the same server keeps its key -----------------------------------------------------------


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda url: {"base_url": url + "/mem0/v2"}, id="path"),
        pytest.param(lambda url: {"base_url": url.upper() + "/"}, id="spelling"),
        pytest.param(lambda url: {"base_url": url, "read_timeout": 7}, id="timeout"),
        pytest.param(lambda url: {"base_url": url, "connect_timeout": 2}, id="connect-timeout"),
    ],
)
def test_a_change_on_the_same_server_keeps_the_key(owner, any_provider, change):
    config = change(any_provider.config["base_url"])
    response = patch(owner, any_provider, {"config": config})
    assert response.status_code == 200, response.content
    assert response.json()["has_credential"] is True
    any_provider.refresh_from_db()
    assert any_provider.config["base_url"] == config["base_url"].rstrip("/")  # as written
    assert credential_of(any_provider) == OLD_KEYS[any_provider.type]


def test_the_hosted_platforms_default_port_spelled_out_is_no_move(owner):
    created = owner.post(
        URL, {"type": "mem0_platform", "name": "p", "credential": {"api_key": PLATFORM_KEY}}
    ).json()
    provider = MemoryProvider.objects.get(pk=created["id"])
    response = patch(owner, provider, {"config": {"base_url": "HTTPS://API.mem0.ai:443/"}})
    assert response.status_code == 200, response.content
    assert credential_of(MemoryProvider.objects.get(pk=provider.pk)) == {"api_key": PLATFORM_KEY}


# --- a host compares as the HTTP client spells it (security review of issue 38) -------------

DEVIATION = "https://mem0.classic-ai.de"  # "ß" is "ss" in IDNA 2003, its own letter in 2008
DEVIATED = ["https://mem0.claßic-ai.de", "https://mem0.CLAẞIC-ai.de"]


def provider_at(tenant, base_url: str) -> MemoryProvider:
    return factories.create_provider(
        tenant.owner,
        {
            "type": "mem0_oss",
            "name": "by name",
            "config": {"base_url": base_url},
            "credential": OLD_KEYS["mem0_oss"],
        },
    )


def sent_to(base_url: str) -> str:
    """The host requests connects to for this address (where the stored key would go)."""
    return urlsplit(requests.Request("GET", base_url + "/v1/memories/").prepare().url).hostname


@pytest.mark.parametrize("new_url", DEVIATED)
def test_a_host_that_only_idna_2003_spells_the_same_is_a_move(tenant, owner, new_url):
    """The repro: the client sends to xn--claic-ai-sya.de, another domain than classic-ai.de."""
    provider = provider_at(tenant, DEVIATION)
    assert sent_to(new_url) != sent_to(DEVIATION)
    response = patch(owner, provider, {"config": {"base_url": new_url}})
    assert response.status_code == 422, response.content
    assert error_of(response)["reason"] == "credential_required"
    as_stored(provider, DEVIATION)
    assert not AuditEvent.objects.filter(action="memory_provider.update").exists()


def test_the_namespaces_of_a_deviated_host_are_on_another_backend():
    ours = providers.backend_key("mem0_oss", {"base_url": DEVIATION})
    theirs = providers.backend_key("mem0_oss", {"base_url": DEVIATED[0]})
    assert ours != theirs
    assert theirs == providers.backend_key(
        "mem0_oss", {"base_url": "https://mem0.xn--claic-ai-sya.de"}
    )


@pytest.mark.parametrize(
    "url",
    [
        *DEVIATED,
        DEVIATION,
        "https://BÜCHER.example:8443/v1",
        "https://Mem0_API.example.",
        "https://mem0.κόσμος.example",  # final sigma: another IDNA 2003/2008 deviation
        "https://[2001:DB8::1]:443",
    ],
)
def test_the_compared_host_is_the_one_the_client_connects_to(url):
    scheme, netloc = providers.origin_of(url)
    client = requests.Request("GET", url).prepare().url
    assert urlsplit(f"{scheme}://{netloc}").hostname == urlsplit(client).hostname.rstrip(".")


def test_a_unicode_spelling_of_the_same_host_keeps_the_key(tenant, owner):
    provider = provider_at(tenant, "https://mem0.xn--bcher-kva.example")
    response = patch(owner, provider, {"config": {"base_url": "https://mem0.BÜCHER.example"}})
    assert response.status_code == 200, response.content
    provider.refresh_from_db()
    assert credential_of(provider) == OLD_KEYS["mem0_oss"]


@pytest.mark.parametrize("host", ["ＥＸＡＭＰＬＥ.com", "☃.example"])
def test_a_host_the_client_cannot_send_to_is_refused_at_save_time(owner, host):
    """IDNA 2003 took these; the client (IDNA 2008) refuses every call to them."""
    body = {"type": "mem0_oss", "name": "x", "config": {"base_url": f"https://{host}"}}
    response = owner.post(URL, body)
    assert response.status_code == 422, response.content
    assert error_of(response)["message"] == "config.base_url needs a host name or an IP address"
    assert not MemoryProvider.objects.exists()


# --- the panel's "keep the stored keys" is decided under the row's lock ----------------------


def test_kept_keys_are_the_locked_rows_not_an_earlier_reads(tenant, owner, oss_provider):
    """A move committed after the caller read the provider: the keys given are merged with
    what the row stores now (the mover's credential), never with the victim's keys."""
    moved = patch(
        owner,
        oss_provider,
        {"config": {"base_url": "https://evil.example.com"}, "credential": {"api_key": "theirs"}},
    )
    assert moved.status_code == 200, moved.content
    providers.update_provider(
        tenant.owner, oss_provider.id, "*", credential_keys={"admin_api_key": NEW_KEY}
    )
    oss_provider.refresh_from_db()
    assert credential_of(oss_provider) == {"api_key": "theirs", "admin_api_key": NEW_KEY}


def test_kept_keys_stay_home_on_a_move(tenant, oss_provider):
    provider = providers.update_provider(
        tenant.owner,
        oss_provider.id,
        '"1"',
        config={"base_url": "https://mem0.example.com"},
        credential_keys={"admin_api_key": NEW_KEY},
    )
    assert credential_of(provider) == {"admin_api_key": NEW_KEY}
    event = AuditEvent.objects.get(action="memory_provider.update")
    assert event.details == {"fields": ["config", "credential"]}


def test_kept_keys_on_the_same_server_keep_the_others(tenant, oss_provider):
    provider = providers.update_provider(
        tenant.owner,
        oss_provider.id,
        '"1"',
        config={"base_url": oss_provider.config["base_url"] + "/v2"},
        credential_keys={"admin_api_key": NEW_KEY},
    )
    assert credential_of(provider) == {"api_key": OSS_KEY, "admin_api_key": NEW_KEY}
