"""OpenAPI shapes of /api/v1 threads, their memory mounts, runs and tool calls.

Documentation only: the views parse and the services validate; these serializers never run.
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema_field
from rest_framework import serializers

from memoryhub import models
from memoryhub.api.openapi import MemoryKind, MemoryMount, MountAccess, NewMemoryMount
from memoryhub.schema import FunctionToolType, named_enum
from memoryhub.services.end_users import EXTERNAL_ID_RE
from memoryhub.tools import MAX_TOOL_CALL_ID

ThreadStatus = named_enum("ThreadStatus", models.Thread.Status.values)
RunStatus = named_enum("RunStatus", models.Run.Status.values)

# --- threads ---------------------------------------------------------------------------------


class ThreadCreate(serializers.Serializer):
    agent_id = serializers.CharField(help_text="An agent of the workspace.")
    end_user = serializers.RegexField(
        f"^{EXTERNAL_ID_RE.pattern}$",
        max_length=100,
        required=False,
        allow_null=True,
        help_text="The runtime's own id for the person (1-100 letters, digits and . _ : @ -;"
        " not . or .., no invisible characters).",
    )
    memories = NewMemoryMount(
        many=True, required=False, allow_null=True, help_text="Initial memory mounts."
    )


class ThreadFork(serializers.Serializer):
    memories = NewMemoryMount(
        many=True,
        required=False,
        allow_null=True,
        help_text="Mounts added to the ones copied from the origin thread.",
    )


class Thread(serializers.Serializer):
    id = serializers.CharField()
    agent_id = serializers.CharField()
    end_user = serializers.CharField(allow_null=True)
    status = ThreadStatus()
    forked_from = serializers.CharField(allow_null=True, help_text="The origin of a fork.")
    etag = serializers.CharField(help_text="The If-Match value for mount changes.")
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


THREAD_FILTERS = [
    OpenApiParameter("agent_id", str, description="Only this agent's threads."),
    OpenApiParameter("end_user", str, description="Only this end user's threads."),
    OpenApiParameter("status", str, enum=models.Thread.Status.values),
]

# Archiving checks If-Match only when one is given (and the thread is not archived yet).
ARCHIVE_IF_MATCH = OpenApiParameter(
    "If-Match",
    str,
    OpenApiParameter.HEADER,
    description="Optional: the thread's current ETag; 412 when stale.",
)

# --- memory mounts ---------------------------------------------------------------------------


class ThreadMount(MemoryMount):
    kind = MemoryKind(help_text="The mounted memory's kind.")


class ThreadMounts(serializers.Serializer):
    memories = ThreadMount(many=True)
    etag = serializers.CharField(help_text="The thread's ETag, for the next mount change.")


class MountChange(serializers.Serializer):
    access = MountAccess(required=False, allow_null=True, help_text="null or absent: unchanged.")
    recall = serializers.BooleanField(
        required=False, allow_null=True, help_text="null or absent: unchanged."
    )


# --- runs ------------------------------------------------------------------------------------


class RunAccept(serializers.Serializer):
    input = serializers.JSONField(
        required=False, allow_null=True, help_text="The run's input; recall searches with it."
    )
    parent_run_id = serializers.CharField(
        required=False, allow_null=True, help_text="The parent run (subagents, eval items)."
    )
    eval = serializers.BooleanField(
        default=False, help_text="An eval run (a child of an eval run is one too)."
    )
    history_compacted = serializers.BooleanField(
        default=False, help_text="The history was compacted: send the full memory context."
    )
    inline = serializers.BooleanField(
        default=False,
        help_text="An inline subagent run (needs parent_run_id): no memory tools or context.",
    )


class Run(serializers.Serializer):
    id = serializers.CharField()
    thread_id = serializers.CharField()
    agent_id = serializers.CharField()
    status = RunStatus()
    end_user = serializers.CharField(allow_null=True)
    parent_run_id = serializers.CharField(allow_null=True)
    eval = serializers.BooleanField()
    inline = serializers.BooleanField()
    created_at = serializers.DateTimeField()
    ended_at = serializers.DateTimeField(allow_null=True)


class RunToolFunction(serializers.Serializer):
    name = serializers.CharField(help_text="memory_file_* or memory_record_*.")
    description = serializers.CharField()
    parameters = serializers.DictField(help_text="The JSON Schema of the arguments.")


class RunToolDefinition(serializers.Serializer):
    """An OpenAI function tool definition."""

    type = FunctionToolType()
    function = RunToolFunction()


class AcceptedRun(Run):
    token = serializers.CharField(
        help_text="The run token for x-agentos-run-token; shown only here."
    )
    mounts = ThreadMount(many=True, help_text="The thread's mounts, frozen for this run.")
    context = serializers.CharField(help_text="Memory context the model sees before the input.")
    tools = RunToolDefinition(many=True, help_text="The memory tools offered to this run.")


# --- tool calls ------------------------------------------------------------------------------


@extend_schema_field(
    {
        "oneOf": [{"type": "object", "additionalProperties": {}}, {"type": "string"}],
        "description": "A JSON object, or a string of one (as OpenAI sends). Default {}.",
    }
)
class ToolArguments(serializers.JSONField):
    pass


class RunToolCallFunction(serializers.Serializer):
    accepts_unknown_fields = True  # an OpenAI tool call's other keys are left alone

    name = serializers.CharField()
    arguments = ToolArguments(required=False)


class RunToolCall(serializers.Serializer):
    """``{id, name, arguments}``, or an OpenAI tool call ``{id, type, function}``."""

    id = serializers.CharField(
        max_length=MAX_TOOL_CALL_ID,
        help_text=f"The tool call's id, 1-{MAX_TOOL_CALL_ID} characters.",
    )
    name = serializers.CharField(required=False, help_text="The tool name (flat form).")
    arguments = ToolArguments(required=False)
    type = serializers.CharField(required=False, help_text='"function" (OpenAI form, ignored).')
    function = RunToolCallFunction(required=False, help_text="OpenAI form: wins over name.")


class RunToolMessage(serializers.Serializer):
    role = named_enum("ToolMessageRole", ["tool"])()
    tool_call_id = serializers.CharField()
    content = serializers.CharField(help_text="The tool's answer; a failure reads error: ...")
