"""The purge outbox: a try claims its job with a conditional UPDATE, calls mem0 holding no
lock and no transaction, and writes its outcome only while it still holds the claim; a
claim whose worker died runs out and is taken over; beat's sweep resends what was lost."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from memoryhub.errors import ApiError
from memoryhub.models import MemoryProvider
from records.kind import on_delete
from records.models import PurgeAttempt, PurgeJob
from records.services import purges
from records.services.providers import backend_of
from records.tasks import purge_namespace, send_due_purges
from support import workers
from support.fakes.mem0 import is_purge
from tests import factories
from tests.conftest import error_of
from tests.parallel import in_parallel
from tests.records.conftest import PLATFORM_KEY, record_memory

NS = "outbox-ns"
DEAD_TOKEN = "d" * 32
SWEEP = "records.send_due_purges"


def _purges(server) -> list[dict]:
    return [r for r in server.requests if is_purge(r["method"], r["path"])]


@pytest.fixture
def sent(monkeypatch) -> list:
    """Messages the services send, caught instead of reaching the broker."""
    caught: list = []
    monkeypatch.setattr(
        purges,
        "schedule",
        lambda job_id, countdown=None, tries=None: caught.append((job_id, countdown, tries)),
    )
    return caught


def _patient(provider: MemoryProvider) -> MemoryProvider:
    """The provider with a read timeout that outlasts a slowed-down fake server."""
    MemoryProvider.objects.filter(pk=provider.pk).update(
        config={**provider.config, "read_timeout": 20}
    )
    provider.refresh_from_db()
    return provider


def _deleted(tenant, provider: MemoryProvider, namespace: str = NS) -> PurgeJob:
    """A record memory with two records, deleted and committed: its job is pending."""
    memory = record_memory(tenant, provider, namespace=namespace)
    backend = backend_of(provider)
    backend.add(namespace, "first", {})
    backend.add(namespace, "second", {})
    with transaction.atomic():
        on_delete(tenant.owner, memory)
        memory.delete()
    return PurgeJob.objects.get(namespace=namespace)


def _as_a_dead_worker_left_it(job: PurgeJob, *, claimed_until, attempts: int = 1) -> int:
    """What a worker killed during the mem0 call leaves: its claim and an attempt row
    without an outcome. Answers the attempt row's id."""
    PurgeJob.objects.filter(pk=job.pk).update(
        attempts=attempts, claimed_until=claimed_until, claim_token=DEAD_TOKEN
    )
    return PurgeAttempt.objects.create(
        job=job, workspace_id=job.workspace_id, number=attempts, error=purges.NO_OUTCOME
    ).pk


def _in_threads(*works) -> list:
    """Each ``work()`` in its own thread (own database connection), released together."""
    return in_parallel(len(works), lambda i: works[i]())


def _wait_for(predicate, seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


# --- no lock and no transaction across the mem0 call ---------------------------------------


@pytest.mark.django_db(transaction=True)
def test_no_lock_or_transaction_is_held_while_mem0_is_called(
    tenant, other_tenant, platform_provider, platform_server, sent
):
    job = _deleted(tenant, _patient(platform_provider))
    platform_server.delay = 2.0
    worker = threading.Thread(target=lambda: (purge_namespace(job.id), connection.close()))
    worker.start()
    try:
        _wait_for(lambda: _purges(platform_server))  # the call is under way (and slow)
        with transaction.atomic(), connection.cursor() as cursor:
            # Old code held the job's row lock here: NOWAIT would fail at once.
            cursor.execute(
                f"SELECT id FROM {PurgeJob._meta.db_table} WHERE id = %s FOR UPDATE NOWAIT",
                [job.id],
            )
            assert cursor.fetchone() == (job.id,)
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                " AND state LIKE 'idle in transaction%%'"
            )
            assert cursor.fetchone() == (0,)
            cursor.execute(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND database ="
                " (SELECT oid FROM pg_database WHERE datname = current_database())"
            )
            assert cursor.fetchone() == (0,)
        # The pending job alone keeps the namespace from being adopted during the call, in
        # any workspace on the backend, and the refusal does not wait for the call.
        theirs = factories.create_provider(
            other_tenant.owner,
            {
                "type": "mem0_platform",
                "name": "same server",
                "config": {"base_url": platform_server.url + "/"},
                "credential": {"api_key": PLATFORM_KEY},
            },
        )
        started = time.monotonic()
        response = other_tenant.api().post(
            "/api/v1/memories",
            {"name": "Adopted", "type": "mem0_platform", "provider_id": theirs.id, "namespace": NS},
        )
        assert time.monotonic() - started < 1.5
        assert response.status_code == 409, response.content
        assert error_of(response)["reason"] == "namespace_purging"
        assert worker.is_alive()  # all of that happened during the call
    finally:
        worker.join(timeout=60)
    job.refresh_from_db()
    assert (job.status, job.attempts, job.claimed_until, job.claim_token) == ("done", 1, None, "")
    assert list(job.attempt_log.values_list("number", "ok", "error")) == [(1, True, "")]
    assert len(_purges(platform_server)) == 1
    assert platform_server.in_namespace(NS) == []


# --- one job, one call -----------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_two_workers_trying_one_job_at_once_call_mem0_once(tenant, any_provider, server_of, sent):
    server = server_of(any_provider)
    job = _deleted(tenant, _patient(any_provider))
    server.delay = 0.5
    results = _in_threads(lambda: purge_namespace(job.id), lambda: purge_namespace(job.id))
    assert sorted(results, key=str) == [None, "done"], results
    assert len(_purges(server)) == 1
    job.refresh_from_db()
    assert (job.status, job.attempts) == ("done", 1)
    assert job.attempt_log.count() == 1


@pytest.mark.django_db(transaction=True)
def test_an_expired_claim_is_taken_over_and_finished_exactly_once(
    tenant, any_provider, server_of, sent
):
    server = server_of(any_provider)
    job = _deleted(tenant, any_provider)
    dead_attempt = _as_a_dead_worker_left_it(
        job, claimed_until=timezone.now() - timedelta(seconds=1)
    )
    # The dead worker's message comes back (acks_late) while beat's sweep sends one too.
    results = _in_threads(lambda: purge_namespace(job.id, 0), lambda: purge_namespace(job.id))
    assert sorted(results, key=str) == [None, "done"], results
    assert len(_purges(server)) == 1
    assert server.in_namespace(NS) == []
    job.refresh_from_db()
    assert (job.status, job.attempts, job.claim_token) == ("done", 2, "")
    assert list(job.attempt_log.values_list("number", "ok", "error")) == [
        (1, False, purges.NO_OUTCOME),
        (2, True, ""),
    ]
    # Another delivery finds nothing to do.
    assert purge_namespace(job.id, 0) is None
    assert len(_purges(server)) == 1
    # The dead worker was only stuck: when it comes back, its outcome changes nothing.
    stale = purges.Claim(job, DEAD_TOKEN, 1, dead_attempt)
    assert purges.finish(stale, "unavailable: it failed (HTTP 503)").status is None
    job.refresh_from_db()
    assert (job.status, job.attempts, job.last_error) == ("done", 2, "")


def test_a_live_claim_keeps_other_workers_off(tenant, platform_provider, platform_server, sent):
    job = _deleted(tenant, platform_provider)
    _as_a_dead_worker_left_it(job, claimed_until=timezone.now() + timedelta(minutes=5))
    assert purge_namespace(job.id, 0) is None
    assert purge_namespace(job.id) is None
    assert purges.due() == []
    assert _purges(platform_server) == []
    job.refresh_from_db()
    assert (job.status, job.attempts, job.claim_token) == ("pending", 1, DEAD_TOKEN)


def test_an_interrupted_last_try_stops_the_job_without_another_call(
    tenant, platform_provider, platform_server, settings, sent
):
    settings.MEMORYHUB_SETTINGS = {**settings.MEMORYHUB_SETTINGS, "outbox.defaults.max_attempts": 2}
    job = _deleted(tenant, platform_provider)
    _as_a_dead_worker_left_it(job, claimed_until=timezone.now() - timedelta(seconds=1), attempts=2)
    assert purge_namespace(job.id) == "failed"
    job.refresh_from_db()
    assert (job.status, job.attempts, job.last_error) == ("failed", 2, purges.LAST_TRY_LOST)
    assert job.finished_at is not None and job.claim_token == ""
    assert _purges(platform_server) == []
    assert len(platform_server.in_namespace(NS)) == 2


def test_retry_waits_for_a_try_under_way_and_clears_a_dead_one(
    tenant, platform_provider, platform_server, sent
):
    job = _deleted(tenant, platform_provider)
    _as_a_dead_worker_left_it(job, claimed_until=timezone.now() + timedelta(minutes=5))
    with pytest.raises(ApiError) as refused:
        purges.retry(job.id)
    assert (refused.value.status, refused.value.reason) == (409, "purge_running")
    PurgeJob.objects.filter(pk=job.pk).update(claimed_until=timezone.now() - timedelta(seconds=1))
    retried = purges.retry(job.id)
    assert (retried.status, retried.attempts, retried.claimed_until, retried.claim_token) == (
        "pending",
        0,
        None,
        "",
    )


# --- beat's sweep ------------------------------------------------------------------------


def test_the_sweep_sends_due_jobs_whose_message_was_lost(
    tenant, platform_provider, platform_server, eager_celery, monkeypatch
):
    now = timezone.now()
    lost = _deleted(tenant, platform_provider, "lost")  # its message never reached a worker
    abandoned = _deleted(tenant, platform_provider, "abandoned")
    _as_a_dead_worker_left_it(abandoned, claimed_until=now - timedelta(seconds=1))
    later = _deleted(tenant, platform_provider, "later")
    PurgeJob.objects.filter(pk=later.pk).update(
        attempts=1, next_attempt_at=now + timedelta(seconds=60)
    )
    held = _deleted(tenant, platform_provider, "held")
    _as_a_dead_worker_left_it(held, claimed_until=now + timedelta(minutes=5))
    finished = _deleted(tenant, platform_provider, "finished")
    PurgeJob.objects.filter(pk=finished.pk).update(status="done", next_attempt_at=None)
    caught: list = []
    with monkeypatch.context() as patch:
        patch.setattr(
            purges, "schedule", lambda job_id, countdown=None, tries=None: caught.append(job_id)
        )
        assert send_due_purges() == 2
    assert sorted(caught) == sorted([lost.id, abandoned.id])
    # Sent for real (eagerly here): the two are purged, the others are left alone.
    assert send_due_purges.delay().get() == 2
    status = dict(PurgeJob.objects.values_list("namespace", "status"))
    assert status == {
        "lost": "done",
        "abandoned": "done",
        "later": "pending",
        "held": "pending",
        "finished": "done",
    }
    assert sorted(r["query"]["user_id"] for r in _purges(platform_server)) == [
        "abandoned",
        "lost",
    ]
    assert send_due_purges() == 0


def test_a_broker_down_when_the_delete_commits_leaves_the_job_to_the_sweep(
    tenant,
    platform_provider,
    platform_server,
    monkeypatch,
    caplog,
    sent,
    django_capture_on_commit_callbacks,
):
    """The delete is committed (its job in the outbox) whatever the broker says after."""
    from kombu.exceptions import OperationalError as BrokerError

    def refused(job_id, countdown=None, tries=None):
        raise BrokerError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    with (
        monkeypatch.context() as patch,
        django_capture_on_commit_callbacks(execute=True) as sent_on_commit,
    ):
        patch.setattr(purges, "schedule", refused)
        job = _deleted(tenant, platform_provider, "refused")  # the commit raised nothing
    assert len(sent_on_commit) == 1
    assert PurgeJob.objects.get(pk=job.pk).status == "pending"
    assert "the broker refused its message" in caplog.text
    assert send_due_purges() == 1 and [job_id for job_id, *_ in sent] == [job.id]


def test_beat_sends_the_sweep_every_minute():
    from memoryhub.celery import app

    sweeps = [e for e in settings.CELERY_BEAT_SCHEDULE.values() if e["task"] == SWEEP]
    assert [e["schedule"] for e in sweeps] == [60]
    assert app.conf.beat_schedule == settings.CELERY_BEAT_SCHEDULE
    assert app.tasks[SWEEP].name == send_due_purges.name == SWEEP
    assert app.tasks[purges.PURGE_TASK].name == purge_namespace.name


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_beat_and_a_worker_on_the_filesystem_broker_purge_a_job_whose_message_was_lost(
    tenant, oss_provider, oss_server, tmp_path, sent
):
    """make run's setting: beat beside a worker, on the embedded filesystem broker."""
    job = _deleted(tenant, oss_provider)
    assert sent  # the message on commit went nowhere: it is lost
    environ = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    common = {
        "MEMORYHUB_BROKER_DIR": str(tmp_path / "broker"),
        "MEMORYHUB_PURGE_SWEEP_SECONDS": "1",
        "MEMORYHUB_OUTBOUND_ALLOW_PRIVATE": "1",  # the fake mem0 server: loopback, HTTP
        "MEMORYHUB_OUTBOUND_ALLOW_HTTP": "1",
    }
    environ.update(
        MEMORYHUB_ENV="test",
        DJANGO_SETTINGS_MODULE="memoryhub.settings",
        DATABASE_URL=workers.tests_database_url(),
        **common,
    )
    beat = subprocess.Popen(  # noqa: S603 - our own interpreter and arguments
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "memoryhub",
            "beat",
            "--loglevel=WARNING",
            "--schedule",
            str(tmp_path / "celerybeat-schedule"),
        ],
        env=environ,
        cwd=settings.BASE_DIR,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        with workers.celery_worker(**common) as worker:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                job.refresh_from_db()
                if job.status != "pending":
                    break
                workers.assert_alive(worker)
                workers.assert_alive(beat)
                time.sleep(0.2)
    finally:
        beat.terminate()
        try:
            beat.wait(timeout=20)
        except subprocess.TimeoutExpired:
            beat.kill()
    assert job.status == "done", job.last_error
    assert oss_server.in_namespace(NS) == []


# --- no import cycle -------------------------------------------------------------------------


def test_the_services_never_import_the_tasks():
    services = Path(settings.BASE_DIR) / "records" / "services"
    for path in services.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            assert not any(n.startswith("records.tasks") for n in names), path
