"""Purging a deleted record memory's namespace: the outbox row and each try to work it off.

Deleting a record memory writes a :class:`PurgeJob` in the same transaction; after commit a
message asks a worker for :func:`attempt`, and the beat task ``records.send_due_purges``
sends one again for every job whose try is due and unclaimed, so a lost message only
delays a purge. A failed try is recorded and tried again later with backoff, at most
``outbox.defaults.max_attempts`` times; then the job stops as ``failed`` and the records
stay in the backend. ``manage.py purges --retry ID`` starts it over.

A try claims the job with one conditional UPDATE (a lease in ``claimed_until`` and a token
of its own), calls mem0 outside any transaction, and then writes the outcome in a short
transaction, only while the job still carries its token. So no row lock is held across
the HTTP call, two workers never try one job at once, and a worker that dies mid-try
leaves a claim that runs out: the next message takes the job over.

A purge never deletes a namespace that a live memory on the same backend uses, in any
workspace (see :mod:`records.services.namespaces`): such a job stops at once as
``skipped``, with the reason on the job and its try, since trying again cannot help.

This module never imports ``records.tasks``: it sends the task by name (:func:`schedule`).
"""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import DateTimeField, ExpressionWrapper, Q
from django.db.models.functions import Now
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerError

from memoryhub import audit
from memoryhub.celery import app
from memoryhub.conf import setting
from memoryhub.errors import ApiError
from memoryhub.models import Memory
from memoryhub.principals import Principal
from memoryhub.reasons import Reason
from records.models import PurgeAttempt, PurgeJob
from records.services import health, namespaces
from records.services.providers import backend_of

logger = logging.getLogger(__name__)

PURGE_TASK = "records.purge_namespace"
BACKOFF_BASE_SECONDS = 30
BACKOFF_MAX_SECONDS = 3600
# How many due jobs one run of the beat task sends at most (the rest on its next run).
DUE_BATCH = 500
IN_USE = (
    "skipped: a live memory on this backend uses this namespace again;"
    " the purge would delete its records"
)
# A try's attempt row until its outcome is written: what stays when its worker stopped.
NO_OUTCOME = "no outcome recorded: the try is under way, or its worker stopped during it"
LAST_TRY_LOST = (
    "stopped: no try is left under outbox.defaults.max_attempts (the last one recorded no"
    " outcome: its worker stopped during it); the records may remain"
)


@dataclass
class Outcome:
    status: str | None  # the job's status after this try; None when there was nothing to do
    retry_in: int | None = None  # seconds until the next try, when one is due
    tries: int | None = None  # the job's tries so far: the next try's message names them


@dataclass
class Claim:
    """A try that holds the job: only its token lets it write the outcome."""

    job: PurgeJob  # with its provider, as the namespace check saw it
    token: str
    number: int  # this try's number (the job's attempts, this one included)
    attempt_id: int  # its PurgeAttempt row


def backoff(attempts: int) -> int:
    """Seconds to wait after the ``attempts``-th failed try: 30 s, 60 s, 120 s ... 1 h."""
    factor: int = 2 ** max(attempts - 1, 0)  # a whole number: the exponent is not negative
    return min(BACKOFF_BASE_SECONDS * factor, BACKOFF_MAX_SECONDS)


def schedule(job_id: str, countdown: int | None = None, tries: int | None = None) -> None:
    """Sends a try of the job to the workers, naming the task (tasks import this module).

    ``tries``: the job's tries when the message is sent. Such a message may start the next
    try even a little before ``next_attempt_at`` (its countdown did the waiting); a message
    without it (the beat task's, an old one) tries only a due job.
    """
    args = [job_id] if tries is None else [job_id, tries]
    app.tasks[PURGE_TASK].apply_async(args, countdown=countdown)  # registered by records.apps


def send_after_commit(job_id: str) -> None:
    """The first try's message, once the job is committed. A broker that does not take it
    fails nothing: the job is in the outbox, and beat's sweep sends it when it is due."""
    try:
        schedule(job_id, tries=0)
    except BrokerError as exc:
        logger.warning("purge %s: the broker refused its message (%s); the sweep sends it",
                       job_id, type(exc).__name__)  # fmt: skip


def enqueue_purge(principal: Principal, memory: Memory) -> PurgeJob:
    """Inside the transaction that deletes ``memory``: the outbox row, and the task on commit."""
    # Only a memory with a provider and a namespace has records to purge (kind.on_delete).
    assert memory.provider_id is not None and memory.namespace is not None
    job = PurgeJob.objects.create(
        workspace_id=memory.workspace_id,
        provider_id=memory.provider_id,
        namespace=memory.namespace,
        memory_id=memory.id,
        memory_name=memory.name,
        next_attempt_at=timezone.now(),
    )
    audit.record(principal, "record_memory.purge", "purge", job.id, memory=memory.id)
    transaction.on_commit(lambda: send_after_commit(job.id))
    return job


def due(limit: int = DUE_BATCH) -> list[str]:
    """Pending jobs whose next try is due and that no live claim holds, oldest first."""
    now = Now()
    return list(
        PurgeJob.objects.filter(status=PurgeJob.Status.PENDING)
        .filter(Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lte=now))
        .filter(Q(claimed_until__isnull=True) | Q(claimed_until__lt=now))
        .order_by("next_attempt_at", "id")
        .values_list("pk", flat=True)[:limit]
    )


# One statement decides which worker tries the job: it must be pending, its last claim gone
# or run out, and its try due (or this message the one its last try sent for the next).
_CLAIM = """
UPDATE {table}
   SET attempts = attempts + 1,
       claimed_until = statement_timestamp() + %(lease)s * interval '1 second',
       claim_token = %(token)s,
       updated_at = statement_timestamp()
 WHERE id = %(id)s
   AND status = %(pending)s
   AND (claimed_until IS NULL OR claimed_until < statement_timestamp())
   AND (next_attempt_at IS NULL OR next_attempt_at <= statement_timestamp()
        OR attempts = %(tries)s)
RETURNING attempts
"""


def claim(job_id: str, tries: int | None = None) -> Claim | Outcome:
    """Claims the job and checks its namespace, in one short transaction.

    Answers the claim, or the outcome when there is no call to make: nothing to do (not
    pending, not due, or another worker holds it), or the job ended here (skipped).
    """
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(
                _CLAIM.format(table=PurgeJob._meta.db_table),
                {
                    "lease": settings.PURGE_LEASE_SECONDS,
                    "token": (token := secrets.token_hex(16)),
                    "id": job_id,
                    "pending": PurgeJob.Status.PENDING,
                    "tries": tries,
                },
            )
            row = cursor.fetchone()
        if row is None:
            return Outcome(None)
        number = row[0]
        job = PurgeJob.objects.select_related("provider").get(pk=job_id)
        if number > setting("outbox.defaults.max_attempts"):
            # The last allowed try lost its worker (or the limit was lowered since): stop,
            # so that a purge that kills its worker cannot be tried forever.
            PurgeJob.objects.filter(pk=job_id).update(
                status=PurgeJob.Status.FAILED,
                attempts=number - 1,
                last_error=LAST_TRY_LOST,
                finished_at=Now(),
                next_attempt_at=None,
                claimed_until=None,
                claim_token="",
                updated_at=Now(),
            )
            logger.warning("purge %s stopped: its last try was interrupted", job_id)
            return Outcome(PurgeJob.Status.FAILED, tries=number - 1)
        # The namespace check, just before the call and in this short transaction only.
        # Adopting a namespace (records.kind.prepare_create) and moving a provider
        # onto this backend (providers._refuse_move) take the same advisory lock and then
        # refuse while a pending purge of the namespace is on the backend
        # (namespaces.refuse_taken). This job has been pending since the transaction that
        # deleted the memory wrote it under that lock (kind.on_delete), and stays pending
        # until finish() writes the outcome, after the call. So when no live memory uses
        # the namespace now, none can start to before the deletion is done, and no lock
        # need be held across the call. The call goes to the provider read here. (This
        # needs the job's provider to stay on this backend while the job is pending:
        # moving it to another base_url would take the job off this backend's list.)
        key = namespaces.key_of(job.provider)
        namespaces.lock(key, job.namespace)
        skipped = namespaces.in_use(key, [job.namespace])
        attempt = PurgeAttempt.objects.create(
            job=job,
            workspace_id=job.workspace_id,
            number=number,
            ok=False,
            error=IN_USE if skipped else NO_OUTCOME,
        )
        claimed = Claim(job, token, number, attempt.pk)
        if skipped:
            logger.warning("purge %s skipped: a live memory uses %s", job_id, job.namespace)
            return finish(claimed, IN_USE, skipped=True)
    return claimed


def _try(job: PurgeJob) -> str:
    """One purge call; the error text, or "" when it worked."""
    try:
        backend = backend_of(job.provider)
        try:
            backend.delete_namespace(job.namespace)
        finally:
            backend.close()
    except ApiError as error:
        health.note(job.provider, error)
        return f"{error.reason or error.code}: {error.message}"
    except Exception as exc:  # noqa: BLE001 - any failure is recorded on the job, not lost
        logger.exception("purge %s failed unexpectedly", job.id)
        return f"internal: {type(exc).__name__}"
    health.note(job.provider, None)
    return ""


def finish(claimed: Claim, error: str, *, skipped: bool = False) -> Outcome:
    """Writes a try's outcome, in a short transaction, if the job still carries its claim.

    A try whose claim ran out and was taken over (or started over) changes nothing on the
    job; its own attempt row still says what it saw.
    """
    retry_in = None
    if skipped:
        status = PurgeJob.Status.SKIPPED
    elif not error:
        status = PurgeJob.Status.DONE
    elif claimed.number >= setting("outbox.defaults.max_attempts"):
        status = PurgeJob.Status.FAILED
    else:
        status, retry_in = PurgeJob.Status.PENDING, backoff(claimed.number)
    changes: dict = {
        "status": status,
        "last_error": error,
        "claimed_until": None,
        "claim_token": "",
        "updated_at": Now(),
    }
    if retry_in is None:
        changes.update(finished_at=Now(), next_attempt_at=None)
    else:
        changes["next_attempt_at"] = ExpressionWrapper(
            Now() + timedelta(seconds=retry_in), output_field=DateTimeField()
        )
    with transaction.atomic():
        held = (
            PurgeJob.objects.filter(
                pk=claimed.job.pk, claim_token=claimed.token, status=PurgeJob.Status.PENDING
            ).update(**changes)
            == 1
        )
        PurgeAttempt.objects.filter(pk=claimed.attempt_id).update(ok=not error, error=error)
    if not held:
        logger.warning(
            "purge %s: try %s lost its claim; its outcome is not applied",
            claimed.job.pk,
            claimed.number,
        )
        return Outcome(None)
    if status == PurgeJob.Status.FAILED:
        logger.warning("purge %s stopped after %s tries: %s", claimed.job.pk, claimed.number, error)
    return Outcome(status, retry_in, claimed.number)


def attempt(job_id: str, tries: int | None = None) -> Outcome:
    """One try of a pending job, unless it is not due or another worker holds it.

    Call it outside any transaction: the mem0 call runs between the claim's transaction
    and the outcome's, holding no lock.
    """
    claimed = claim(job_id, tries)
    if isinstance(claimed, Outcome):
        return claimed
    return finish(claimed, _try(claimed.job))


def retry(job_id: str, *, workspace_id: str | None = None) -> PurgeJob:
    """Starts a pending, failed or skipped job over with a full set of tries, unless a live
    memory on the job's backend uses the namespace or a try of it is under way.

    ``workspace_id`` confines it to one workspace's jobs (the panel; 404 for another's);
    operators' command and the admin reach every job."""
    with transaction.atomic():
        jobs = PurgeJob.objects.select_for_update().filter(pk=job_id)
        if workspace_id is not None:
            jobs = jobs.filter(workspace_id=workspace_id)
        job = jobs.first()
        if job is None:
            raise ApiError(404, "purge job not found")
        if job.status == PurgeJob.Status.DONE:
            raise ApiError(409, "the purge is done already", reason=Reason.PURGE_DONE)
        if (
            job.status == PurgeJob.Status.PENDING
            and PurgeJob.objects.filter(pk=job.pk, claimed_until__gt=Now()).exists()
        ):
            raise ApiError(
                409,
                "a try of this purge is under way; try again later",
                reason=Reason.PURGE_RUNNING,
            )
        key = namespaces.key_of(job.provider)
        namespaces.lock(key, job.namespace)
        if namespaces.in_use(key, [job.namespace]):
            raise ApiError(
                409, "a memory on this backend uses this namespace", reason=Reason.NAMESPACE_IN_USE
            )
        job.status, job.attempts, job.finished_at = PurgeJob.Status.PENDING, 0, None
        job.claimed_until, job.claim_token = None, ""  # a claim that ran out: its worker died
        job.next_attempt_at = timezone.now()
        job.save()
        transaction.on_commit(lambda: send_after_commit(job.id))
    return job
