"""Celery tasks of record memories. Tasks take ids; the rules live in the services.

Tasks import the services; the services never import this module (they send tasks by
name), so there is no import cycle.
"""

from memoryhub.celery import app
from records.services import purges


# Bound to the project's app, not ``shared_task``: it must reach the project's broker even
# when another Celery app has become the current one in this process.
@app.task(name=purges.PURGE_TASK, acks_late=True)
def purge_namespace(job_id: str, tries: int | None = None) -> str | None:
    """One try to purge a deleted memory's namespace; schedules the next try on failure.

    ``tries`` is the job's tries when this message was sent (see :func:`purges.schedule`).
    """
    outcome = purges.attempt(job_id, tries)
    if outcome.retry_in is not None:
        purges.schedule(job_id, countdown=outcome.retry_in, tries=outcome.tries)
    return outcome.status


@app.task(name="records.send_due_purges", acks_late=True)
def send_due_purges() -> int:
    """Beat's sweep: a try for every pending purge that is due and that no worker holds.

    Catches messages that were lost (a broker restart, a crash between commit and send, a
    worker killed mid-try): no purge stays pending forever. Extra messages are harmless, as
    a try first claims its job.
    """
    due = purges.due()
    for job_id in due:
        purges.schedule(job_id)
    return len(due)
