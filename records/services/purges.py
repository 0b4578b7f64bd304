"""Purging a deleted record memory's namespace: the outbox row and each try to work it off.

Deleting a record memory writes a :class:`PurgeJob` in the same transaction; after commit a
Celery task tries :func:`attempt`. A failed try is recorded and tried again later with
backoff, at most ``outbox.defaults.max_attempts`` times; then the job stops as ``failed``
and the records stay in the backend. ``manage.py purges --retry ID`` starts it over.

A purge never deletes a namespace that a live memory on the same backend uses, in any
workspace (see :mod:`records.services.namespaces`): such a job stops at once as
``skipped``, with the reason on the job and its try, since trying again cannot help.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from memoryhub import audit
from memoryhub.conf import setting
from memoryhub.errors import ApiError
from memoryhub.models import Memory
from memoryhub.principals import Principal
from records.models import PurgeAttempt, PurgeJob
from records.services import namespaces
from records.services.providers import backend_of

logger = logging.getLogger(__name__)

BACKOFF_BASE_SECONDS = 30
BACKOFF_MAX_SECONDS = 3600
IN_USE = (
    "skipped: a live memory on this backend uses this namespace again;"
    " the purge would delete its records"
)


@dataclass
class Outcome:
    status: str | None  # the job's status after this try; None when there was nothing to do
    retry_in: int | None = None  # seconds until the next try, when one is due


def backoff(attempts: int) -> int:
    """Seconds to wait after the ``attempts``-th failed try: 30 s, 60 s, 120 s ... 1 h."""
    return min(BACKOFF_BASE_SECONDS * 2 ** max(attempts - 1, 0), BACKOFF_MAX_SECONDS)


def schedule(job_id: str, countdown: int | None = None) -> None:
    from records.tasks import purge_namespace  # tasks import this module

    purge_namespace.apply_async((job_id,), countdown=countdown)


def enqueue_purge(principal: Principal, memory: Memory) -> PurgeJob:
    """Inside the transaction that deletes ``memory``: the outbox row, and the task on commit."""
    job = PurgeJob.objects.create(
        workspace_id=memory.workspace_id,
        provider_id=memory.provider_id,
        namespace=memory.namespace,
        memory_id=memory.id,
        memory_name=memory.name,
        next_attempt_at=timezone.now(),
    )
    audit.record(principal, "record_memory.purge", "purge", job.id, memory=memory.id)
    transaction.on_commit(lambda: schedule(job.id))
    return job


def _try(job: PurgeJob) -> str:
    """One purge call; the error text, or "" when it worked."""
    try:
        backend = backend_of(job.provider)
        try:
            backend.delete_namespace(job.namespace)
        finally:
            backend.close()
    except ApiError as error:
        return f"{error.reason or error.code}: {error.message}"
    except Exception as exc:  # noqa: BLE001 - any failure is recorded on the job, not lost
        logger.exception("purge %s failed unexpectedly", job.id)
        return f"internal: {type(exc).__name__}"
    return ""


def attempt(job_id: str) -> Outcome:
    """One try of a pending job. Holds the job's row lock so that two workers never race."""
    with transaction.atomic():
        job = (
            PurgeJob.objects.select_for_update(skip_locked=True)
            .select_related("provider")
            .filter(pk=job_id, status=PurgeJob.Status.PENDING)
            .first()
        )
        if job is None:
            return Outcome(None)
        job.attempts += 1
        # Held through the purge call: no adoption of the namespace on this backend can
        # slip in between the check and the deletion.
        key = namespaces.key_of(job.provider)
        namespaces.lock(key, job.namespace)
        skipped = namespaces.in_use(key, [job.namespace])
        error = IN_USE if skipped else _try(job)
        PurgeAttempt.objects.create(
            job=job, workspace_id=job.workspace_id, number=job.attempts, ok=not error, error=error
        )
        now = timezone.now()
        retry_in = None
        job.last_error = error
        if skipped:
            job.status, job.finished_at, job.next_attempt_at = PurgeJob.Status.SKIPPED, now, None
            logger.warning("purge %s skipped: a live memory uses %s", job.id, job.namespace)
        elif not error:
            job.status, job.finished_at, job.next_attempt_at = PurgeJob.Status.DONE, now, None
        elif job.attempts >= setting("outbox.defaults.max_attempts"):
            job.status, job.finished_at, job.next_attempt_at = PurgeJob.Status.FAILED, now, None
            logger.warning("purge %s stopped after %s tries: %s", job.id, job.attempts, error)
        else:
            retry_in = backoff(job.attempts)
            job.next_attempt_at = now + timedelta(seconds=retry_in)
        job.save()
    return Outcome(job.status, retry_in)


def retry(job_id: str) -> PurgeJob:
    """Starts a pending, failed or skipped job over with a full set of tries (operators'
    command), unless a live memory on the job's backend uses the namespace."""
    with transaction.atomic():
        job = PurgeJob.objects.select_for_update().filter(pk=job_id).first()
        if job is None:
            raise ApiError(404, "purge job not found")
        if job.status == PurgeJob.Status.DONE:
            raise ApiError(409, "the purge is done already", reason="purge_done")
        key = namespaces.key_of(job.provider)
        namespaces.lock(key, job.namespace)
        if namespaces.in_use(key, [job.namespace]):
            raise ApiError(
                409, "a memory on this backend uses this namespace", reason="namespace_in_use"
            )
        job.status, job.attempts, job.finished_at = PurgeJob.Status.PENDING, 0, None
        job.next_attempt_at = timezone.now()
        job.save()
        transaction.on_commit(lambda: schedule(job.id))
    return job
