"""/api/v1/memories/{id}/files and /revisions: files with ETags, and their history.

Each view checks its input with the rules of filememory/serializers.py (the body and the
query) and filememory/filters.py (the lists), the file path with FILE_PATH, then hands
typed values to the services, which keep what needs the database: permissions, the
memory, If-Match and the memory's byte limit. Each operation's description names those.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from filememory import serializers as doc
from filememory.filters import FileFilter, RevisionFilter
from filememory.models import File
from filememory.representations import file_etag, file_json, revision_json
from filememory.services import files, revisions
from filememory.services.paths import FILE_PATH
from filememory.services.writes import Actor
from memoryhub.api.base import ApiView, if_match, paginated
from memoryhub.conf import setting
from memoryhub.filters import filter_rows, parameters
from memoryhub.permissions import CanRun, ReadOrRun, ReadOrWrite
from memoryhub.rules import NoBody, parse
from memoryhub.schema import ETAG, PAGE_PARAMETERS, errors, page_of

BAD_PATH = "The file path is not a clean relative path (see file_path)."
MEMORY_FULL = "The memory's files would pass memory.max_total_bytes (memory_full)."
# What no field states: the memory (404 for another workspace's or another kind's).
A_FILE_MEMORY = "The memory must be a file memory of this workspace (404 otherwise)."
# The byte limits the settings hold, which a schema cannot count.
FILE_LIMITS = (
    "A file holds at most memory.max_file_bytes UTF-8 bytes (64 KiB by default; 422, "
    "reason file_too_large), the memory's files at most memory.max_total_bytes together "
    "(409, reason memory_full)."
)


def _file_response(file: File, status: int = 200) -> Response:
    response = Response(file_json(file), status=status)
    response["ETag"] = file_etag(file)
    return response


class FileTreeView(ApiView):
    permission_classes = [ReadOrRun]

    @extend_schema(
        summary="List a file memory's files (no content)",
        description=f"By path. {A_FILE_MEMORY}",
        parameters=[*parameters(FileFilter), *PAGE_PARAMETERS],
        responses={200: page_of("MemoryFilePage", doc.MemoryFileInfoSerializer)},
    )
    def get(self, request: Request, memory_id: str) -> Response:
        qs = filter_rows(FileFilter, request, files.list_files(self.principal, memory_id))
        return paginated(self, qs, lambda page: [file_json(f, content=False) for f in page])


class FileDetailView(ApiView):
    permission_classes = [ReadOrRun]

    @property
    def max_body_bytes(self) -> int:
        # Room for a file of memory.max_file_bytes even when every byte is JSON-escaped.
        return 6 * setting("memory.max_file_bytes") + 4096

    @errors({422: BAD_PATH})
    @extend_schema(
        summary="Read a file",
        description=f"{A_FILE_MEMORY} 404 when no file is at the path.",
        parameters=[doc.FILE_PATH_PARAMETER, ETAG],
        responses={200: doc.MemoryFileSerializer},
    )
    def get(self, request: Request, memory_id: str, file_path: str) -> Response:
        path = FILE_PATH(file_path)
        return _file_response(files.get_file(self.principal, memory_id, path))

    @errors({409: MEMORY_FULL})
    @extend_schema(
        summary="Create (no If-Match) or replace (If-Match) a file",
        description="201 when the file was created, 200 when it was replaced. Without "
        "If-Match the file must not exist (412 with the current file); with it, the file "
        f"must be at that version (412 with the current file otherwise). {FILE_LIMITS} "
        f"{A_FILE_MEMORY}",
        parameters=[doc.FILE_PATH_PARAMETER, doc.IF_MATCH_PUT, ETAG],
        request=doc.MemoryFileWriteSerializer,
        responses={200: doc.MemoryFileSerializer, 201: doc.MemoryFileSerializer},
    )
    def put(self, request: Request, memory_id: str, file_path: str) -> Response:
        data = parse(doc.MemoryFileWriteSerializer, request.data)
        file, created = files.put_file(
            Actor(self.principal),
            memory_id,
            path=FILE_PATH(file_path),
            content=data["content"],
            if_match=request.META.get("HTTP_IF_MATCH"),
        )
        return _file_response(file, status=201 if created else 200)

    @errors({422: BAD_PATH})
    @extend_schema(
        summary="Delete a file (If-Match)",
        description="If-Match must name the file's current version, or be * (412 with the "
        f"current file otherwise). 404 when no file is at the path. {A_FILE_MEMORY}",
        parameters=[doc.FILE_PATH_PARAMETER, doc.IF_MATCH_DELETE],
        responses={204: None},
    )
    def delete(self, request: Request, memory_id: str, file_path: str) -> Response:
        etag = if_match(request)
        path = FILE_PATH(file_path)
        files.delete_file(Actor(self.principal), memory_id, path=path, if_match=etag)
        return Response(status=204)


class RevisionListView(ApiView):
    permission_classes = [ReadOrWrite]

    @extend_schema(
        summary="A file's or the memory's history, newest first",
        description=A_FILE_MEMORY,
        parameters=[*parameters(RevisionFilter), *PAGE_PARAMETERS],
        responses={200: page_of("FileRevisionPage", doc.FileRevisionSerializer)},
    )
    def get(self, request: Request, memory_id: str) -> Response:
        qs = filter_rows(
            RevisionFilter, request, revisions.list_revisions(self.principal, memory_id)
        )
        return paginated(self, qs, lambda page: [revision_json(r) for r in page])

    @extend_schema(
        summary="Purge a file's (?path=) or the memory's history",
        description=f"The files themselves stay. {A_FILE_MEMORY}",
        parameters=[doc.FileHistoryPurgeQuerySerializer],
        responses={200: doc.FileHistoryPurgeSerializer},
    )
    def delete(self, request: Request, memory_id: str) -> Response:
        query = parse(doc.FileHistoryPurgeQuerySerializer, request.query_params)
        deleted = revisions.purge_history(self.principal, memory_id, path=query.get("path"))
        return Response({"deleted": deleted})


class RevisionDetailView(ApiView):
    permission_classes = [ReadOrRun]

    @extend_schema(
        summary="One revision, with its content",
        description=f"{A_FILE_MEMORY} 404 for a revision of another memory.",
        responses={200: doc.FileRevisionDetailSerializer},
    )
    def get(self, request: Request, memory_id: str, revision_id: str) -> Response:
        revision = revisions.get_revision(self.principal, memory_id, revision_id)
        return Response(revision_json(revision, content=True))


class RevisionRestoreView(ApiView):
    permission_classes = [CanRun]

    @errors({409: MEMORY_FULL})
    @extend_schema(
        summary="Restore a revision's content as the file's new version",
        description="No body, or an empty JSON object. 422 for a revision that deleted the "
        "file (it has no content). With If-Match the file must be at that version (412 "
        f"with the current file otherwise). {FILE_LIMITS} {A_FILE_MEMORY}",
        parameters=[doc.IF_MATCH_RESTORE, ETAG],
        request=None,
        responses={200: doc.MemoryFileSerializer},
    )
    def post(self, request: Request, memory_id: str, revision_id: str) -> Response:
        parse(NoBody, request.data)
        file = revisions.restore_revision(
            Actor(self.principal),
            memory_id,
            revision_id,
            if_match=request.META.get("HTTP_IF_MATCH"),
        )
        return _file_response(file)
