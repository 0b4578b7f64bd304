"""Purging a deleted record memory's namespace: retries with backoff, a bounded number of
tries, every try recorded, and the operators' command."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from memoryhub.models import Memory
from records.kind import on_delete
from records.models import PurgeAttempt, PurgeJob
from records.services import purges
from records.services.providers import backend_of
from records.tasks import purge_namespace
from support.fakes.mem0 import is_purge
from tests.records.conftest import record_memory

NS = "doomed"


@pytest.fixture
def deleted(tenant, any_provider, django_capture_on_commit_callbacks):
    """A record memory with two records, deleted: its purge job is pending, not yet run."""
    memory = record_memory(tenant, any_provider, namespace=NS)
    backend = backend_of(any_provider)
    backend.add(NS, "first", {})
    backend.add(NS, "second", {})
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        on_delete(tenant.owner, memory)
        memory.delete()
    assert len(callbacks) == 1
    return PurgeJob.objects.get(namespace=NS)


@pytest.fixture
def max_attempts(settings):
    settings.MEMORYHUB_SETTINGS = {**settings.MEMORYHUB_SETTINGS, "outbox.defaults.max_attempts": 4}
    return 4


def test_a_purge_that_fails_twice_then_succeeds(deleted, server_of, eager_celery, max_attempts):
    server = server_of(deleted.provider)
    server.fail(503, times=2, when=is_purge)
    purge_namespace.delay(deleted.id)
    deleted.refresh_from_db()
    assert (deleted.status, deleted.attempts, deleted.last_error) == ("done", 3, "")
    assert deleted.finished_at is not None
    log = list(deleted.attempt_log.values_list("number", "ok", "error"))
    assert [(n, ok) for n, ok, _ in log] == [(1, False), (2, False), (3, True)]
    assert all("unavailable" in error and "503" in error for _, ok, error in log if not ok)
    assert server.in_namespace(NS) == []
    assert len([r for r in server.requests if is_purge(r["method"], r["path"])]) == 3


def test_a_purge_that_never_succeeds_stops_and_the_records_stay(
    deleted, server_of, eager_celery, max_attempts
):
    server = server_of(deleted.provider)
    server.fail(500, when=is_purge)
    purge_namespace.delay(deleted.id)
    deleted.refresh_from_db()
    assert deleted.status == "failed"
    assert deleted.attempts == max_attempts
    assert "500" in deleted.last_error
    assert deleted.attempt_log.count() == max_attempts
    assert not deleted.attempt_log.filter(ok=True).exists()
    assert len(server.in_namespace(NS)) == 2  # the records stay
    # The job has stopped: another delivery of the task does nothing.
    purge_namespace.delay(deleted.id)
    assert PurgeAttempt.objects.count() == max_attempts


def test_each_failed_try_schedules_the_next_with_backoff(deleted, server_of, monkeypatch):
    server_of(deleted.provider).fail(502, when=is_purge)
    scheduled: list = []
    monkeypatch.setattr(
        purges,
        "schedule",
        lambda job_id, countdown=None, tries=None: scheduled.append((job_id, countdown, tries)),
    )
    assert purge_namespace(deleted.id) == "pending"
    # Another message before the backoff has passed does nothing ...
    assert purge_namespace(deleted.id) is None
    # ... but the one the failed try sent (naming its tries) starts the next try.
    assert purge_namespace(deleted.id, 1) == "pending"
    assert scheduled == [(deleted.id, 30, 1), (deleted.id, 60, 2)]
    deleted.refresh_from_db()
    assert deleted.next_attempt_at is not None and deleted.attempts == 2


def test_backoff_doubles_up_to_an_hour():
    assert [purges.backoff(n) for n in (1, 2, 3, 4)] == [30, 60, 120, 240]
    assert purges.backoff(50) == 3600


def test_an_auth_refusal_is_recorded_without_the_key(deleted, server_of, eager_celery):
    server_of(deleted.provider).refuse_auth = True
    purge_namespace.delay(deleted.id)
    deleted.refresh_from_db()
    assert deleted.status == "failed"
    assert deleted.last_error.startswith("provider_auth")
    assert "secret" not in deleted.last_error


def test_a_namespace_adopted_again_is_never_purged(tenant, deleted, server_of, eager_celery):
    PurgeJob.objects.filter(pk=deleted.pk).update(status="failed")
    record_memory(tenant, deleted.provider, namespace=NS)
    PurgeJob.objects.filter(pk=deleted.pk).update(status="pending")
    purge_namespace.delay(deleted.id)
    deleted.refresh_from_db()
    assert deleted.attempts >= 1
    assert "uses this namespace" in deleted.last_error
    assert len(server_of(deleted.provider).in_namespace(NS)) == 2


def test_a_job_that_is_not_pending_is_left_alone(deleted, server_of):
    PurgeJob.objects.filter(pk=deleted.pk).update(status="done")
    assert purge_namespace(deleted.id) is None
    assert purge_namespace("purge_unknown") is None
    assert server_of(deleted.provider).requests[-1]["method"] != "DELETE"


def test_the_command_lists_pending_and_failed_purges(deleted, server_of, eager_celery):
    server_of(deleted.provider).fail(500, when=is_purge)
    purge_namespace.delay(deleted.id)
    out = StringIO()
    call_command("purges", stdout=out)
    text = out.getvalue()
    assert deleted.id in text and "failed" in text and NS in text
    out = StringIO()
    call_command("purges", "--status", "done", stdout=out)
    assert deleted.id not in out.getvalue()


def test_the_command_retries_a_failed_purge(
    deleted, server_of, eager_celery, django_capture_on_commit_callbacks
):
    server = server_of(deleted.provider)
    server.fail(500, times=100, when=is_purge)
    purge_namespace.delay(deleted.id)
    deleted.refresh_from_db()
    assert deleted.status == "failed"
    server.reset_switches()
    out = StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("purges", "--retry", deleted.id, stdout=out)
    assert "queued again" in out.getvalue()
    deleted.refresh_from_db()
    assert deleted.status == "done"
    assert server.in_namespace(NS) == []


def test_the_command_refuses_to_retry_what_it_must_not(tenant, deleted):
    with pytest.raises(CommandError, match="not found"):
        call_command("purges", "--retry", "purge_nothing")
    record_memory(tenant, deleted.provider, namespace=NS)
    with pytest.raises(CommandError, match="uses this namespace"):
        call_command("purges", "--retry", deleted.id)
    Memory.objects.filter(namespace=NS).delete()
    PurgeJob.objects.filter(pk=deleted.pk).update(status="done")
    with pytest.raises(CommandError, match="done"):
        call_command("purges", "--retry", deleted.id)
