"""A Celery worker killed in the middle of a purge (issue 19).

Real processes on the filesystem broker (``make run``'s): beat sweeping every second and
a worker whose call to mem0 hangs. The worker is killed with SIGKILL during the call;
another worker takes the job over once the killed one's claim runs out, and finishes it
exactly once: one try without an outcome (the killed one), one done, the records gone.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from django.conf import settings

from records.models import PurgeAttempt, PurgeJob
from records.services import purges
from support import workers
from support.fakes.mem0 import is_purge
from tests.records.test_purge_outbox import _deleted

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

FAST = {
    "MEMORYHUB_PURGE_SWEEP_SECONDS": "1",
    "MEMORYHUB_PURGE_LEASE_SECONDS": "3",
    "MEMORYHUB_OUTBOUND_ALLOW_PRIVATE": "1",  # the fake mem0 server: loopback, HTTP
    "MEMORYHUB_OUTBOUND_ALLOW_HTTP": "1",
}


def _beat(tmp_path, env: dict) -> subprocess.Popen:
    environ = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    environ.update(env, MEMORYHUB_ENV="test", DJANGO_SETTINGS_MODULE="memoryhub.settings",
                   DATABASE_URL=workers.tests_database_url())  # fmt: skip
    return subprocess.Popen(  # noqa: S603 - our own interpreter and arguments
        [sys.executable, "-m", "celery", "-A", "memoryhub", "beat", "--loglevel=WARNING",
         "--schedule", str(tmp_path / "celerybeat-schedule")],
        env=environ,
        cwd=settings.BASE_DIR,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip


def _calls(server) -> list[dict]:
    return [r for r in server.requests if is_purge(r["method"], r["path"])]


def _until(condition, seconds: float, *alive: subprocess.Popen) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        for process in alive:
            workers.assert_alive(process)
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def test_a_purge_whose_worker_is_killed_is_finished_by_another_exactly_once(
    tenant, oss_provider, oss_server, tmp_path, monkeypatch
):
    monkeypatch.setattr(purges, "schedule", lambda *args, **kwargs: None)  # beat sends it
    job = _deleted(tenant, oss_provider)
    env = {**FAST, "MEMORYHUB_BROKER_DIR": str(tmp_path / "broker")}
    oss_server.delay = 60  # the killed worker's call hangs
    beat = _beat(tmp_path, env)
    try:
        with workers.celery_worker(**env) as first:
            _until(lambda: _calls(oss_server), 30, first, beat)
            os.kill(first.pid, signal.SIGKILL)
            first.wait(timeout=10)
        oss_server.delay = 0
        with workers.celery_worker(**env) as second:
            job.refresh_from_db()
            assert job.status == "pending", "the killed try left the job to another"

            def finished() -> bool:
                job.refresh_from_db()
                return job.status != "pending"

            _until(finished, 60, second, beat)
    finally:
        workers.stop(beat)
    assert job.status == "done"
    outcomes = list(
        PurgeAttempt.objects.filter(job=job).order_by("id").values_list("error", flat=True)
    )
    assert len(outcomes) == 2 and outcomes[0] == purges.NO_OUTCOME, outcomes
    assert len(_calls(oss_server)) == 2, "one call from each worker, the first never answered"
    assert oss_server.in_namespace(job.namespace) == []
    assert PurgeJob.objects.filter(pk=job.pk, status="done").count() == 1
