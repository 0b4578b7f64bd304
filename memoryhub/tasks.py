"""The kernel's Celery tasks."""

from django.utils import timezone

from memoryhub.celery import app
from memoryhub.models import TaskPing


# Bound to the project's app (not @shared_task), so a task is never sent through another
# Celery app that happens to be current.
@app.task(name="memoryhub.ping")
def ping(ping_id: str) -> None:
    """Marks a TaskPing done: proves that a worker takes tasks from the broker."""
    TaskPing.objects.filter(pk=ping_id).update(done_at=timezone.now())
