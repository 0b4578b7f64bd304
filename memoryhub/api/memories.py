"""/api/v1/memories: the catalog of file and record memories."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from memoryhub.api import openapi as oa
from memoryhub.api.base import ApiView, body, if_match, paginated, with_etag
from memoryhub.api.representations import iso
from memoryhub.etags import etag_for
from memoryhub.models import Memory
from memoryhub.permissions import ReadOrWrite
from memoryhub.schema import ETAG, IF_MATCH, PAGE_PARAMETERS, errors, page_of
from memoryhub.services import memories

STAT_FIELDS = ("file_count", "content_bytes", "history_bytes")


def memory_json(memory: Memory, stats: dict | None = None) -> dict:
    """A memory as the catalog shows it; the file stats are null unless its kind gives them."""
    data = {
        "id": memory.id,
        "name": memory.name,
        "description": memory.description,
        "labels": memory.labels,
        "kind": memory.kind,
        "type": memory.type,
        "guide": memory.guide,
        "inherited_guide": memories.inherited_guide(memory),
        "always_load": memory.always_load,
        "provider_id": memory.provider_id,
        "namespace": memory.namespace,
        **dict.fromkeys(STAT_FIELDS),
        "etag": etag_for(memory.version),
        "created_at": iso(memory.created_at),
        "updated_at": iso(memory.updated_at),
    }
    data.update(stats or {})
    return data


def _one(memory: Memory, status: int = 200) -> Response:
    stats = memories.stats_for([memory]).get(memory.id)
    return with_etag(memory_json(memory, stats), memory.version, status=status)


class MemoryListView(ApiView):
    permission_classes = [ReadOrWrite]

    @extend_schema(
        summary="List the workspace's memories",
        parameters=[*oa.MEMORY_FILTERS, *PAGE_PARAMETERS],
        responses={200: page_of("CatalogMemoryPage", oa.CatalogMemory)},
    )
    def get(self, request: Request) -> Response:
        params = request.query_params
        qs = memories.list_memories(
            self.principal,
            labels=params.getlist("label"),
            kind=params.get("kind"),
            memory_type=params.get("type"),
        )

        def render(page) -> list:
            stats = memories.stats_for(page)  # each kind's counts for the page at once
            return [memory_json(m, stats.get(m.id)) for m in page]

        return paginated(self, qs, render)

    @errors(
        {
            409: "The namespace is taken on this backend (already_exists) or a deleted "
            "memory's records in it are still being purged (namespace_purging)."
        }
    )
    @extend_schema(
        summary="Create a memory",
        request=oa.MemoryCreate,
        parameters=[ETAG],
        responses={201: oa.CatalogMemory},
    )
    def post(self, request: Request) -> Response:
        data = body(request, memories.create_fields(), required={"name"})
        return _one(memories.create_memory(self.principal, data), status=201)


class MemoryDetailView(ApiView):
    permission_classes = [ReadOrWrite]

    @extend_schema(summary="Get a memory", parameters=[ETAG], responses={200: oa.CatalogMemory})
    def get(self, request: Request, memory_id: str) -> Response:
        return _one(memories.get_memory(self.principal, memory_id))

    @extend_schema(
        summary="Change a memory (If-Match)",
        request=oa.MemoryChange,
        parameters=[IF_MATCH, ETAG],
        responses={200: oa.CatalogMemory},
    )
    def patch(self, request: Request, memory_id: str) -> Response:
        data = body(request, memories.PATCH_FIELDS | memories.FIXED_FIELDS)
        memory = memories.update_memory(self.principal, memory_id, data, if_match(request))
        return _one(memory)

    @extend_schema(
        summary="Delete a memory (If-Match)", parameters=[IF_MATCH], responses={204: None}
    )
    def delete(self, request: Request, memory_id: str) -> Response:
        memories.delete_memory(self.principal, memory_id, if_match(request))
        return Response(status=204)
