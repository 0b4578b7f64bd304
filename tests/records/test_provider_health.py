"""/healthz reports memory providers that stopped answering, in every process (the state is
in the database), without failing the service and without naming anyone's provider."""

from __future__ import annotations

from datetime import timedelta

from django.db import DatabaseError
from django.db.models import QuerySet
from django.test import Client
from django.utils import timezone

from records.kind import on_delete
from records.models import ProviderOutage, PurgeJob
from records.services import purges
from tests.records.conftest import record_memory
from tests.records.test_records_api import add, url


def health() -> tuple[int, dict]:
    response = Client().get("/healthz")
    return response.status_code, response.json()


def test_a_provider_that_stops_answering_shows_as_degraded_until_it_answers(
    runner, memory, server_of
):
    add(runner, memory)
    assert health() == (
        200,
        {"status": "ok", "checks": {"database": "ok", "broker": "ok", "memory_providers": "ok"}},
    )

    server = server_of(memory.provider)
    server.refuse()
    assert runner.post(url(memory, "/search"), {"query": "units"}).status_code == 503
    status, body = health()
    assert status == 200  # facts, files and other workspaces still work
    assert body["status"] == "degraded"
    assert body["checks"]["database"] == body["checks"]["broker"] == "ok"
    providers = body["checks"]["memory_providers"]
    assert providers.startswith("error: 1 provider did not answer in the last 60 s")
    assert f"(memory:{memory.provider.type})" in providers
    assert memory.provider.id not in providers and server.url not in providers

    server.resume()
    assert runner.post(url(memory, "/search"), {"query": "units"}).status_code == 200
    assert health()[1]["status"] == "ok"
    assert not ProviderOutage.objects.exists()


def test_a_timeout_and_a_5xx_count_and_answers_about_missing_records_do_not(
    runner, memory, server_of
):
    server = server_of(memory.provider)
    assert runner.get(url(memory, "/00000000-0000-4000-8000-000000000000")).status_code == 404
    assert health()[1]["checks"]["memory_providers"] == "ok"  # a 404 is an answer

    server.fail(502, times=1)
    assert runner.post(url(memory, "/search"), {"query": "units"}).status_code == 503
    assert health()[1]["status"] == "degraded"
    outage = ProviderOutage.objects.get()
    assert "502" in outage.reason

    server.delay = 3  # over the provider's read timeout of 1 s
    assert runner.post(url(memory, "/search"), {"query": "units"}).status_code == 503
    again = ProviderOutage.objects.get()
    assert again.since == outage.since and again.last_failed_at > outage.last_failed_at
    assert "timed out" in again.reason


def test_two_failing_providers_are_counted_and_an_old_failure_is_not_reported(
    tenant, runner, oss_provider, platform_provider, oss_server, platform_server
):
    for provider, server in ((oss_provider, oss_server), (platform_provider, platform_server)):
        server.refuse()
        memory = record_memory(tenant, provider, namespace=f"ns-{provider.type}")
        assert runner.post(url(memory, "/search"), {"query": "x"}).status_code == 503
    providers = health()[1]["checks"]["memory_providers"]
    assert providers.startswith("error: 2 providers did not answer")
    assert "(memory:mem0_oss, memory:mem0_platform)" in providers

    # Nothing has called them for over a minute: no longer reported.
    ProviderOutage.objects.update(last_failed_at=timezone.now() - timedelta(seconds=61))
    assert health()[1] == {
        "status": "ok",
        "checks": {"database": "ok", "broker": "ok", "memory_providers": "ok"},
    }


def test_a_failed_purge_marks_its_provider_and_a_done_one_clears_it(
    tenant, oss_provider, oss_server, django_capture_on_commit_callbacks
):
    memory = record_memory(tenant, oss_provider, namespace="doomed")
    with django_capture_on_commit_callbacks(execute=False):
        on_delete(tenant.owner, memory)
        memory.delete()
    job = PurgeJob.objects.get(namespace="doomed")
    oss_server.refuse()
    purges.attempt(job.id)
    assert health()[1]["status"] == "degraded"
    oss_server.resume()
    PurgeJob.objects.filter(pk=job.pk).update(next_attempt_at=None)  # due again at once
    purges.attempt(job.id)
    job.refresh_from_db()
    assert job.status == "done"
    assert health()[1]["status"] == "ok"


def test_a_database_error_while_noting_leaves_the_answer_as_it_was(
    runner, memory, server_of, monkeypatch
):
    def broken(*args, **kwargs):
        raise DatabaseError("the outage table is locked")

    monkeypatch.setattr(ProviderOutage.objects, "bulk_create", broken)
    monkeypatch.setattr(QuerySet, "delete", broken)
    server_of(memory.provider).refuse()
    refused = runner.post(url(memory, "/search"), {"query": "units"})
    assert refused.status_code == 503
    assert refused.json()["error"]["dependency"] == f"memory:{memory.provider.type}"
    server_of(memory.provider).resume()
    assert runner.post(url(memory, "/search"), {"query": "units"}).status_code == 200
