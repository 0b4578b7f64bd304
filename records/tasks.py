"""Celery tasks of record memories. Tasks take ids; the rules live in the services."""

from memoryhub.celery import app
from records.services import purges


# Bound to the project's app, not ``shared_task``: it must reach the project's broker even
# when another Celery app has become the current one in this process.
@app.task(name="records.purge_namespace", acks_late=True)
def purge_namespace(job_id: str) -> str | None:
    """One try to purge a deleted memory's namespace; schedules the next try on failure."""
    outcome = purges.attempt(job_id)
    if outcome.retry_in is not None:
        purges.schedule(job_id, countdown=outcome.retry_in)
    return outcome.status
