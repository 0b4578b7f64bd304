"""Memory mounts of threads and the mounts frozen for each run.

``ToolCall`` (a run's executed tool calls) lives in ``memoryhub.models`` now, since the facts
tools record their calls too; it is re-exported here for old imports.
"""

from __future__ import annotations

from django.db import models

from memoryhub.models import Memory, Run, Thread, ToolCall, Workspace

__all__ = ["Access", "RunMount", "ThreadMount", "ToolCall"]


class Access(models.TextChoices):
    READ = "read"
    WRITE = "write"


class ThreadMount(models.Model):
    """A memory mounted on a thread under a name. Deleting the memory removes the mount."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE)
    thread = models.ForeignKey(Thread, on_delete=models.CASCADE, related_name="mounts")
    name = models.CharField(max_length=63)
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="thread_mounts")
    access = models.CharField(max_length=5, choices=Access.choices, default=Access.READ)
    recall = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["thread", "name"], name="thread_mount_name_unique"),
            models.UniqueConstraint(fields=["thread", "memory"], name="thread_mount_memory_unique"),
        ]
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"{self.thread_id}:{self.name}"


class RunMount(models.Model):
    """A thread's mount as it was when the run was accepted.

    The memory is kept by id, not by foreign key: a run that still holds a deleted memory
    must learn that it was deleted (``memory_deleted``), not lose the mount.
    """

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE)
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="mounts")
    name = models.CharField(max_length=63)
    memory_id = models.CharField(max_length=48)
    kind = models.CharField(max_length=8)
    access = models.CharField(max_length=5, choices=Access.choices)
    recall = models.BooleanField(default=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "name"], name="run_mount_name_unique"),
        ]
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.run_id}:{self.name}"
