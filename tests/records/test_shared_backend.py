"""Two workspaces on one mem0 backend: a namespace belongs to one memory per backend.

A backend is the provider type and the normalised ``config.base_url``, whatever workspace
or provider row points at it. No workspace may adopt, purge or test a namespace that
another live memory on the backend uses, and no one can derive another memory's default
namespace from its public id.
"""

from __future__ import annotations

import hashlib
import re
from io import StringIO

import pytest
from django.core.management import call_command

from memoryhub.models import Memory, MemoryProvider
from records.models import PurgeAttempt, PurgeJob
from records.services import providers
from records.services.providers import backend_of
from tests import factories
from tests.conftest import error_of, make_tenant
from tests.parallel import in_parallel
from tests.records.conftest import OSS_ADMIN_KEY, OSS_KEY, PLATFORM_KEY, record_memory

MEMORIES = "/api/v1/memories"
PROVIDERS = "/api/v1/memory-providers"
HOST = "https://mem0.example.com"


def provider_on(tenant, base_url: str, provider_type: str = "mem0_platform") -> MemoryProvider:
    credential = (
        {"api_key": PLATFORM_KEY}
        if provider_type == "mem0_platform"
        else {"api_key": OSS_KEY, "admin_api_key": OSS_ADMIN_KEY}
    )
    return factories.create_provider(
        tenant.owner,
        {
            "type": provider_type,
            "name": "shared mem0",
            "config": {"base_url": base_url, "read_timeout": 1},
            "credential": credential,
        },
    )


def adopt(api, provider: MemoryProvider, namespace: str | None = None):
    body = {"name": "Adopted", "type": provider.type, "provider_id": provider.id}
    if namespace is not None:
        body["namespace"] = namespace
    return api.post(MEMORIES, body)


def reveals(response, tenant) -> bool:
    text = response.content.decode()
    return tenant.workspace.id in text or tenant.workspace.name in text


@pytest.mark.parametrize(
    ("spelling", "canonical"),
    [
        ("HTTPS://Mem0.Example.com:443/", HOST),
        ("https://mem0.example.com///", HOST),
        ("https://mem0.example.com.", HOST),
        ("http://mem0.example.com:80/", "http://mem0.example.com"),
        ("http://mem0.example.com:443", "http://mem0.example.com:443"),
        ("https://mem0.example.com:8443/v1/", "https://mem0.example.com:8443/v1"),
        ("https://BÜCHER.example", "https://xn--bcher-kva.example"),
        ("https://[2001:DB8:0::1]:443/", "https://[2001:db8::1]"),
    ],
)
def test_base_urls_are_normalised_to_one_spelling(spelling, canonical):
    assert providers.normalize_base_url(spelling) == canonical


def test_another_workspace_cannot_adopt_a_namespace_through_another_spelling(tenant, other_tenant):
    mine = provider_on(tenant, HOST)
    theirs = provider_on(other_tenant, "HTTPS://Mem0.Example.com:443/")
    created = adopt(tenant.api(), mine, "user-42")
    assert created.status_code == 201, created.content
    response = adopt(other_tenant.api(), theirs, "user-42")
    assert response.status_code == 409, response.content
    assert error_of(response)["code"] == "already_exists"
    assert not reveals(response, tenant)
    # Nor its default namespace, known to anyone who sees the memory: no one adopts those.
    response = adopt(other_tenant.api(), theirs, adopt(tenant.api(), mine).json()["namespace"])
    assert response.status_code == 422 and "memoryhub's own" in error_of(response)["message"]
    assert not Memory.objects.filter(workspace=other_tenant.workspace).exists()


def test_the_same_namespace_on_another_backend_or_type_is_free(tenant, other_tenant):
    assert adopt(tenant.api(), provider_on(tenant, HOST), "user-42").status_code == 201
    elsewhere = provider_on(other_tenant, "https://mem0.example.com:8443")
    assert adopt(other_tenant.api(), elsewhere, "user-42").status_code == 201
    self_hosted = provider_on(other_tenant, HOST, "mem0_oss")
    assert adopt(other_tenant.api(), self_hosted, "user-42").status_code == 201


def test_the_default_namespace_is_keyed_by_a_server_secret(tenant, settings):
    from records.kind import default_namespace

    data = adopt(tenant.api(), provider_on(tenant, HOST)).json()
    namespace = data["namespace"]
    assert re.fullmatch(r"a13n-[0-9a-f]{32}", namespace)
    # Not computable from the public id alone ...
    assert namespace != "a13n-" + hashlib.sha256(data["id"].encode()).hexdigest()[:32]
    assert default_namespace(data["id"]) == namespace
    # ... because it depends on the server's secret.
    settings.SECRET_KEY = "another-deployment-secret"
    assert default_namespace(data["id"]) != namespace
    # The stored namespace is what counts, whatever the secret becomes.
    assert Memory.objects.get(pk=data["id"]).namespace == namespace


def test_a_purge_pending_in_one_workspace_blocks_adoption_in_another(tenant, other_tenant):
    mine = provider_on(tenant, HOST)
    data = adopt(tenant.api(), mine, "busy").json()
    # The test's transaction never commits: the purge stays pending.
    deleted = tenant.api().delete(f"{MEMORIES}/{data['id']}", HTTP_IF_MATCH=data["etag"])
    assert deleted.status_code == 204
    assert PurgeJob.objects.get().status == "pending"
    theirs = provider_on(other_tenant, "https://MEM0.example.com/")
    response = adopt(other_tenant.api(), theirs, "busy")
    assert response.status_code == 409, response.content
    error = error_of(response)
    assert (error["code"], error["reason"]) == ("conflict", "namespace_purging")
    assert not reveals(response, tenant)
    PurgeJob.objects.update(status="done")
    assert adopt(other_tenant.api(), theirs, "busy").status_code == 201


@pytest.mark.parametrize("holder", ["other workspace", "second provider"])
def test_a_purge_never_deletes_a_namespace_live_on_the_same_backend(
    request,
    holder,
    tenant,
    any_provider,
    server_of,
    eager_celery,
    django_capture_on_commit_callbacks,
):
    """Rows from before the rule: a deletion in A must not purge what B's memory reads."""
    server = server_of(any_provider)
    other = request.getfixturevalue("other_tenant") if holder == "other workspace" else tenant
    second = provider_on(other, server.url.upper() + "/", any_provider.type)
    doomed = record_memory(tenant, any_provider, namespace="shared")
    record_memory(other, second, namespace="shared")
    backend = backend_of(any_provider)
    backend.add("shared", "Prefers tea", {})
    backend.add("shared", "Lives in Lisbon", {})
    doomed.refresh_from_db()
    with django_capture_on_commit_callbacks(execute=True):
        response = tenant.api().delete(
            f"{MEMORIES}/{doomed.id}", HTTP_IF_MATCH=f'"{doomed.version}"'
        )
    assert response.status_code == 204
    job = PurgeJob.objects.get()
    assert (job.status, job.attempts) == ("skipped", 1)
    assert "uses this namespace" in job.last_error
    assert job.finished_at is not None and job.next_attempt_at is None
    attempt = PurgeAttempt.objects.get(job=job)
    assert not attempt.ok and "uses this namespace" in attempt.error
    assert len(server.in_namespace("shared")) == 2
    assert not [r for r in server.requests if r["method"] == "DELETE"]


def test_a_skipped_purge_is_listed_and_not_retried_while_the_namespace_is_live(
    tenant, other_tenant, platform_provider, platform_server, eager_celery
):
    from records.kind import on_delete
    from records.services import purges
    from records.tasks import purge_namespace

    theirs = provider_on(other_tenant, platform_server.url + "/")
    doomed = record_memory(tenant, platform_provider, namespace="shared")
    live = record_memory(other_tenant, theirs, namespace="shared")
    on_delete(tenant.owner, doomed)
    doomed.delete()
    job = PurgeJob.objects.get()
    assert purge_namespace(job.id) == "skipped"
    out = StringIO()
    call_command("purges", stdout=out)
    assert job.id in out.getvalue() and "skipped" in out.getvalue()
    with pytest.raises(Exception, match="uses this namespace") as refused:
        purges.retry(job.id)
    assert getattr(refused.value, "reason", None) == "namespace_in_use"
    # Once nothing uses the namespace, an operator may still purge it.
    live.delete()
    assert purges.retry(job.id).status == "pending"


def test_moving_a_provider_onto_a_backend_where_its_namespace_is_live_is_refused(
    tenant, other_tenant
):
    mine = provider_on(tenant, "https://mem0-a.example.com")
    assert adopt(tenant.api(), mine, "user-42").status_code == 201
    theirs = provider_on(other_tenant, HOST)
    data = adopt(other_tenant.api(), theirs, "user-42").json()
    # With its credential: a move without one is refused first (test_provider_moves.py).
    move = {"config": {"base_url": "HTTPS://MEM0.example.com:443/"}, "credential": {"api_key": "k"}}
    response = tenant.api().patch(f"{PROVIDERS}/{mine.id}", move, HTTP_IF_MATCH='"1"')
    assert response.status_code == 409, response.content
    assert error_of(response)["code"] == "already_exists"
    assert not reveals(response, other_tenant)
    mine.refresh_from_db()
    assert (mine.version, mine.config["base_url"]) == (1, "https://mem0-a.example.com")
    # Their memory deleted, its purge pending: still refused, now as namespace_purging.
    other_tenant.api().delete(f"{MEMORIES}/{data['id']}", HTTP_IF_MATCH=data["etag"])
    response = tenant.api().patch(f"{PROVIDERS}/{mine.id}", move, HTTP_IF_MATCH='"1"')
    assert response.status_code == 409
    assert error_of(response)["reason"] == "namespace_purging"
    PurgeJob.objects.update(status="done")
    response = tenant.api().patch(f"{PROVIDERS}/{mine.id}", move, HTTP_IF_MATCH='"1"')
    assert response.status_code == 200, response.content


def test_a_provider_with_a_pending_purge_keeps_its_address(tenant, other_tenant):
    """Moved mid-purge, the job would empty the namespace on the new server, and the old
    server's namespace would no longer be guarded against adoption while the call runs."""
    mine = provider_on(tenant, "https://mem0-a.example.com")
    data = adopt(tenant.api(), mine, "user-42").json()
    tenant.api().delete(f"{MEMORIES}/{data['id']}", HTTP_IF_MATCH=data["etag"])
    assert PurgeJob.objects.filter(provider=mine, status="pending").exists()
    move = {"config": {"base_url": "https://mem0-b.example.com"}, "credential": {"api_key": "k"}}
    response = tenant.api().patch(f"{PROVIDERS}/{mine.id}", move, HTTP_IF_MATCH='"1"')
    assert response.status_code == 409 and error_of(response)["reason"] == "purge_pending"
    mine.refresh_from_db()
    assert mine.config["base_url"] == "https://mem0-a.example.com"
    rename = tenant.api().patch(f"{PROVIDERS}/{mine.id}", {"name": "renamed"}, HTTP_IF_MATCH='"1"')
    assert rename.status_code == 200, rename.content  # only a move is refused


def test_the_provider_test_never_lists_a_namespace_used_on_the_backend(
    tenant, other_tenant, platform_provider, platform_server, monkeypatch
):
    taken, purging, free = "a" * 32, "b" * 32, "c" * 32
    theirs = provider_on(other_tenant, platform_server.url.upper())
    record_memory(other_tenant, theirs, namespace=f"a13n-test-{taken}")
    PurgeJob.objects.create(
        workspace=other_tenant.workspace,
        provider=theirs,
        namespace=f"a13n-test-{purging}",
        memory_id="mem_gone",
    )
    candidates = iter([taken, purging, free])
    monkeypatch.setattr(providers.secrets, "token_hex", lambda n: next(candidates))
    response = tenant.api().post(f"{PROVIDERS}/{platform_provider.id}/test")
    assert response.status_code == 200, response.content
    [request] = platform_server.requests
    assert request["body"]["filters"]["user_id"] == f"a13n-test-{free}"


@pytest.mark.django_db(transaction=True)
def test_workspaces_adopting_one_namespace_at_once_make_one_memory():
    spellings = [HOST, "HTTPS://MEM0.EXAMPLE.COM:443/", "https://Mem0.Example.com/", HOST + "/"]
    tenants = [make_tenant(f"Tenant {i}") for i in range(len(spellings))]
    owned = [provider_on(t, url) for t, url in zip(tenants, spellings, strict=True)]
    results = in_parallel(
        len(tenants), lambda i: adopt(tenants[i].api(), owned[i], "race").status_code
    )
    assert sorted(results) == [201] + [409] * (len(tenants) - 1), results
    assert Memory.objects.filter(namespace="race").count() == 1


@pytest.mark.parametrize(
    "alias",
    [HOST + "/x/..", HOST + "/.", HOST + "/%2e", HOST + "//v1", HOST + "/a;b", HOST + "/%41"],
)
def test_a_base_url_with_another_spelling_of_its_path_is_refused(tenant, alias):
    """HTTP clients resolve these to another path than the one the backend key would see."""
    response = tenant.api().post(
        "/api/v1/memory-providers",
        {"type": "mem0_oss", "name": "alias", "config": {"base_url": alias}},
    )
    assert response.status_code == 422, response.content
    assert "path" in error_of(response)["message"]
    assert not MemoryProvider.objects.filter(workspace=tenant.workspace).exists()


@pytest.mark.parametrize(
    ("spelling", "canonical"),
    [
        (HOST + "/x/../v1", HOST + "/v1"),
        (HOST + "/%76%31/", HOST + "/v1"),
        (HOST + "/./v1", HOST + "/v1"),
    ],
)
def test_rows_saved_before_the_path_rule_still_compare_as_their_server(spelling, canonical):
    assert providers.normalize_base_url(spelling) == canonical


def test_an_old_row_with_an_unparseable_base_url_breaks_no_other_workspace(tenant, other_tenant):
    """A row saved before today's checks (the old admin took any config) compares as written."""
    MemoryProvider.objects.create(
        workspace=other_tenant.workspace,
        type="mem0_platform",
        name="broken",
        config={"base_url": "https://h:99999"},
    )
    created = adopt(tenant.api(), provider_on(tenant, HOST), "user-7")
    assert created.status_code == 201, created.content


def test_memoryhubs_own_namespaces_cannot_be_adopted(tenant):
    """Defaults made before they were keyed are sha256 of a memory id: anyone can compute them."""
    legacy = "a13n-" + hashlib.sha256(b"mem_theirs").hexdigest()[:32]
    response = adopt(tenant.api(), provider_on(tenant, HOST), legacy)
    assert response.status_code == 422
    assert not Memory.objects.filter(workspace=tenant.workspace).exists()
