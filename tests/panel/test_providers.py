"""Memory providers in the panel: list, create, edit, enable/disable and test, against the
local mem0 servers over a real socket. A credential never reaches a page."""

from __future__ import annotations

import socket

import pytest

from memoryhub.models import MemoryProvider
from records.services import providers
from support.fakes.mem0 import OssServer
from tests import factories
from tests.panel.conftest import logged_in
from tests.records import conftest as mem0_fixtures
from tests.records.conftest import OSS_ADMIN_KEY, OSS_KEY, PLATFORM_KEY, record_memory

pytestmark = pytest.mark.django_db

# The faithful local mem0 servers over a real socket, and providers on them.
allow_loopback = mem0_fixtures.allow_loopback
platform_server, oss_server = mem0_fixtures.platform_server, mem0_fixtures.oss_server
platform_provider, oss_provider = mem0_fixtures.platform_provider, mem0_fixtures.oss_provider

NEW_KEY = "m0-brand-new-secret-key"


def url(tenant, rest: str = "") -> str:
    return f"/panel/w/{tenant.workspace.id}/providers/{rest}"


def shows_no_secret(response, *secrets: str) -> None:
    """Neither a key nor its encrypted form anywhere in the page's bytes."""
    for secret in (OSS_KEY, OSS_ADMIN_KEY, PLATFORM_KEY, NEW_KEY, *secrets):
        assert secret.encode() not in response.content, secret
    for stored in MemoryProvider.objects.values_list("credential_encrypted", flat=True):
        if stored:
            assert stored.encode() not in response.content


def credential(provider: MemoryProvider) -> dict | None:
    provider.refresh_from_db()
    return providers.credential_of(provider)


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# --- the list -------------------------------------------------------------------------------


def test_members_see_the_list_without_any_key(viewer, tenant, oss_provider, platform_provider):
    record_memory(tenant, oss_provider)
    response = logged_in(viewer).get(url(tenant))
    body = response.content.decode()
    assert response.status_code == 200
    assert "self-hosted" in body and "platform" in body and oss_provider.config["base_url"] in body
    assert body.count(">stored<") == 2
    assert "Add a provider" not in body and "Test</button>" not in body  # a viewer reads only
    assert 'aria-current="page">Providers</a>' in body
    shows_no_secret(response)


def test_the_list_runs_no_query_per_provider(viewer, tenant, django_assert_max_num_queries):
    for n in range(30):
        provider = factories.create_provider(
            tenant.owner,
            {"type": "mem0_oss", "name": f"p{n}", "config": {"base_url": f"https://m{n}.example"}},
        )
        if n % 3 == 0:
            record_memory(tenant, provider, namespace=f"ns-{n}")
    client = logged_in(viewer)
    with django_assert_max_num_queries(7):
        response = client.get(url(tenant))
    assert response.status_code == 200 and response.content.decode().count("<tr>") == 31


def test_an_empty_list_says_so(panel_admin, tenant):
    body = logged_in(panel_admin).get(url(tenant)).content.decode()
    assert "No memory providers yet: add one" in body


# --- who may do what ------------------------------------------------------------------------


@pytest.mark.parametrize("persona", ["viewer", "editor"])
def test_only_an_admin_changes_or_tests_providers(request, persona, tenant, oss_provider):
    client = logged_in(request.getfixturevalue(persona))
    listed = client.get(url(tenant))
    assert listed.status_code == 200 and "Edit</a>" not in listed.content.decode()
    for rest in ("new/", f"{oss_provider.id}/edit/", f"{oss_provider.id}/enabled/"):
        assert client.get(url(tenant, rest)).status_code == 403, rest
    assert client.post(url(tenant, "new/"), {"type": "mem0_oss", "name": "x"}).status_code == 403
    edit = client.post(url(tenant, f"{oss_provider.id}/edit/"), {"name": "renamed"})
    assert edit.status_code == 403
    assert client.post(url(tenant, f"{oss_provider.id}/enabled/"), {}).status_code == 403
    assert client.post(url(tenant, f"{oss_provider.id}/test/")).status_code == 403
    oss_provider.refresh_from_db()
    assert (oss_provider.name, oss_provider.enabled) == ("self-hosted", True)
    assert MemoryProvider.objects.count() == 1
    assert not tenant.workspace.audit_events.filter(action__startswith="memory_provider.").exclude(
        principal_type="system"
    )


def test_another_workspace_gets_404(outsider, panel_admin, tenant, other_tenant, oss_provider):
    client = logged_in(outsider)
    assert client.get(url(tenant)).status_code == 404
    assert client.get(url(tenant, f"{oss_provider.id}/edit/")).status_code == 404
    assert client.post(url(tenant, f"{oss_provider.id}/test/")).status_code == 404
    # Their own workspace's address with this provider's id: no such provider there.
    assert client.get(url(other_tenant, f"{oss_provider.id}/edit/")).status_code == 404
    assert client.post(url(other_tenant, f"{oss_provider.id}/enabled/")).status_code == 404
    assert logged_in(panel_admin).get(url(tenant, "memprov_nope/edit/")).status_code == 404


# --- creating -------------------------------------------------------------------------------


def test_an_admin_adds_a_provider_whose_key_is_never_shown(panel_admin, tenant, platform_server):
    client = logged_in(panel_admin)
    form = client.get(url(tenant, "new/"))
    assert form.status_code == 200 and 'type="password"' in form.content.decode()
    done = client.post(
        url(tenant, "new/"),
        {
            "type": "mem0_platform",
            "name": "Hosted mem0",
            "base_url": platform_server.url,
            "read_timeout": "2.5",
            "api_key": PLATFORM_KEY,
            "enabled": "on",
        },
        follow=True,
    )
    assert done.status_code == 200
    assert "Added the provider Hosted mem0." in done.content.decode()
    shows_no_secret(done)
    provider = MemoryProvider.objects.get(name="Hosted mem0")
    assert provider.config == {"base_url": platform_server.url, "read_timeout": 2.5}
    assert provider.enabled and credential(provider) == {"api_key": PLATFORM_KEY}
    event = tenant.workspace.audit_events.get(action="memory_provider.create")
    assert (event.principal_type, event.principal_id) == ("staff", "user:ada")
    assert event.object_id == provider.id and PLATFORM_KEY not in str(event.details)


def test_the_platforms_address_defaults_and_a_disabled_one_can_be_added(panel_admin, tenant):
    form = {"type": "mem0_platform", "name": "Hosted", "api_key": PLATFORM_KEY}
    assert logged_in(panel_admin).post(url(tenant, "new/"), form).status_code == 302
    provider = MemoryProvider.objects.get()
    assert provider.config == {"base_url": "https://api.mem0.ai"} and not provider.enabled


@pytest.mark.parametrize(
    ("form", "message"),
    [
        ({"type": "mem0_oss", "name": "x"}, "config.base_url is required for mem0_oss"),
        (
            {"type": "mem0_platform", "name": "x", "api_key": ""},
            "credential.api_key is required for mem0_platform",
        ),
        ({"type": "mem0_oss", "name": " ", "base_url": "https://a.example"}, "name is 1-200"),
        ({"type": "mem0", "name": "x"}, "type must be one of: mem0_oss, mem0_platform"),
        ({"type": "mem0_oss", "name": "x", "base_url": "not a url"}, "without spaces"),
        (
            {"type": "mem0_oss", "name": "x", "base_url": "https://a.example", "read_timeout": "x"},
            "config.read_timeout is a number of seconds",
        ),
        (
            {"type": "mem0_platform", "name": "x", "admin_api_key": OSS_ADMIN_KEY},
            "credential: unknown fields admin_api_key",
        ),
    ],
)
def test_a_bad_provider_is_a_clear_message_and_nothing_is_added(panel_admin, tenant, form, message):
    response = logged_in(panel_admin).post(url(tenant, "new/"), {"api_key": NEW_KEY, **form})
    body = response.content.decode()
    assert response.status_code == 422
    assert 'role="alert"' in body and message in body
    assert not MemoryProvider.objects.exists()
    shows_no_secret(response)  # the typed key is not put back into the form


# --- editing --------------------------------------------------------------------------------


def test_the_edit_form_shows_no_key(panel_admin, tenant, oss_provider):
    response = logged_in(panel_admin).get(url(tenant, f"{oss_provider.id}/edit/"))
    body = response.content.decode()
    assert response.status_code == 200
    assert 'value="self-hosted"' in body and oss_provider.config["base_url"] in body
    assert "A credential is stored. Leave a key blank to keep it" in body
    assert body.count('type="password" value=""') == 2
    shows_no_secret(response)


def test_a_blank_key_keeps_the_stored_one(panel_admin, tenant, oss_provider):
    client = logged_in(panel_admin)
    form = client.get(url(tenant, f"{oss_provider.id}/edit/")).context["form"]
    done = client.post(
        url(tenant, f"{oss_provider.id}/edit/"),
        {**form, "name": "Renamed", "api_key": "", "admin_api_key": ""},
        follow=True,
    )
    assert "Saved Renamed: name." in done.content.decode()
    oss_provider.refresh_from_db()
    assert oss_provider.name == "Renamed"
    assert credential(oss_provider) == {"api_key": OSS_KEY, "admin_api_key": OSS_ADMIN_KEY}
    event = tenant.workspace.audit_events.get(action="memory_provider.update")
    assert event.principal_id == "user:ada" and event.details == {"fields": ["name"]}


def test_a_typed_key_replaces_only_that_key(panel_admin, tenant, oss_provider):
    client = logged_in(panel_admin)
    form = client.get(url(tenant, f"{oss_provider.id}/edit/")).context["form"]
    done = client.post(
        url(tenant, f"{oss_provider.id}/edit/"), {**form, "admin_api_key": NEW_KEY}, follow=True
    )
    assert "Saved self-hosted: credential." in done.content.decode()
    shows_no_secret(done)
    assert credential(oss_provider) == {"api_key": OSS_KEY, "admin_api_key": NEW_KEY}
    event = tenant.workspace.audit_events.get(action="memory_provider.update")
    assert event.details == {"fields": ["credential"]}


def test_an_unchanged_form_changes_nothing(panel_admin, tenant, oss_provider):
    client = logged_in(panel_admin)
    form = client.get(url(tenant, f"{oss_provider.id}/edit/")).context["form"]
    done = client.post(url(tenant, f"{oss_provider.id}/edit/"), form, follow=True)
    assert "Nothing to save: self-hosted is as it was." in done.content.decode()
    oss_provider.refresh_from_db()
    assert oss_provider.version == 1
    assert not tenant.workspace.audit_events.filter(action="memory_provider.update").exists()


def test_a_stale_form_refuses_and_shows_the_provider_as_it_is(panel_admin, tenant, oss_provider):
    client = logged_in(panel_admin)
    form = client.get(url(tenant, f"{oss_provider.id}/edit/")).context["form"]
    providers.update_provider(tenant.owner, oss_provider.id, form["etag"], name="Changed meanwhile")
    response = client.post(
        url(tenant, f"{oss_provider.id}/edit/"), {**form, "name": "Mine", "api_key": NEW_KEY}
    )
    body = response.content.decode()
    assert response.status_code == 412
    assert "Someone changed this provider since you opened the form." in body
    assert 'value="Changed meanwhile"' in body and 'value="&quot;2&quot;"' in body
    shows_no_secret(response)
    oss_provider.refresh_from_db()
    assert oss_provider.name == "Changed meanwhile"
    assert credential(oss_provider)["api_key"] == OSS_KEY


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"name": ""}, "name is 1-200 characters"),
        ({"base_url": "ftp://x y"}, "config.base_url must be a URL without spaces"),
        ({"connect_timeout": "0"}, "config.connect_timeout is a number of seconds"),
        ({"api_key": "has space"}, "credential.api_key may not hold spaces"),
    ],
)
def test_a_bad_edit_is_a_clear_message_and_changes_nothing(
    panel_admin, tenant, oss_provider, change, message
):
    client = logged_in(panel_admin)
    form = client.get(url(tenant, f"{oss_provider.id}/edit/")).context["form"]
    response = client.post(
        url(tenant, f"{oss_provider.id}/edit/"), {**form, "admin_api_key": NEW_KEY, **change}
    )
    body = response.content.decode()
    assert response.status_code == 422
    assert 'role="alert"' in body and message in body
    shows_no_secret(response, "has space")
    oss_provider.refresh_from_db()
    assert (oss_provider.name, oss_provider.version) == ("self-hosted", 1)
    assert credential(oss_provider)["admin_api_key"] == OSS_ADMIN_KEY


# --- enabling and disabling -----------------------------------------------------------------


def test_disabling_asks_first_then_the_records_page_says_so(panel_admin, tenant, oss_provider):
    memory = record_memory(tenant, oss_provider)
    client = logged_in(panel_admin)
    confirm = client.get(url(tenant, f"{oss_provider.id}/enabled/"))
    body = confirm.content.decode()
    assert confirm.status_code == 200
    assert "Disable self-hosted?" in body and "1 record memory uses this provider" in body
    oss_provider.refresh_from_db()
    assert oss_provider.enabled  # a GET changes nothing
    done = client.post(
        url(tenant, f"{oss_provider.id}/enabled/"),
        {"etag": '"1"', "enabled": "false"},
        follow=True,
    )
    assert "Disabled self-hosted." in done.content.decode()
    assert ">disabled<" in done.content.decode()
    records_page = client.get(f"/panel/w/{tenant.workspace.id}/memories/{memory.id}/records/")
    assert records_page.status_code == 422
    assert "The provider of this memory is disabled." in records_page.content.decode()
    # Enabled again straight from the list (its button carries the ETag).
    assert 'name="etag" value="&quot;2&quot;"' in done.content.decode()
    again = client.post(
        url(tenant, f"{oss_provider.id}/enabled/"), {"etag": '"2"', "enabled": "true"}, follow=True
    )
    assert "Enabled self-hosted." in again.content.decode()
    assert client.get(records_page.request["PATH_INFO"]).status_code == 200
    events = tenant.workspace.audit_events.filter(action="memory_provider.update")
    assert [e.details for e in events.order_by("id")] == [{"fields": ["enabled"]}] * 2


def test_a_stale_toggle_changes_nothing(panel_admin, tenant, oss_provider):
    response = logged_in(panel_admin).post(
        url(tenant, f"{oss_provider.id}/enabled/"), {"etag": '"7"', "enabled": "false"}
    )
    assert response.status_code == 412 and 'role="alert"' in response.content.decode()
    oss_provider.refresh_from_db()
    assert oss_provider.enabled


# --- testing --------------------------------------------------------------------------------


def test_a_working_provider_passes_the_apis_test(panel_admin, tenant, platform_provider):
    client = logged_in(panel_admin)
    assert client.get(url(tenant, f"{platform_provider.id}/test/")).status_code == 405
    done = client.post(url(tenant, f"{platform_provider.id}/test/"), follow=True)
    assert "platform passed its test: the backend took its key." in done.content.decode()
    shows_no_secret(done)
    event = tenant.workspace.audit_events.get(action="memory_provider.test")
    assert event.principal_id == "user:ada" and event.details == {"ok": True}


def test_a_backend_nobody_listens_on_fails_the_test_on_the_list(panel_admin, tenant):
    provider = factories.create_provider(
        tenant.owner,
        {
            "type": "mem0_oss",
            "name": "gone",
            "config": {"base_url": f"http://127.0.0.1:{closed_port()}"},
            "credential": {"api_key": NEW_KEY},
        },
    )
    response = logged_in(panel_admin).post(url(tenant, f"{provider.id}/test/"))
    body = response.content.decode()
    assert response.status_code == 503
    assert 'role="alert"' in body and "gone failed its test." in body
    assert "the connection failed" in body and "<table>" in body  # the list still shows
    shows_no_secret(response)
    event = tenant.workspace.audit_events.get(action="memory_provider.test")
    assert event.details == {"ok": False, "error": "unavailable"}


@pytest.mark.parametrize(
    ("switch", "message"),
    [
        ("refuse_auth", "The backend refused its key: edit the provider to type a new one."),
        ("fail_500", "it failed (HTTP 500)"),
    ],
)
def test_a_refusing_backend_fails_the_test_on_the_list(
    panel_admin, tenant, oss_provider, oss_server, switch, message
):
    if switch == "refuse_auth":
        oss_server.refuse_auth = True
    else:
        oss_server.fail(500)
    response = logged_in(panel_admin).post(url(tenant, f"{oss_provider.id}/test/"))
    body = response.content.decode()
    assert response.status_code == 503
    assert 'role="alert"' in body and "self-hosted failed its test." in body and message in body
    shows_no_secret(response)


# --- a new address needs its keys again (issue 38) ------------------------------------------


@pytest.fixture
def elsewhere():
    """Another self-hosted server: where an edit moves the provider. It takes only NEW_KEY."""
    server = OssServer(api_key=NEW_KEY, admin_key=NEW_KEY).start()
    yield server
    server.stop()


def test_the_edit_form_says_a_new_address_needs_the_keys_again(panel_admin, tenant, oss_provider):
    body = logged_in(panel_admin).get(url(tenant, f"{oss_provider.id}/edit/")).content.decode()
    assert "Changing the address to another server (scheme, host or port) needs the keys again" in (
        body
    )


def test_a_new_address_with_blank_keys_is_refused_and_the_key_stays_home(
    panel_admin, tenant, oss_provider, oss_server, elsewhere
):
    client = logged_in(panel_admin)
    form = client.get(url(tenant, f"{oss_provider.id}/edit/")).context["form"]
    response = client.post(
        url(tenant, f"{oss_provider.id}/edit/"),
        {**form, "base_url": elsewhere.url, "api_key": "", "admin_api_key": ""},
    )
    tested = client.post(url(tenant, f"{oss_provider.id}/test/"), follow=True)
    assert elsewhere.requests == []  # neither key went to the new address
    body = response.content.decode()
    assert response.status_code == 422
    assert 'role="alert"' in body
    assert "needs its credential in the same request" in body
    assert f'value="{elsewhere.url}"' in body  # the form keeps what was typed, to add the keys
    shows_no_secret(response)
    oss_provider.refresh_from_db()
    assert (oss_provider.version, oss_provider.config["base_url"]) == (1, oss_server.url)
    assert credential(oss_provider) == {"api_key": OSS_KEY, "admin_api_key": OSS_ADMIN_KEY}
    assert "self-hosted passed its test" in tested.content.decode()  # on its old server
    assert not tenant.workspace.audit_events.filter(action="memory_provider.update").exists()


def test_a_new_address_takes_only_the_keys_typed_for_it(
    panel_admin, tenant, oss_provider, oss_server, elsewhere
):
    client = logged_in(panel_admin)
    form = client.get(url(tenant, f"{oss_provider.id}/edit/")).context["form"]
    done = client.post(
        url(tenant, f"{oss_provider.id}/edit/"),
        {**form, "base_url": elsewhere.url, "api_key": NEW_KEY, "admin_api_key": ""},
        follow=True,
    )
    assert "Saved self-hosted: config, credential." in done.content.decode()
    shows_no_secret(done)
    # The stored admin key stayed behind: it was given for the old server.
    assert credential(oss_provider) == {"api_key": NEW_KEY}
    tested = client.post(url(tenant, f"{oss_provider.id}/test/"), follow=True)
    assert "self-hosted passed its test" in tested.content.decode()
    sent = [r["headers"].get("X-API-Key") for r in elsewhere.requests]
    assert sent == [NEW_KEY]
    assert oss_server.requests == []


def test_a_new_path_on_the_same_server_keeps_the_stored_keys(panel_admin, tenant, oss_provider):
    client = logged_in(panel_admin)
    form = client.get(url(tenant, f"{oss_provider.id}/edit/")).context["form"]
    done = client.post(
        url(tenant, f"{oss_provider.id}/edit/"),
        {**form, "base_url": form["base_url"] + "/mem0", "api_key": "", "admin_api_key": ""},
        follow=True,
    )
    assert "Saved self-hosted: config." in done.content.decode()
    assert credential(oss_provider) == {"api_key": OSS_KEY, "admin_api_key": OSS_ADMIN_KEY}


# --- the form's keys and version are judged under the row's lock (review of issue 38) -------


@pytest.mark.parametrize("etag", ["*", '"1", "2"'])
def test_a_form_not_at_one_version_is_refused_and_shown_as_it_is(
    panel_admin, tenant, oss_provider, etag
):
    """A form always carries the one ETag it was read at: "*" would match any version."""
    client = logged_in(panel_admin)
    form = client.get(url(tenant, f"{oss_provider.id}/edit/")).context["form"]
    response = client.post(
        url(tenant, f"{oss_provider.id}/edit/"),
        {**form, "etag": etag, "name": "Mine", "admin_api_key": NEW_KEY},
    )
    assert response.status_code == 412
    assert 'role="alert"' in response.content.decode()
    assert response.context["form"]["etag"] == '"1"'  # the form again, at the version now
    shows_no_secret(response)
    oss_provider.refresh_from_db()
    assert (oss_provider.name, oss_provider.version) == ("self-hosted", 1)
    assert credential(oss_provider)["admin_api_key"] == OSS_ADMIN_KEY


def test_a_toggle_at_any_version_is_refused(panel_admin, tenant, oss_provider):
    response = logged_in(panel_admin).post(
        url(tenant, f"{oss_provider.id}/enabled/"), {"etag": "*", "enabled": "false"}
    )
    assert response.status_code == 412
    oss_provider.refresh_from_db()
    assert oss_provider.enabled and oss_provider.version == 1


def test_blank_keys_never_follow_a_move_made_while_the_form_was_sent(
    panel_admin, tenant, oss_provider, monkeypatch
):
    """The repro: the form's changes are read, then a write key moves the provider (with no
    credential, as the API's rule asks), then the form's change is saved."""
    import panel.views.providers as views

    mover = tenant.api("write")
    decided = views._changes

    def moved_meanwhile(provider, post):
        changes = decided(provider, post)
        moved = mover.patch(
            f"/api/v1/memory-providers/{provider.id}",
            {"config": {"base_url": "https://evil.example.com"}, "credential": None},
            HTTP_IF_MATCH='"1"',
        )
        assert moved.status_code == 200, moved.content
        return changes

    monkeypatch.setattr(views, "_changes", moved_meanwhile)
    client = logged_in(panel_admin)
    form = client.get(url(tenant, f"{oss_provider.id}/edit/")).context["form"]
    client.post(
        url(tenant, f"{oss_provider.id}/edit/"), {**form, "etag": "*", "admin_api_key": NEW_KEY}
    )
    oss_provider.refresh_from_db()
    assert oss_provider.config["base_url"] == "https://evil.example.com"
    stored = credential(oss_provider) or {}
    assert OSS_KEY not in stored.values() and OSS_ADMIN_KEY not in stored.values()


@pytest.mark.parametrize("new_url", ["https://mem0.claßic-ai.de", "https://mem0.CLAẞIC-ai.de"])
def test_blank_keys_on_a_host_only_idna_2003_spells_the_same_are_refused(
    panel_admin, tenant, new_url
):
    """The client sends to xn--claic-ai-sya.de: another domain than classic-ai.de."""
    provider = factories.create_provider(
        tenant.owner,
        {
            "type": "mem0_oss",
            "name": "by name",
            "config": {"base_url": "https://mem0.classic-ai.de"},
            "credential": {"api_key": OSS_KEY, "admin_api_key": OSS_ADMIN_KEY},
        },
    )
    client = logged_in(panel_admin)
    form = client.get(url(tenant, f"{provider.id}/edit/")).context["form"]
    response = client.post(
        url(tenant, f"{provider.id}/edit/"),
        {**form, "base_url": new_url, "api_key": "", "admin_api_key": ""},
    )
    assert response.status_code == 422
    assert "needs its credential in the same request" in response.content.decode()
    provider.refresh_from_db()
    assert (provider.version, provider.config["base_url"]) == (1, "https://mem0.classic-ai.de")
    assert credential(provider) == {"api_key": OSS_KEY, "admin_api_key": OSS_ADMIN_KEY}
