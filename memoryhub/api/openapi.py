"""OpenAPI shapes of /api/v1 agents, end users and the memories catalog.

Documentation only: the views parse and the services validate; these serializers never run.
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers

from memoryhub.models import MAX_NAMESPACE, Memory, MemoryProvider
from memoryhub.schema import named_enum
from memoryhub.services import memories
from memoryhub.services.common import NAME_MAX_CHARS
from memoryhub.tools import MOUNT_NAME_PATTERN, TOOL_KEYS

MEMORY_TYPES = ("postgres", *MemoryProvider.Type.values)

# --- shared with threads/openapi.py ----------------------------------------------------------


MountAccess = named_enum("MountAccess", ("read", "write"))
MemoryKind = named_enum("MemoryKind", Memory.Kind.values)
MemoryType = named_enum("MemoryType", MEMORY_TYPES)
ToolKey = named_enum("ToolKey", TOOL_KEYS)


class MemoryMount(serializers.Serializer):
    """A memory mounted under a name (an agent's default mount)."""

    name = serializers.RegexField(
        MOUNT_NAME_PATTERN, help_text="The name the model addresses the memory by."
    )
    memory_id = serializers.CharField(help_text="A memory of the workspace.")
    access = MountAccess(help_text="read offers only the reading tools, write every tool.")
    recall = serializers.BooleanField(
        help_text="Whether a record memory recalls records into each run (files ignore it)."
    )


class NewMemoryMount(MemoryMount):
    """A memory to mount: access and recall have defaults."""

    access = MountAccess(
        default="read",
        help_text="read offers only the reading tools, write every tool.",
    )
    recall = serializers.BooleanField(
        default=True,
        help_text="Whether a record memory recalls records into each run (files ignore it).",
    )


# --- agents ----------------------------------------------------------------------------------


class AgentToolset(serializers.Serializer):
    enabled = serializers.BooleanField(
        default=True, help_text="false offers no memory tools (context and recall stay)."
    )
    disabled_tools = serializers.ListField(
        child=ToolKey(),
        default=list,
        help_text="Tool keys never offered to this agent's runs.",
    )


class AgentFields(serializers.Serializer):
    """The fields an agent is created or changed with."""

    name = serializers.CharField(
        max_length=NAME_MAX_CHARS, help_text=f"1-{NAME_MAX_CHARS} characters, stripped."
    )
    memory_mounts = NewMemoryMount(
        many=True,
        required=False,
        allow_null=True,
        help_text="Mounts joining each thread at its first run; each name and memory once.",
    )
    toolset = AgentToolset(
        required=False,
        allow_null=True,
        help_text="Default (and null): enabled with no tool disabled.",
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


# --- the memories catalog --------------------------------------------------------------------


class MemoryChange(serializers.Serializer):
    """The fields a memory's PATCH may change (type, provider_id and namespace never change)."""

    name = serializers.CharField(
        max_length=NAME_MAX_CHARS, help_text=f"1-{NAME_MAX_CHARS} characters, stripped."
    )
    description = serializers.CharField(
        max_length=memories.MAX_DESCRIPTION_CHARS, allow_blank=True, required=False
    )
    labels = serializers.ListField(
        child=serializers.CharField(max_length=memories.MAX_LABEL_CHARS),
        max_length=memories.MAX_LABELS,
        required=False,
        help_text="Repeated labels are kept once.",
    )
    guide = serializers.CharField(
        allow_null=True,
        allow_blank=True,
        required=False,
        help_text="What belongs in the memory, up to memory.guide_bytes (UTF-8). null: the"
        ' inherited guide; "": no guide.',
    )
    always_load = serializers.ListField(
        child=serializers.CharField(),
        max_length=memories.MAX_ALWAYS_LOAD,
        required=False,
        help_text="File memories only: paths whose content leads the memory's context.",
    )


class MemoryCreate(MemoryChange):
    """A new memory: a file memory (postgres) or a record memory (a provider's type)."""

    type = MemoryType(
        default=memories.DEFAULT_TYPE,
        help_text="postgres makes a file memory; a provider's type makes a record memory.",
    )
    provider_id = serializers.CharField(
        required=False,
        help_text="Record memories (required there): an enabled memory provider of this type.",
    )
    namespace = serializers.CharField(
        max_length=MAX_NAMESPACE,
        required=False,
        allow_null=True,
        help_text="Record memories: the backend namespace (mem0 user_id); default a13n-<hex>.",
    )


class CatalogMemory(serializers.Serializer):
    """A memory as the catalog shows it."""

    id = serializers.CharField()
    name = serializers.CharField()
    description = serializers.CharField()
    labels = serializers.ListField(child=serializers.CharField())
    kind = MemoryKind()
    type = MemoryType()
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


MEMORY_FILTERS = [
    OpenApiParameter(
        "label",
        str,
        many=True,
        explode=True,
        description="Only memories with this label; repeat it to require several.",
    ),
    OpenApiParameter("kind", str, enum=Memory.Kind.values),
    OpenApiParameter("type", str, enum=MEMORY_TYPES),
]
