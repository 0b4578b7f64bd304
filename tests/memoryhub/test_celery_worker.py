"""The Celery app, end to end: a real worker process takes a task from a real broker."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid

import pytest
from celery import Celery
from django.conf import settings
from django.db import connection

from memoryhub.models import TaskPing
from memoryhub.tasks import ping

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def _worker(env: dict) -> subprocess.Popen:
    db = connection.settings_dict
    test_url = (
        f"postgres://{db['USER']}@{db['HOST'].replace('/', '%2F') or '127.0.0.1'}"
        f":{db['PORT'] or 5432}/{db['NAME']}"
    )
    environ = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    environ.update(
        MEMORYHUB_ENV="test",
        DJANGO_SETTINGS_MODULE="memoryhub.settings",
        DATABASE_URL=test_url,
        **env,
    )
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "memoryhub",
            "worker",
            "--pool=solo",
            "--loglevel=WARNING",
            "--without-heartbeat",
            "--without-mingle",
            "--without-gossip",
            "-n",
            f"test-{uuid.uuid4().hex[:8]}@%h",
        ],
        env=environ,
        cwd=settings.BASE_DIR,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _wait_done(ping_id: str, worker: subprocess.Popen, seconds: float = 60) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if TaskPing.objects.filter(pk=ping_id, done_at__isnull=False).exists():
            return True
        assert worker.poll() is None, worker.stderr.read().decode()[-2000:]
        time.sleep(0.2)
    return False


def _stop(worker: subprocess.Popen) -> None:
    worker.terminate()
    try:
        worker.wait(timeout=20)
    except subprocess.TimeoutExpired:
        worker.kill()


def test_a_worker_runs_a_task_sent_through_redis():
    ping_id = uuid.uuid4().hex
    TaskPing.objects.create(pk=ping_id)
    worker = _worker({"REDIS_URL": settings.CELERY_BROKER_URL})
    try:
        ping.delay(ping_id)
        assert _wait_done(ping_id, worker)
    finally:
        _stop(worker)


def test_a_worker_runs_a_task_sent_through_the_embedded_filesystem_broker(tmp_path):
    ping_id = uuid.uuid4().hex
    TaskPing.objects.create(pk=ping_id)
    (tmp_path / "queue").mkdir()
    worker = _worker({"MEMORYHUB_BROKER_DIR": str(tmp_path)})
    sender = Celery(broker="filesystem://", set_as_current=False)
    sender.conf.broker_transport_options = {
        "data_folder_in": str(tmp_path / "queue"),
        "data_folder_out": str(tmp_path / "queue"),
    }
    sender.conf.task_serializer = "json"
    try:
        sender.send_task("memoryhub.ping", args=[ping_id])
        assert _wait_done(ping_id, worker)
    finally:
        _stop(worker)


def test_tasks_are_json_and_acknowledged_late():
    assert settings.CELERY_TASK_SERIALIZER == "json"
    assert settings.CELERY_ACCEPT_CONTENT == ["json"]
    assert settings.CELERY_TASK_ACKS_LATE is True
