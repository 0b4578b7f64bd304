"""Request and response serializers of /api/v1 threads, their memory mounts, runs and tool
calls.

The request serializers check the bodies (strict: unknown fields are 422, each field's
:class:`~memoryhub.rules.Rule` in declaration order) and document them; the rules live
beside their checks in the services. The response serializers document the answers the
views build.
"""

from __future__ import annotations

from rest_framework import serializers

from memoryhub import models
from memoryhub.api.serializers import MemoryKind, MemoryMount
from memoryhub.rules import RequestSerializer, Rule
from memoryhub.schema import FunctionToolType, named_enum
from memoryhub.services.agents import ACCESS, RECALL
from memoryhub.services.end_users import END_USER
from memoryhub.tools import MAX_TOOL_CALL_ID
from threads.services import mounts, runs, threads

ThreadStatus = named_enum("ThreadStatus", models.Thread.Status.values)
RunStatus = named_enum("RunStatus", models.Run.Status.values)


# --- threads ---------------------------------------------------------------------------------


class ThreadCreate(RequestSerializer):
    """A new thread of an agent, for an end user or none."""

    agent_id = threads.AGENT_ID.field(help_text="An agent of the workspace.")
    end_user = END_USER.or_null().field(
        required=False,
        help_text="The runtime's own id for the person (1-100 letters, digits and . _ : @ -;"
        " not . or .., no invisible characters).",
    )
    memories = mounts.THREAD_MOUNTS.field(
        required=False, allow_null=True, help_text="Initial memory mounts."
    )


class ThreadFork(RequestSerializer):
    """A fork: the origin's agent, end user and mounts."""

    memories = mounts.THREAD_MOUNTS.field(
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


# --- memory mounts ---------------------------------------------------------------------------
# A new mount's body is the kernel's NewMemoryMount (memoryhub.api.serializers).


class ThreadMount(MemoryMount):
    kind = MemoryKind(help_text="The mounted memory's kind.")


class ThreadMounts(serializers.Serializer):
    memories = ThreadMount(many=True)
    etag = serializers.CharField(help_text="The thread's ETag, for the next mount change.")


class MountChange(RequestSerializer):
    """A mount's new access or recall."""

    access = ACCESS.or_null().field(required=False, help_text="null or absent: unchanged.")
    recall = RECALL.or_null().field(required=False, help_text="null or absent: unchanged.")


# --- runs ------------------------------------------------------------------------------------


class RunAccept(RequestSerializer):
    """A new run; its fields are checked in this order."""

    eval = runs.EVAL.field(
        required=False,
        default=False,
        help_text="An eval run (a child of an eval run is one too).",
    )
    history_compacted = runs.HISTORY_COMPACTED.field(
        required=False,
        default=False,
        help_text="The history was compacted: send the full memory context.",
    )
    inline = runs.INLINE.field(
        required=False,
        default=False,
        help_text="An inline subagent run (needs parent_run_id): no memory tools or context.",
    )
    parent_run_id = runs.PARENT_RUN_ID.field(
        required=False, help_text="The parent run (subagents, eval items)."
    )
    input = runs.INPUT.field(
        required=False, allow_null=True, help_text="The run's input; recall searches with it."
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
    # A declared field: DRF's metaclass takes it out of the class, so it does not replace
    # Field.context, whatever django-stubs sees (as in OwnRun).
    context = serializers.CharField(  # type: ignore[assignment]
        help_text="Memory context the model sees before the input."
    )
    tools = RunToolDefinition(many=True, help_text="The memory tools offered to this run.")


class OwnRun(Run):
    input = serializers.JSONField(allow_null=True, help_text="The run's input, as given.")
    mounts = ThreadMount(many=True, help_text="The thread's mounts, frozen for this run.")
    context = serializers.CharField(  # type: ignore[assignment]  # a declared field
        allow_blank=True, help_text="The memory context the run received at acceptance."
    )
    tools = RunToolDefinition(many=True, help_text="The memory tools offered to this run.")


# --- tool calls ------------------------------------------------------------------------------
# The tool-call service checks these fields (threads.services.tool_calls): here they are
# documented and passed on as sent.


def _as_sent(value: object) -> object:
    return value


ARGUMENTS_SCHEMA = {
    "oneOf": [{"type": "object", "additionalProperties": {}}, {"type": "string"}],
    "description": "A JSON object, or a string of one (as OpenAI sends). Default {}.",
}
CALL_ID = Rule(_as_sent, {"type": "string", "minLength": 1, "maxLength": MAX_TOOL_CALL_ID})
TOOL_NAME = Rule(_as_sent, {"type": "string", "minLength": 1})
ARGUMENTS = Rule(_as_sent, ARGUMENTS_SCHEMA)
CALL_TYPE = Rule(_as_sent, {"type": "string", "minLength": 1})
# An OpenAI tool call's function: its other keys are left alone.
FUNCTION = Rule(
    _as_sent,
    {
        "type": "object",
        "properties": {"name": {"type": "string", "minLength": 1}, "arguments": ARGUMENTS_SCHEMA},
        "required": ["name"],
    },
    component="RunToolCallFunctionRequest",
)


class RunToolCall(RequestSerializer):
    """``{id, name, arguments}``, or an OpenAI tool call ``{id, type, function}``."""

    schema_extra = {"required": ["id"]}  # the service refuses a call without one

    id = CALL_ID.field(
        required=False, help_text=f"The tool call's id, 1-{MAX_TOOL_CALL_ID} characters."
    )
    name = TOOL_NAME.field(required=False, help_text="The tool name (flat form).")
    arguments = ARGUMENTS.field(required=False)
    type = CALL_TYPE.field(required=False, help_text='"function" (OpenAI form, ignored).')
    function = FUNCTION.field(required=False, help_text="OpenAI form: wins over name.")


class RunToolMessage(serializers.Serializer):
    role = named_enum("ToolMessageRole", ["tool"])()
    tool_call_id = serializers.CharField()
    content = serializers.CharField(help_text="The tool's answer; a failure reads error: ...")
