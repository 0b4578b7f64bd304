"""The kernel's Celery tasks."""

from celery import shared_task
from django.utils import timezone

from memoryhub.models import TaskPing


@shared_task(name="memoryhub.ping")
def ping(ping_id: str) -> None:
    """Marks a TaskPing done: proves that a worker takes tasks from the broker."""
    TaskPing.objects.filter(pk=ping_id).update(done_at=timezone.now())
