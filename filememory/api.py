"""/api/v1/memories/{id}/files and /revisions: files with ETags, and their history."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from filememory import openapi as doc
from filememory.models import File
from filememory.representations import file_etag, file_json, revision_json
from filememory.services import files, revisions
from filememory.services.writes import Actor
from memoryhub.api.base import ApiView, body, if_match, paginated
from memoryhub.conf import setting
from memoryhub.permissions import CanRun, ReadOrRun, ReadOrWrite
from memoryhub.schema import ETAG, PAGE_PARAMETERS, errors, page_of

BAD_PATH = "The file path is not a clean relative path (see file_path)."
MEMORY_FULL = "The memory's files would pass memory.max_total_bytes (memory_full)."


def _file_response(file: File, status: int = 200) -> Response:
    response = Response(file_json(file), status=status)
    response["ETag"] = file_etag(file)
    return response


class FileTreeView(ApiView):
    permission_classes = [ReadOrRun]

    @extend_schema(
        summary="List a file memory's files (no content)",
        parameters=[doc.PREFIX, *PAGE_PARAMETERS],
        responses={200: page_of("MemoryFilePage", doc.MemoryFileInfoSerializer)},
    )
    def get(self, request: Request, memory_id: str) -> Response:
        qs = files.list_files(self.principal, memory_id, request.query_params.get("prefix"))
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
        parameters=[doc.FILE_PATH, ETAG],
        responses={200: doc.MemoryFileSerializer},
    )
    def get(self, request: Request, memory_id: str, file_path: str) -> Response:
        return _file_response(files.get_file(self.principal, memory_id, file_path))

    @errors({409: MEMORY_FULL})
    @extend_schema(
        summary="Create (no If-Match) or replace (If-Match) a file",
        description="201 when the file was created, 200 when it was replaced.",
        parameters=[doc.FILE_PATH, doc.IF_MATCH_PUT, ETAG],
        request=doc.MemoryFileWriteSerializer,
        responses={200: doc.MemoryFileSerializer, 201: doc.MemoryFileSerializer},
    )
    def put(self, request: Request, memory_id: str, file_path: str) -> Response:
        data = body(request, {"content"}, required={"content"})
        file, created = files.put_file(
            Actor(self.principal),
            memory_id,
            file_path,
            data["content"],
            request.META.get("HTTP_IF_MATCH"),
        )
        return _file_response(file, status=201 if created else 200)

    @errors({422: BAD_PATH})
    @extend_schema(
        summary="Delete a file (If-Match)",
        parameters=[doc.FILE_PATH, doc.IF_MATCH_DELETE],
        responses={204: None},
    )
    def delete(self, request: Request, memory_id: str, file_path: str) -> Response:
        files.delete_file(Actor(self.principal), memory_id, file_path, if_match(request))
        return Response(status=204)


class RevisionListView(ApiView):
    permission_classes = [ReadOrWrite]

    @extend_schema(
        summary="A file's or the memory's history, newest first",
        parameters=[doc.HISTORY_PATH, *PAGE_PARAMETERS],
        responses={200: page_of("FileRevisionPage", doc.FileRevisionSerializer)},
    )
    def get(self, request: Request, memory_id: str) -> Response:
        qs = revisions.list_revisions(self.principal, memory_id, request.query_params.get("path"))
        return paginated(self, qs, lambda page: [revision_json(r) for r in page])

    @extend_schema(
        summary="Purge a file's (?path=) or the memory's history",
        parameters=[doc.PURGE_PATH],
        responses={200: doc.FileHistoryPurgeSerializer},
    )
    def delete(self, request: Request, memory_id: str) -> Response:
        path = request.query_params.get("path")
        deleted = revisions.purge_history(self.principal, memory_id, path)
        return Response({"deleted": deleted})


class RevisionDetailView(ApiView):
    permission_classes = [ReadOrRun]

    @extend_schema(
        summary="One revision, with its content",
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
        parameters=[doc.IF_MATCH_RESTORE, ETAG],
        request=None,
        responses={200: doc.MemoryFileSerializer},
    )
    def post(self, request: Request, memory_id: str, revision_id: str) -> Response:
        body(request, set())
        file = revisions.restore_revision(
            Actor(self.principal), memory_id, revision_id, request.META.get("HTTP_IF_MATCH")
        )
        return _file_response(file)
