"""The Celery app. Tasks live beside their app (``<app>/tasks.py``) and take ids.

Periodic tasks are in ``CELERY_BEAT_SCHEDULE`` (settings), sent by ``celery -A memoryhub
beat``.
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")

app = Celery("memoryhub")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
