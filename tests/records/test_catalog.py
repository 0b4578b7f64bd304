"""Record memories in the catalog, end to end through /api/v1/memories."""

from __future__ import annotations

import hashlib
import threading

import pytest
from django.db import connection

from memoryhub.models import Memory, MemoryProvider
from records.models import PurgeJob
from tests.conftest import error_of
from tests.records.conftest import PLATFORM_KEY

URL = "/api/v1/memories"


def create(api, provider: MemoryProvider, **extra):
    body = {"name": "User facts", "type": provider.type, "provider_id": provider.id, **extra}
    return api.post(URL, body)


def test_a_record_memory_gets_a_namespace_derived_from_its_id(owner, any_provider):
    from records.kind import default_namespace

    response = create(owner, any_provider, guide="One fact per record.")
    assert response.status_code == 201, response.content
    data = response.json()
    assert data["kind"] == "record" and data["type"] == any_provider.type
    assert data["provider_id"] == any_provider.id
    # Keyed by the server's secret, not the bare hash of the public id.
    assert data["namespace"] == default_namespace(data["id"])
    assert data["namespace"] != "a13n-" + hashlib.sha256(data["id"].encode()).hexdigest()[:32]
    assert len(data["namespace"]) == len("a13n-") + 32
    assert data["file_count"] is None and data["content_bytes"] is None


def test_records_flow_through_a_memory_made_by_the_catalog(owner, runner, any_provider):
    memory_id = create(owner, any_provider).json()["id"]
    response = runner.post(f"{URL}/{memory_id}/records", {"text": "Prefers tea"})
    assert response.status_code == 201
    listed = runner.get(f"{URL}/{memory_id}/records").json()
    assert [r["text"] for r in listed["results"]] == ["Prefers tea"]


def test_an_explicit_namespace_adopts_existing_records(owner, runner, platform_provider):
    from records.services.providers import backend_of

    backend = backend_of(platform_provider)
    backend.add("app-user-42", "Written by the application", {})
    response = create(owner, platform_provider, namespace="app-user-42")
    assert response.status_code == 201, response.content
    assert response.json()["namespace"] == "app-user-42"
    listed = runner.get(f"{URL}/{response.json()['id']}/records").json()
    assert [r["text"] for r in listed["results"]] == ["Written by the application"]


@pytest.mark.parametrize(
    "namespace", ["", "a b", "tab\there", "star*", "x" * 257, "bell\x07", 42, ["x"]]
)
def test_bad_namespaces_are_422(owner, platform_provider, namespace):
    response = create(owner, platform_provider, namespace=namespace)
    assert response.status_code == 422, response.content
    assert not Memory.objects.exists()


def test_a_namespace_of_256_printable_characters_is_fine(owner, platform_provider):
    assert create(owner, platform_provider, namespace="ü" + "x" * 255).status_code == 201


def test_a_namespace_used_by_another_memory_is_409_already_exists(owner, platform_provider):
    assert create(owner, platform_provider, namespace="shared").status_code == 201
    response = create(owner, platform_provider, namespace="shared")
    assert response.status_code == 409
    assert error_of(response)["code"] == "already_exists"
    assert Memory.objects.count() == 1


def test_the_provider_must_be_an_enabled_provider_of_the_workspace_of_that_type(
    tenant, owner, other_tenant, platform_provider, oss_provider
):
    response = create(owner, platform_provider, type="mem0_oss")
    assert response.status_code == 422 and "type" in error_of(response)["message"]
    response = owner.post(URL, {"name": "x", "type": "mem0_platform"})
    assert response.status_code == 422 and "provider_id" in error_of(response)["message"]
    response = owner.post(
        URL, {"name": "x", "type": "mem0_platform", "provider_id": "memprov_unknown"}
    )
    assert response.status_code == 422
    theirs = MemoryProvider.objects.create(
        workspace=other_tenant.workspace, type="mem0_platform", name="theirs"
    )
    assert create(owner, theirs).status_code == 422
    platform_provider.enabled = False
    platform_provider.save()
    response = create(owner, platform_provider)
    assert response.status_code == 422
    assert error_of(response)["reason"] == "disabled"
    assert not Memory.objects.exists()


def test_always_load_does_not_apply(owner, platform_provider):
    response = create(owner, platform_provider, always_load=["README.md"])
    assert response.status_code == 422


def test_type_provider_and_namespace_never_change(owner, platform_provider, oss_provider):
    data = create(owner, platform_provider).json()
    for change in (
        {"type": "mem0_oss"},
        {"provider_id": oss_provider.id},
        {"namespace": "other"},
    ):
        response = owner.patch(f"{URL}/{data['id']}", change, HTTP_IF_MATCH=data["etag"])
        assert response.status_code == 422, change
    memory = Memory.objects.get(pk=data["id"])
    assert (memory.provider_id, memory.namespace) == (platform_provider.id, data["namespace"])


def test_a_record_memory_needs_write_to_create(runner, platform_provider):
    assert create(runner, platform_provider).status_code == 403


# --- deleting: the purge -------------------------------------------------------------------


def test_deleting_purges_the_namespace_in_the_background(
    owner, runner, any_provider, server_of, eager_celery, django_capture_on_commit_callbacks
):
    data = create(owner, any_provider).json()
    runner.post(f"{URL}/{data['id']}/records", {"text": "to be purged"})
    server = server_of(any_provider)
    assert len(server.in_namespace(data["namespace"])) == 1
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = owner.delete(f"{URL}/{data['id']}", HTTP_IF_MATCH=data["etag"])
    assert response.status_code == 204
    assert len(callbacks) == 1
    job = PurgeJob.objects.get()
    assert (job.memory_id, job.namespace, job.status, job.attempts) == (
        data["id"],
        data["namespace"],
        "done",
        1,
    )
    assert server.in_namespace(data["namespace"]) == []
    purge = [r for r in server.requests if r["method"] == "DELETE"][-1]
    assert purge["query"] == {"user_id": data["namespace"]}


def test_the_outbox_row_is_written_in_the_delete_transaction(owner, platform_provider):
    data = create(owner, platform_provider).json()
    # Without commit callbacks (the test's transaction never commits) no task is sent,
    # yet the row is there: the same transaction wrote it.
    assert owner.delete(f"{URL}/{data['id']}", HTTP_IF_MATCH=data["etag"]).status_code == 204
    job = PurgeJob.objects.get()
    assert job.status == "pending" and job.attempts == 0


def test_a_failed_delete_writes_no_outbox_row(owner, platform_provider):
    data = create(owner, platform_provider).json()
    assert owner.delete(f"{URL}/{data['id']}", HTTP_IF_MATCH='"99"').status_code == 412
    assert not PurgeJob.objects.exists()
    assert Memory.objects.filter(pk=data["id"]).exists()


def test_a_namespace_being_purged_cannot_be_taken(owner, platform_provider):
    data = create(owner, platform_provider, namespace="busy").json()
    owner.delete(f"{URL}/{data['id']}", HTTP_IF_MATCH=data["etag"])
    response = create(owner, platform_provider, namespace="busy")
    assert response.status_code == 409
    error = error_of(response)
    assert (error["code"], error["reason"]) == ("conflict", "namespace_purging")
    PurgeJob.objects.update(status="done")
    assert create(owner, platform_provider, namespace="busy").status_code == 201


def test_the_same_namespace_on_another_provider_is_free_only_on_another_backend(
    owner, platform_provider, tenant
):
    def provider_at(base_url: str) -> MemoryProvider:
        return MemoryProvider.objects.create(
            workspace=tenant.workspace,
            type="mem0_platform",
            name="second account",
            config={**platform_provider.config, "base_url": base_url},
            credential_encrypted=platform_provider.credential_encrypted,
        )

    assert create(owner, platform_provider, namespace="ns").status_code == 201
    # A second row for the same server is the same backend: its namespaces are shared.
    response = create(owner, provider_at(platform_provider.config["base_url"]), namespace="ns")
    assert response.status_code == 409
    assert error_of(response)["code"] == "already_exists"
    assert create(owner, provider_at("https://mem0.example.com"), namespace="ns").status_code == 201


@pytest.mark.django_db(transaction=True)
def test_concurrent_creates_of_one_namespace_make_one_memory(platform_provider, tenant):
    """Two creates race on real parallel connections: one wins, the other is 409."""
    from tests.conftest import Api

    barrier = threading.Barrier(2)
    statuses: list[int] = []

    def worker():
        try:
            barrier.wait()
            statuses.append(
                create(
                    Api(key=tenant.keys["write"]), platform_provider, namespace="race"
                ).status_code
            )
        finally:
            connection.close()

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(statuses) == [201, 409]
    assert Memory.objects.filter(namespace="race").count() == 1


def test_the_credential_never_reaches_the_memory_json(owner, platform_provider):
    response = create(owner, platform_provider)
    assert PLATFORM_KEY not in response.content.decode()


def test_another_tenant_cannot_use_the_catalog_on_our_memory(stranger, owner, platform_provider):
    data = create(owner, platform_provider).json()
    assert stranger.delete(f"{URL}/{data['id']}", HTTP_IF_MATCH=data["etag"]).status_code == 404
    assert not PurgeJob.objects.exists()
