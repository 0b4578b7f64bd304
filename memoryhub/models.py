"""The models every app shares. Every row belongs to exactly one workspace."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from memoryhub import ids


class Permission(models.TextChoices):
    READ = "read"
    RUN = "run"
    WRITE = "write"


PERMISSION_LEVELS: dict[str, int] = {Permission.READ: 1, Permission.RUN: 2, Permission.WRITE: 3}

# A record memory's namespace (mem0's user_id): 1 to this many characters.
MAX_NAMESPACE = 256
# "user:" and a Django username (at most 150 characters), the longest principal id.
PRINCIPAL_ID_MAX = 160


class Workspace(models.Model):
    id = models.CharField(primary_key=True, max_length=48, default=ids.new_workspace_id)
    name = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.name} ({self.id})"


class ApiKey(models.Model):
    """A workspace credential. The secret is shown once; only its hash is kept."""

    id = models.CharField(primary_key=True, max_length=48, default=ids.new_api_key_id)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=200, blank=True)
    permission = models.CharField(max_length=8, choices=Permission.choices)
    secret_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.id} ({self.permission})"


class Agent(models.Model):
    """An agent: owns one facts memory, a toolset setting and default memory mounts."""

    id = models.CharField(primary_key=True, max_length=48, default=ids.new_agent_id)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="agents")
    name = models.CharField(max_length=200)
    # {"enabled": bool, "disabled_tools": [tool keys]}
    toolset = models.JSONField(default=dict)
    # [{"name", "memory_id", "access", "recall"}]
    memory_mounts = models.JSONField(default=list)
    version = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [models.Index(fields=["workspace", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.name} ({self.id})"


class EndUser(models.Model):
    """A person an agent serves, known by the runtime's own id for them."""

    id = models.CharField(primary_key=True, max_length=48, default=ids.new_end_user_id)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="end_users")
    external_id = models.CharField(max_length=100)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["workspace", "external_id"], name="end_user_unique")
        ]

    def __str__(self) -> str:
        return self.external_id


class Thread(models.Model):
    """A conversation of one agent with one end user (or none)."""

    class Status(models.TextChoices):
        ACTIVE = "active"
        ARCHIVED = "archived"

    id = models.CharField(primary_key=True, max_length=48, default=ids.new_thread_id)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="threads")
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="threads")
    end_user = models.ForeignKey(
        EndUser, null=True, blank=True, on_delete=models.SET_NULL, related_name="threads"
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ACTIVE)
    forked_from = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="forks"
    )
    # Set when the thread's first run is accepted (agent default mounts join then).
    first_run_at = models.DateTimeField(null=True, blank=True)
    version = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [models.Index(fields=["workspace", "-created_at"])]

    def __str__(self) -> str:
        return self.id


class Run(models.Model):
    """One invocation of an agent on a thread."""

    class Status(models.TextChoices):
        RUNNING = "running"
        ENDED = "ended"

    id = models.CharField(primary_key=True, max_length=48, default=ids.new_run_id)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="runs")
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="runs")
    thread = models.ForeignKey(Thread, on_delete=models.CASCADE, related_name="runs")
    end_user = models.ForeignKey(
        EndUser, null=True, blank=True, on_delete=models.SET_NULL, related_name="runs"
    )
    parent_run = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="child_runs"
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.RUNNING)
    token_hash = models.CharField(max_length=64, unique=True)
    is_eval = models.BooleanField(default=False)
    # The root run of an eval tree: it and its child runs share one temporary facts memory.
    eval_root = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="eval_runs"
    )
    # Inline subagent runs get no memory context or tools.
    inline = models.BooleanField(default=False)
    history_compacted = models.BooleanField(default=False)
    input = models.JSONField(null=True, blank=True)
    # What the run received at acceptance: the exact memory context block (within
    # memory.context_bytes) and the tool definitions offered. Null when not kept: a run
    # accepted before they were recorded, or one whose person was erased.
    context = models.TextField(null=True, blank=True)
    tools_offered = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["workspace", "-created_at"])]

    def __str__(self) -> str:
        return self.id

    @property
    def is_running(self) -> bool:
        return self.status == self.Status.RUNNING


class ToolCall(models.Model):
    """One executed tool call of a run: the same call id never runs twice.

    Shared by every endpoint that runs a model's tool calls (facts, file and record tools),
    so one id is one call per run. The table keeps the name it had in the threads app.
    """

    class Status(models.TextChoices):
        STARTED = "started"
        DONE = "done"

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE)
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="tool_calls")
    call_id = models.CharField(max_length=200)
    name = models.CharField(max_length=100)
    arguments_digest = models.CharField(max_length=64)
    # The arguments as parsed, for staff to read (erasure deletes the person's calls).
    arguments = models.JSONField(null=True, blank=True)
    status = models.CharField(max_length=8, choices=Status.choices)
    # The tool message's text: it may quote the end user (erasure clears it).
    content = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "threads_toolcall"
        constraints = [
            models.UniqueConstraint(fields=["run", "call_id"], name="tool_call_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.run_id}:{self.call_id}"


class MemoryProvider(models.Model):
    """One account of a record-memory backend (mem0 Platform or a self-hosted mem0)."""

    class Type(models.TextChoices):
        MEM0_PLATFORM = "mem0_platform"
        MEM0_OSS = "mem0_oss"

    id = models.CharField(primary_key=True, max_length=48, default=ids.new_memory_provider_id)
    workspace = models.ForeignKey(
        Workspace, on_delete=models.CASCADE, related_name="memory_providers"
    )
    type = models.CharField(max_length=20, choices=Type.choices)
    name = models.CharField(max_length=200)
    config = models.JSONField(default=dict)
    credential_encrypted = models.TextField(blank=True, default="")
    enabled = models.BooleanField(default=True)
    version = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.name} ({self.id})"


class Memory(models.Model):
    """The catalog entry of a file memory or a record memory."""

    class Kind(models.TextChoices):
        FILE = "file"
        RECORD = "record"

    id = models.CharField(primary_key=True, max_length=48, default=ids.new_memory_id)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="memories")
    kind = models.CharField(max_length=8, choices=Kind.choices)
    type = models.CharField(max_length=20)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True, default="")
    labels = models.JSONField(default=list)
    guide = models.TextField(null=True, blank=True)
    always_load = models.JSONField(default=list)
    provider = models.ForeignKey(
        MemoryProvider, null=True, blank=True, on_delete=models.PROTECT, related_name="memories"
    )
    namespace = models.CharField(max_length=MAX_NAMESPACE, null=True, blank=True)
    # Byte accounting of a file memory, kept in the row so writers can lock and check it.
    content_bytes = models.BigIntegerField(default=0)
    history_bytes = models.BigIntegerField(default=0)
    file_count = models.IntegerField(default=0)
    version = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "memories"
        indexes = [models.Index(fields=["workspace", "-created_at"])]
        constraints = [
            models.UniqueConstraint(
                fields=["provider", "namespace"],
                condition=Q(namespace__isnull=False),
                name="memory_namespace_unique",
            )
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.id})"


class AuditEvent(models.Model):
    """Who did what to which object. Ids and paths only, never content."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="audit_events")
    principal_type = models.CharField(max_length=16)
    principal_id = models.CharField(max_length=PRINCIPAL_ID_MAX)
    action = models.CharField(max_length=64)
    object_type = models.CharField(max_length=32)
    object_id = models.CharField(max_length=1200)  # a memory id and a 1024-byte file path
    details = models.JSONField(default=dict, blank=True)
    request_id = models.CharField(max_length=64, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        indexes = [models.Index(fields=["workspace", "object_type", "object_id"])]

    def __str__(self) -> str:
        return f"{self.action} {self.object_type}:{self.object_id}"
