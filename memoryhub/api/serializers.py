"""Request and response serializers of /api/v1 agents, end users and the memories catalog.

The request serializers check the bodies (strict: unknown fields are 422, each field's
:class:`~memoryhub.rules.Rule` in declaration order) and document them; the rules live
beside their checks in the services. The response serializers document the answers
that ``representations.py`` and the views build.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drf_spectacular.utils import extend_schema_serializer
from rest_framework import serializers

from memoryhub.errors import ApiError
from memoryhub.models import MAX_NAMESPACE, Memory
from memoryhub.rules import RequestSerializer, Rule
from memoryhub.schema import named_enum
from memoryhub.services import agents, common, memories
from memoryhub.services.common import NAME_MAX_CHARS
from memoryhub.tools import MOUNT_NAME_PATTERN, TOOL_KEYS

# --- shared with threads/serializers.py ------------------------------------------------------

# The enums MountAccess and MemoryType are their rules' components, in answers too.
MemoryKind = named_enum("MemoryKind", Memory.Kind.values)
ToolKey = named_enum("ToolKey", TOOL_KEYS)

ACCESS_HELP = "read offers only the reading tools, write every tool."
RECALL_HELP = "Whether a record memory recalls records into each run (files ignore it)."
_MOUNT = agents.mount_rules("mount")


# The body of POST /api/v1/threads/{id}/memories (its messages name it "mount"), and the
# component of the items of the mount lists (memory_mounts, memories).
class NewMemoryMount(RequestSerializer):
    """A memory to mount: access and recall have defaults."""

    name = _MOUNT["name"].field(help_text="The name the model addresses the memory by.")
    access = _MOUNT["access"].field(required=False, default="read", help_text=ACCESS_HELP)
    recall = _MOUNT["recall"].field(required=False, default=True, help_text=RECALL_HELP)
    memory_id = _MOUNT["memory_id"].field(help_text="A memory of the workspace.")


class MemoryMount(serializers.Serializer):
    """A memory mounted under a name (an agent's default mount)."""

    name = serializers.RegexField(
        MOUNT_NAME_PATTERN, help_text="The name the model addresses the memory by."
    )
    memory_id = serializers.CharField(help_text="A memory of the workspace.")
    access = agents.ACCESS.field(help_text=ACCESS_HELP)
    recall = serializers.BooleanField(help_text=RECALL_HELP)


# --- agents ----------------------------------------------------------------------------------

MOUNTS_HELP = "Mounts joining each thread at its first run; each name and memory once."
TOOLSET_HELP = "Default (and null): enabled with no tool disabled."
NAME_HELP = f"1-{NAME_MAX_CHARS} characters, stripped."


# The agents' bodies keep the component names of the one serializer that documented both
# (AgentFieldsRequest, PatchedAgentFieldsRequest).
@extend_schema_serializer(component_name="AgentFields")
class AgentCreate(RequestSerializer):
    """The fields an agent is created or changed with."""

    name = common.NAME.field(help_text=NAME_HELP)
    toolset = agents.TOOLSET.field(required=False, allow_null=True, help_text=TOOLSET_HELP)
    memory_mounts = agents.AGENT_MOUNTS.field(
        required=False, allow_null=True, help_text=MOUNTS_HELP
    )


@extend_schema_serializer(component_name="AgentFields")
class AgentChange(RequestSerializer):
    """The fields an agent is created or changed with."""

    name = common.NAME.field(required=False, help_text=NAME_HELP)
    toolset = agents.TOOLSET.field(required=False, allow_null=True, help_text=TOOLSET_HELP)
    memory_mounts = agents.AGENT_MOUNTS.field(
        required=False, allow_null=True, help_text=MOUNTS_HELP
    )


class AgentToolset(serializers.Serializer):
    enabled = serializers.BooleanField(
        default=True, help_text="false offers no memory tools (context and recall stay)."
    )
    disabled_tools = serializers.ListField(
        child=ToolKey(), default=list, help_text="Tool keys never offered to this agent's runs."
    )


class Agent(serializers.Serializer):
    id = serializers.CharField()
    name = serializers.CharField()
    toolset = AgentToolset()
    memory_mounts = MemoryMount(many=True)
    etag = serializers.CharField(help_text="The If-Match value for changes.")
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


# --- end users -------------------------------------------------------------------------------


class EndUser(serializers.Serializer):
    id = serializers.CharField(help_text="The runtime's own id for the person.")
    created_at = serializers.DateTimeField()


class ErasureReceipt(serializers.Serializer):
    """What erasing a person removed, and the search afterwards (``services.end_users``)."""

    end_user = serializers.CharField(help_text="The internal id (usr_...) the person had.")
    pseudonym = serializers.CharField(help_text="What the audit trail calls them from now on.")
    facts = serializers.IntegerField(help_text="Facts in their users/<id>/ folders, every agent.")
    versions = serializers.IntegerField(help_text="Versions of those facts.")
    threads_archived = serializers.IntegerField(help_text="Their threads, archived and unlinked.")
    mounts_removed = serializers.IntegerField(help_text="Mounts of those threads.")
    runs_ended = serializers.IntegerField(help_text="Their runs that were still running.")
    runs_scrubbed = serializers.IntegerField(
        help_text="Runs whose input, memory context or offered tools were cleared."
    )
    tool_call_answers = serializers.IntegerField(
        help_text="Tool calls of their runs, deleted with their answers."
    )
    audit_details_pseudonymised = serializers.IntegerField(
        help_text="Audit rows whose object id or details named them."
    )
    verified = serializers.BooleanField(
        help_text="True when a search after the erase found nothing of theirs."
    )
    remaining = serializers.DictField(
        child=serializers.IntegerField(),
        help_text="What that search found, per kind; empty when verified.",
    )


# --- the memories catalog --------------------------------------------------------------------

LABELS_HELP = "Repeated labels are kept once."
GUIDE_HELP = (
    "What belongs in the memory, up to memory.guide_bytes (UTF-8). null: the inherited"
    ' guide; "": no guide.'
)
ALWAYS_LOAD_HELP = "File memories only: paths whose content leads the memory's context."

# A kind's own create fields: the kind checks them (``MemoryKind.prepare_create``), and
# another kind refuses them; here they are documented.
PROVIDER_ID = Rule(lambda value: value, {"type": "string", "minLength": 1})
NAMESPACE = Rule(
    lambda value: value, {"type": "string", "minLength": 1, "maxLength": MAX_NAMESPACE}
)


class MemoryCreate(RequestSerializer):
    """A new memory: a file memory (postgres) or a record memory (a provider's type)."""

    type = memories.TYPE.field(
        required=False,
        default=memories.DEFAULT_TYPE,
        help_text="postgres makes a file memory; a provider's type makes a record memory.",
    )
    name = common.NAME.field(help_text=NAME_HELP)
    description = memories.DESCRIPTION.field(required=False)
    labels = memories.LABELS.field(required=False, help_text=LABELS_HELP)
    guide = memories.GUIDE.field(required=False, allow_null=True, help_text=GUIDE_HELP)
    always_load = memories.ALWAYS_LOAD.field(required=False, help_text=ALWAYS_LOAD_HELP)
    provider_id = PROVIDER_ID.field(
        required=False,
        help_text="Record memories (required there): an enabled memory provider of this type.",
    )
    namespace = NAMESPACE.field(
        required=False,
        allow_null=True,
        help_text="Record memories: the backend namespace (mem0 user_id); default a13n-<hex>.",
    )


class MemoryChange(RequestSerializer):
    """The fields a memory's PATCH may change (type, provider_id and namespace never change)."""

    name = common.NAME.field(required=False, help_text=NAME_HELP)
    description = memories.DESCRIPTION.field(required=False)
    labels = memories.LABELS.field(required=False, help_text=LABELS_HELP)
    guide = memories.GUIDE.field(required=False, allow_null=True, help_text=GUIDE_HELP)
    always_load = memories.ALWAYS_LOAD.field(required=False, help_text=ALWAYS_LOAD_HELP)

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        # A field that never changes is named as such, not as unknown (after the unknown).
        if isinstance(data, Mapping):
            unknown = sorted(set(data) - set(self.fields) - set(memories.FIXED_FIELDS))
            if unknown:
                raise ApiError(422, f"unknown fields: {', '.join(unknown)}")
            memories.check_unchanging(data)
        return super().to_internal_value(data)


class CatalogMemory(serializers.Serializer):
    """A memory as the catalog shows it."""

    id = serializers.CharField()
    name = serializers.CharField()
    description = serializers.CharField()
    labels = serializers.ListField(child=serializers.CharField())
    kind = MemoryKind()
    type = memories.TYPE.field()
    guide = serializers.CharField(allow_null=True, help_text="The memory's own guide.")
    inherited_guide = serializers.CharField(help_text="The guide that null resolves to.")
    always_load = serializers.ListField(child=serializers.CharField())
    provider_id = serializers.CharField(allow_null=True, help_text="Record memories only.")
    namespace = serializers.CharField(allow_null=True, help_text="Record memories only.")
    file_count = serializers.IntegerField(allow_null=True, help_text="File memories only.")
    content_bytes = serializers.IntegerField(allow_null=True, help_text="File memories only.")
    history_bytes = serializers.IntegerField(allow_null=True, help_text="File memories only.")
    etag = serializers.CharField(help_text="The If-Match value for changes.")
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
