"""The Celery app, end to end: a real worker process takes a task from a real broker."""

from __future__ import annotations

import subprocess
import time
import uuid

import pytest
from celery import Celery
from django.conf import settings

from memoryhub.models import TaskPing
from memoryhub.tasks import ping
from tests.workers import assert_alive, celery_worker

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def _wait_done(ping_id: str, worker: subprocess.Popen, seconds: float = 60) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if TaskPing.objects.filter(pk=ping_id, done_at__isnull=False).exists():
            return True
        assert_alive(worker)
        time.sleep(0.2)
    return False


def test_a_worker_runs_a_task_sent_through_redis():
    ping_id = uuid.uuid4().hex
    TaskPing.objects.create(pk=ping_id)
    with celery_worker(REDIS_URL=settings.CELERY_BROKER_URL) as worker:
        ping.delay(ping_id)
        assert _wait_done(ping_id, worker)


def test_a_worker_runs_a_task_sent_through_the_embedded_filesystem_broker(tmp_path):
    ping_id = uuid.uuid4().hex
    TaskPing.objects.create(pk=ping_id)
    (tmp_path / "queue").mkdir()
    sender = Celery(broker="filesystem://", set_as_current=False)
    sender.conf.broker_transport_options = {
        "data_folder_in": str(tmp_path / "queue"),
        "data_folder_out": str(tmp_path / "queue"),
        "control_folder": str(tmp_path / "control"),
    }
    sender.conf.task_serializer = "json"
    with celery_worker(MEMORYHUB_BROKER_DIR=str(tmp_path)) as worker:
        sender.send_task("memoryhub.ping", args=[ping_id])
        assert _wait_done(ping_id, worker)


def test_tasks_are_json_and_acknowledged_late():
    assert settings.CELERY_TASK_SERIALIZER == "json"
    assert settings.CELERY_ACCEPT_CONTENT == ["json"]
    assert settings.CELERY_TASK_ACKS_LATE is True
