"""The Celery settings every task relies on.

Real workers taking real tasks are tested where the tasks live: a purge sent through Redis
(tests/records/test_purge_worker.py) and beat beside a worker on the embedded filesystem
broker (tests/records/test_purge_outbox.py).
"""

from __future__ import annotations

from django.conf import settings


def test_tasks_are_json_and_acknowledged_late():
    assert settings.CELERY_TASK_SERIALIZER == "json"
    assert settings.CELERY_ACCEPT_CONTENT == ["json"]
    assert settings.CELERY_TASK_ACKS_LATE is True
    assert settings.CELERY_TASK_REJECT_ON_WORKER_LOST is True
