"""File memories: files, their revisions, and what each conversation has seen of them."""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from memoryhub import ids
from memoryhub.models import PRINCIPAL_ID_MAX, Memory, Thread, Workspace


def new_revision_id() -> str:
    return ids.new_id("rev")


class File(models.Model):
    """One file of a file memory. ``version`` grows by one with every change.

    Deleting a file deletes its row, so a file created again at the same path has a new id
    and an old ETag (which names the id) cannot match it.
    """

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="files")
    path = models.CharField(max_length=1024)
    content = models.TextField(blank=True, default="")
    size = models.IntegerField(default=0)  # UTF-8 bytes of content
    version = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)
    # Who made the latest change.
    principal_id = models.CharField(max_length=PRINCIPAL_ID_MAX)
    run_id = models.CharField(max_length=48, null=True, blank=True)
    tool_call_id = models.CharField(max_length=200, null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["memory", "path"], name="file_path_unique")]

    def __str__(self) -> str:
        return f"{self.memory_id}:{self.path}"


class Revision(models.Model):
    """One change of one path: create, update, delete, rename or restore."""

    class Action(models.TextChoices):
        CREATE = "create"
        UPDATE = "update"
        DELETE = "delete"
        RENAME = "rename"
        RESTORE = "restore"

    # The internal id orders revisions: writers of one memory hold its row lock, so ids
    # grow in the order the changes commit.
    id = models.BigAutoField(primary_key=True)
    public_id = models.CharField(max_length=48, unique=True, default=new_revision_id)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="revisions")
    path = models.CharField(max_length=1024)
    action = models.CharField(max_length=8, choices=Action.choices)
    file_id = models.BigIntegerField(null=True, blank=True)
    version = models.PositiveIntegerField(null=True, blank=True)  # null once deleted
    content = models.TextField(null=True, blank=True)  # null for a delete
    size = models.IntegerField(default=0)
    # A rename's other side: the new path on the old path's revision and the reverse.
    other_path = models.CharField(max_length=1024, null=True, blank=True)
    principal_type = models.CharField(max_length=16)
    principal_id = models.CharField(max_length=PRINCIPAL_ID_MAX)
    run_id = models.CharField(max_length=48, null=True, blank=True)
    tool_call_id = models.CharField(max_length=200, null=True, blank=True)
    restored_from = models.CharField(max_length=48, null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [
            models.Index(fields=["memory", "path", "id"], name="revision_path_idx"),
            models.Index(fields=["memory", "id"], name="revision_memory_idx"),
        ]

    def __str__(self) -> str:
        return self.public_id


class Sighting(models.Model):
    """A conversation (thread) has had this memory's context: when, and when in full."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    thread = models.ForeignKey(Thread, on_delete=models.CASCADE, related_name="+")
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="+")
    full_at = models.DateTimeField(default=timezone.now)
    # The memory's version (guide, always_load) the conversation was last shown.
    memory_version = models.PositiveIntegerField(default=1)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["thread", "memory"], name="sighting_unique")]

    def __str__(self) -> str:
        return f"{self.thread_id}:{self.memory_id}"


class SeenFile(models.Model):
    """What a conversation knows of one file.

    ``known_version`` is the version it was last told about (an index line or a change
    notice), ``seen_version`` the version whose content it has (a view, the context block,
    or its own write). A write from the conversation is based on ``seen_version``.
    """

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    thread = models.ForeignKey(Thread, on_delete=models.CASCADE, related_name="+")
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="+")
    path = models.CharField(max_length=1024)
    file_id = models.BigIntegerField()
    known_version = models.PositiveIntegerField()
    seen_version = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["thread", "memory", "path"], name="seen_file_unique")
        ]

    def __str__(self) -> str:
        return f"{self.thread_id}:{self.memory_id}:{self.path}"
