"""The bodies of the memory provider and record endpoints: request serializers that check and
document them, and the shapes of the answers.

Each request field is its rule's (records/services): the same check and message as
everywhere, the same schema. What no field states (a rule across fields or with the
provider's type) is checked by the services and named in the operation's description.
The answers are built by the views (``provider_json``, ``Record.as_json``); these
serializers only document them.
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers

from memoryhub.rules import RequestSerializer
from memoryhub.services.common import NAME, NAME_MAX_CHARS
from records.services.providers import (
    BASE_URL,
    CONNECT_TIMEOUT,
    PROVIDER_CONFIG,
    PROVIDER_CREDENTIAL,
    PROVIDER_ENABLED,
    PROVIDER_TYPE,
    READ_TIMEOUT,
)
from records.services.records import DEFAULT_K, METADATA, METADATA_MAX_DEPTH, QUERY, TEXT, K

NAME_HELP = f"1-{NAME_MAX_CHARS} characters, not only spaces."
TEXT_HELP = "1 to memory.record_chars characters (8000 by default), not only spaces."
METADATA_HELP = f"Free-form metadata, at most {METADATA_MAX_DEPTH} levels deep; null means {{}}."

# --- memory providers: requests ---------------------------------------------------------


class MemoryProviderCreateSerializer(RequestSerializer):
    """The body of POST /memory-providers."""

    type = PROVIDER_TYPE.field(help_text="The backend; it never changes.")
    name = NAME.field(help_text=NAME_HELP)
    config = PROVIDER_CONFIG.field(required=False, allow_null=True)
    credential = PROVIDER_CREDENTIAL.field(required=False, help_text="Optional for mem0_oss.")
    enabled = PROVIDER_ENABLED.field(required=False, default=True)


class MemoryProviderChangeSerializer(RequestSerializer):
    """The body of PATCH /memory-providers/{id}: the fields to change (type never changes)."""

    name = NAME.field(required=False, help_text=NAME_HELP)
    config = PROVIDER_CONFIG.field(
        required=False, allow_null=True, help_text="Replaces the whole config."
    )
    credential = PROVIDER_CREDENTIAL.field(
        required=False, help_text="Replaces the stored credential; null removes it (mem0_oss)."
    )
    enabled = PROVIDER_ENABLED.field(required=False)


class MemoryProviderConfigSerializer(serializers.Serializer):
    """Where the backend is and how long to wait for it."""

    base_url = BASE_URL.field(required=False)
    connect_timeout = CONNECT_TIMEOUT.field(required=False)
    read_timeout = READ_TIMEOUT.field(required=False)


class MemoryProviderSerializer(serializers.Serializer):
    """A Memory Provider: one account of a record memory backend. Never its credential."""

    id = serializers.CharField()
    type = PROVIDER_TYPE.field()
    name = serializers.CharField()
    config = MemoryProviderConfigSerializer()
    enabled = serializers.BooleanField()
    has_credential = serializers.BooleanField(help_text="Whether a credential is stored.")
    etag = serializers.CharField(help_text="The provider's ETag; send it as If-Match to change it.")
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


class MemoryProviderTestSerializer(serializers.Serializer):
    """A passed test: the backend answered with this address and key."""

    ok = serializers.BooleanField(help_text="Always true: a failed test is an error.")
    provider_id = serializers.CharField()
    type = PROVIDER_TYPE.field()


# --- records: requests --------------------------------------------------------------------


class MemoryRecordWriteSerializer(RequestSerializer):
    """A new record's text and metadata."""

    text = TEXT.field(help_text=TEXT_HELP)
    metadata = METADATA.field(required=False, allow_null=True, help_text=METADATA_HELP)


class MemoryRecordChangeSerializer(MemoryRecordWriteSerializer):
    """A record's new text, metadata or both (at least one of them)."""

    schema_extra = {"minProperties": 1}  # {} is 422: there is nothing to change

    text = TEXT.field(required=False, help_text=TEXT_HELP)


class MemoryRecordSearchSerializer(RequestSerializer):
    """The body of POST …/records/search."""

    query = QUERY.field(help_text=TEXT_HELP)
    k = K.field(
        required=False,
        allow_null=True,
        default=DEFAULT_K,
        help_text=f"How many records at most; null means {DEFAULT_K}.",
    )


# --- records: answers ---------------------------------------------------------------------


class MemoryRecordSerializer(serializers.Serializer):
    """One record of a record memory."""

    id = serializers.CharField(help_text="The backend's id of the record.")
    text = serializers.CharField()
    metadata = serializers.DictField(help_text="Free-form metadata; {} when there is none.")
    created_at = serializers.DateTimeField(allow_null=True)
    updated_at = serializers.DateTimeField(allow_null=True)
    score = serializers.FloatField(
        required=False, help_text="Search results only, when the backend gives one."
    )


class MemoryRecordPageSerializer(serializers.Serializer):
    """A page of a record memory's records."""

    count = serializers.IntegerField(help_text="How many records the memory holds.")
    next = serializers.URLField(allow_null=True)
    previous = serializers.URLField(allow_null=True)
    results = MemoryRecordSerializer(many=True)


class MemoryRecordSearchResultSerializer(serializers.Serializer):
    """The records closest to the query, closest first."""

    results = MemoryRecordSerializer(many=True)


# --- parameters ---------------------------------------------------------------------------

RECORD_ID = OpenApiParameter(
    "record_id",
    {"type": "string", "format": "uuid"},
    OpenApiParameter.PATH,
    description="The backend's id of the record (mem0's ids are UUIDs; anything else is 404).",
)
