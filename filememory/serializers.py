"""The file memory's requests (checked and documented) and answers (documented).

Request serializers validate what the views take, field by field, with the rules of
filememory/services (FILE_PATH, PREFIX, CONTENT); the response serializers describe what
filememory/representations.py builds, for drf-spectacular. The list filters are in
filememory/filters.py.
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers

from filememory.models import Revision
from filememory.services.paths import FILE_PATH, MAX_PATH_BYTES, MAX_SEGMENT_BYTES
from filememory.services.writes import CONTENT
from memoryhub.rules import QuerySerializer, RequestSerializer
from memoryhub.schema import named_enum

# --- requests (the views parse them) ----------------------------------------------------


class MemoryFileWriteSerializer(RequestSerializer):
    """The body of PUT …/files/{path}: the file's whole new content."""

    content = CONTENT.field(
        help_text="The whole content: at most memory.max_file_bytes UTF-8 bytes (64 KiB by "
        "default).",
    )


class FileHistoryPurgeQuerySerializer(QuerySerializer):
    """The query of DELETE …/revisions."""

    path = FILE_PATH.field(
        required=False,
        help_text="Purge only this file path's history; without it, the whole memory's.",
    )


# --- path and header parameters (the services check If-Match) ---------------------------

PATH_RULES = (
    f"relative, '/'-separated, at most {MAX_PATH_BYTES} bytes (UTF-8), segments of at most "
    f"{MAX_SEGMENT_BYTES} bytes, no empty, '.' or '..' segments, no backslashes or control "
    "characters"
)
FILE_PATH_PARAMETER = OpenApiParameter(
    "file_path",
    dict(FILE_PATH.schema),  # the view checks it with this rule
    OpenApiParameter.PATH,
    description=f"The file's path, such as prefs/language.md: {PATH_RULES}.",
)
IF_MATCH_PUT = OpenApiParameter(
    "If-Match",
    str,
    OpenApiParameter.HEADER,
    description="Absent: create the file (it must not exist). The file's ETag: replace that "
    "version. *: replace whatever version is current.",
)
IF_MATCH_DELETE = OpenApiParameter(
    "If-Match",
    str,
    OpenApiParameter.HEADER,
    required=True,
    description="The file's current ETag, or *.",
)
IF_MATCH_RESTORE = OpenApiParameter(
    "If-Match",
    str,
    OpenApiParameter.HEADER,
    description="The file's ETag: restore only over that version. Absent: replace whatever "
    "version is current, or create the file again.",
)


# --- answers (filememory/representations.py builds them): files -------------------------


class MemoryFileInfoSerializer(serializers.Serializer):
    """A file without its content, as the file listing shows it."""

    path = serializers.CharField(help_text="The file's path, such as prefs/language.md.")
    size = serializers.IntegerField(help_text="UTF-8 bytes of the content.")
    version = serializers.IntegerField(help_text="Starts at 1; grows by one with every change.")
    etag = serializers.CharField(help_text="The file's ETag; send it as If-Match to change it.")
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    principal_id = serializers.CharField(help_text="Who made the latest change.")
    run_id = serializers.CharField(
        allow_null=True, help_text="The run whose tool call made the latest change, if any."
    )
    tool_call_id = serializers.CharField(
        allow_null=True, help_text="The tool call that made the latest change, if any."
    )


class MemoryFileSerializer(MemoryFileInfoSerializer):
    """A file with its content."""

    content = serializers.CharField(allow_blank=True)


# --- answers: revisions -----------------------------------------------------------------

# Who changes files: API keys, runs, and staff in the panel (as user:<name>).
REVISION_AUTHORS = ("api_key", "run", "staff")


class FileRevisionSerializer(serializers.Serializer):
    """One change of one path, as the history lists it (without content)."""

    id = serializers.CharField(help_text="The revision's id (rev_…).")
    path = serializers.CharField()
    action = named_enum("FileRevisionAction", Revision.Action.values)()
    version = serializers.IntegerField(
        allow_null=True, help_text="The file's version after the change; null for a delete."
    )
    size = serializers.IntegerField(help_text="UTF-8 bytes of the content after the change.")
    run_id = serializers.CharField(allow_null=True, help_text="Set for an agent's tool call.")
    tool_call_id = serializers.CharField(allow_null=True, help_text="Set for an agent's tool call.")
    principal_id = serializers.CharField(help_text="Who made the change (agents and people).")
    principal_type = named_enum("FileRevisionPrincipalType", REVISION_AUTHORS)(
        help_text="api_key or run (the API and the model tools), or staff (the panel)."
    )
    other_path = serializers.CharField(
        allow_null=True, help_text="A rename's other side: the new or the old path."
    )
    restored_from = serializers.CharField(
        allow_null=True, help_text="The revision a restore copied its content from."
    )
    created_at = serializers.DateTimeField()


class FileRevisionDetailSerializer(FileRevisionSerializer):
    """One revision with its content."""

    content = serializers.CharField(
        allow_null=True, allow_blank=True, help_text="Null for a revision that deleted the file."
    )


class FileHistoryPurgeSerializer(serializers.Serializer):
    """What purging history deleted."""

    deleted = serializers.IntegerField(help_text="How many revisions were deleted.")
