"""OpenAPI shapes of the memory provider and record endpoints: documentation only.

Parsing and validation stay in the services (records/services); these serializers describe
what the views really accept and return for drf-spectacular, and never validate anything.
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers

from memoryhub.models import MemoryProvider
from memoryhub.schema import named_enum
from memoryhub.services.common import NAME_MAX_CHARS
from records.backends import DEFAULT_BASE_URL
from records.services.providers import MAX_BASE_URL_CHARS, MAX_CREDENTIAL_CHARS, MAX_TIMEOUT
from records.services.records import (
    DEFAULT_K,
    DEFAULT_LIST_LIMIT,
    MAX_K,
    MAX_LIST_LIMIT,
    MAX_LIST_OFFSET,
    METADATA_MAX_DEPTH,
)

MemoryProviderType = named_enum("MemoryProviderType", MemoryProvider.Type.values)


# --- memory providers -------------------------------------------------------------------


class MemoryProviderConfigSerializer(serializers.Serializer):
    """Where the backend is and how long to wait for it."""

    base_url = serializers.CharField(
        required=False,
        max_length=MAX_BASE_URL_CHARS,
        help_text=f"The backend's address: required for mem0_oss; mem0_platform defaults to "
        f"{DEFAULT_BASE_URL}. Always present in answers.",
    )
    connect_timeout = serializers.FloatField(
        required=False,
        max_value=MAX_TIMEOUT,
        help_text=f"Seconds, more than 0 and at most {MAX_TIMEOUT:g}.",
    )
    read_timeout = serializers.FloatField(
        required=False,
        max_value=MAX_TIMEOUT,
        help_text=f"Seconds, more than 0 and at most {MAX_TIMEOUT:g}.",
    )


class MemoryProviderCredentialSerializer(serializers.Serializer):
    """The backend's keys: stored encrypted and never shown again."""

    api_key = serializers.CharField(
        required=False,
        min_length=1,
        max_length=MAX_CREDENTIAL_CHARS,
        help_text="Required for mem0_platform; for mem0_oss it is sent as X-API-Key.",
    )
    admin_api_key = serializers.CharField(
        required=False,
        min_length=1,
        max_length=MAX_CREDENTIAL_CHARS,
        help_text="mem0_oss only: the server's admin key, which purging a deleted memory needs.",
    )


class MemoryProviderSerializer(serializers.Serializer):
    """A Memory Provider: one account of a record memory backend. Never its credential."""

    id = serializers.CharField()
    type = MemoryProviderType()
    name = serializers.CharField()
    config = MemoryProviderConfigSerializer()
    enabled = serializers.BooleanField()
    has_credential = serializers.BooleanField(help_text="Whether a credential is stored.")
    etag = serializers.CharField(help_text="The provider's ETag; send it as If-Match to change it.")
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


class MemoryProviderCreateSerializer(serializers.Serializer):
    """The body of POST /memory-providers."""

    type = MemoryProviderType(help_text="The backend; it never changes.")
    name = serializers.CharField(
        max_length=NAME_MAX_CHARS, help_text=f"1-{NAME_MAX_CHARS} characters, not only spaces."
    )
    config = MemoryProviderConfigSerializer(required=False, allow_null=True)
    credential = MemoryProviderCredentialSerializer(
        required=False, allow_null=True, help_text="Optional for mem0_oss."
    )
    enabled = serializers.BooleanField(required=False, default=True)


class MemoryProviderChangeSerializer(serializers.Serializer):
    """The body of PATCH /memory-providers/{id}: the fields to change (type never changes)."""

    name = serializers.CharField(
        max_length=NAME_MAX_CHARS, help_text=f"1-{NAME_MAX_CHARS} characters, not only spaces."
    )
    config = MemoryProviderConfigSerializer(allow_null=True, help_text="Replaces the whole config.")
    credential = MemoryProviderCredentialSerializer(
        allow_null=True, help_text="Replaces the stored credential; null removes it (mem0_oss)."
    )
    enabled = serializers.BooleanField()


class MemoryProviderTestSerializer(serializers.Serializer):
    """A passed test: the backend answered with this address and key."""

    ok = serializers.BooleanField(help_text="Always true: a failed test is an error.")
    provider_id = serializers.CharField()
    type = MemoryProviderType()


# --- records ----------------------------------------------------------------------------


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


class MemoryRecordWriteSerializer(serializers.Serializer):
    """A new record's text and metadata."""

    text = serializers.CharField(
        help_text="1 to memory.record_chars characters (8000 by default), not only spaces."
    )
    metadata = serializers.DictField(
        required=False,
        allow_null=True,
        help_text=f"Free-form metadata, at most {METADATA_MAX_DEPTH} levels deep; null means {{}}.",
    )


class MemoryRecordChangeSerializer(MemoryRecordWriteSerializer):
    """A record's new text, metadata or both (at least one of them)."""

    schema_extra = {"minProperties": 1}  # {} is 422: there is nothing to change

    text = serializers.CharField(
        required=False,
        help_text="1 to memory.record_chars characters (8000 by default), not only spaces.",
    )


class MemoryRecordPageSerializer(serializers.Serializer):
    """A page of a record memory's records."""

    count = serializers.IntegerField(help_text="How many records the memory holds.")
    next = serializers.URLField(allow_null=True)
    previous = serializers.URLField(allow_null=True)
    results = MemoryRecordSerializer(many=True)


class MemoryRecordSearchSerializer(serializers.Serializer):
    """The body of POST …/records/search."""

    query = serializers.CharField(
        help_text="1 to memory.record_chars characters (8000 by default), not only spaces."
    )
    k = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        max_value=MAX_K,
        default=DEFAULT_K,
        help_text=f"How many records at most; null means {DEFAULT_K}.",
    )


class MemoryRecordSearchResultSerializer(serializers.Serializer):
    """The records closest to the query, closest first."""

    results = MemoryRecordSerializer(many=True)


# --- parameters -------------------------------------------------------------------------

RECORD_ID = OpenApiParameter(
    "record_id",
    {"type": "string", "format": "uuid"},
    OpenApiParameter.PATH,
    description="The backend's id of the record (mem0's ids are UUIDs; anything else is 404).",
)
RECORD_LIMIT = OpenApiParameter(
    "limit",
    {"type": "integer", "minimum": 1, "maximum": MAX_LIST_LIMIT, "default": DEFAULT_LIST_LIMIT},
    description="Page size.",
)
RECORD_OFFSET = OpenApiParameter(
    "offset",
    {"type": "integer", "minimum": 0, "maximum": MAX_LIST_OFFSET, "default": 0},
    description="Records to skip.",
)
