"""The purge outbox: deleting a record memory leaves a job that empties its namespace."""

from __future__ import annotations

from django.db import models

from memoryhub import ids
from memoryhub.models import MAX_NAMESPACE, MemoryProvider, Workspace


def new_purge_id() -> str:
    return ids.new_id("purge")


class PurgeJob(models.Model):
    """Written in the transaction that deletes a record memory; a Celery task works it off."""

    class Status(models.TextChoices):
        PENDING = "pending"
        DONE = "done"
        FAILED = "failed"
        # Not tried: a live memory on the same backend uses the namespace (see last_error).
        SKIPPED = "skipped"

    id = models.CharField(primary_key=True, max_length=48, default=new_purge_id)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    provider = models.ForeignKey(
        MemoryProvider, on_delete=models.CASCADE, related_name="purge_jobs"
    )
    namespace = models.CharField(max_length=MAX_NAMESPACE)
    # The deleted memory, by id and name only: its row is gone.
    memory_id = models.CharField(max_length=48)
    memory_name = models.CharField(max_length=200, blank=True, default="")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True, default="")
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    # The claim of the try under way (see records.services.purges): a worker that claims
    # the job sets both; writing the try's outcome clears them. A claim whose lease has
    # run out belongs to a worker that stopped, and another worker may take the job over.
    claimed_until = models.DateTimeField(null=True, blank=True)
    claim_token = models.CharField(max_length=32, blank=True, default="")
    finished_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [
            models.Index(fields=["provider", "namespace", "status"]),
            models.Index(fields=["status", "next_attempt_at"]),
        ]

    def __str__(self) -> str:
        return f"purge {self.namespace} ({self.status})"


class PurgeAttempt(models.Model):
    """One try of a purge job and its error, for staff to see."""

    job = models.ForeignKey(PurgeJob, on_delete=models.CASCADE, related_name="attempt_log")
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    number = models.PositiveIntegerField()
    ok = models.BooleanField(default=False)
    error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["job", "number"]

    def __str__(self) -> str:
        return f"{self.job_id} #{self.number} ({'ok' if self.ok else 'failed'})"


class ProviderOutage(models.Model):
    """A memory provider whose last call failed (no answer, a timeout, a 5xx...). A call it
    answers deletes the row; ``/healthz`` reports the rows whose failure is recent."""

    provider = models.OneToOneField(
        MemoryProvider, primary_key=True, on_delete=models.CASCADE, related_name="+"
    )
    dependency = models.CharField(max_length=40)  # memory:{type}, as a 503 names it
    reason = models.TextField(blank=True, default="")
    since = models.DateTimeField()
    last_failed_at = models.DateTimeField(db_index=True)

    def __str__(self) -> str:
        return f"{self.provider_id} failing since {self.since:%Y-%m-%d %H:%M:%S}"
