"""/api/v1/memories: the catalog of file and record memories."""

from __future__ import annotations

from collections.abc import Sequence

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from memoryhub.api import serializers as s
from memoryhub.api.base import ApiView, if_match, paginated, with_etag
from memoryhub.api.filters import MemoryFilter, memory_parameters
from memoryhub.api.representations import iso
from memoryhub.etags import etag_for
from memoryhub.filters import filter_rows
from memoryhub.models import Memory
from memoryhub.permissions import ReadOrWrite
from memoryhub.rules import parse
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
        parameters=[*memory_parameters(), *PAGE_PARAMETERS],
        responses={200: page_of("CatalogMemoryPage", s.CatalogMemory)},
    )
    def get(self, request: Request) -> Response:
        qs = filter_rows(MemoryFilter, request, memories.list_memories(self.principal))

        def render(page: Sequence[Memory]) -> list:
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
        description="A record type needs provider_id naming an enabled memory provider of"
        " that type (422; disabled: 422 disabled); a postgres memory refuses provider_id and"
        " namespace, a record memory always_load (422). always_load paths follow the file"
        " path rules, each once; namespace is printable, without whitespace or *, not"
        " a13n-..., and free on its backend (409).",
        request=s.MemoryCreate,
        parameters=[ETAG],
        responses={201: s.CatalogMemory},
    )
    def post(self, request: Request) -> Response:
        memory = memories.create(self.principal, **parse(s.MemoryCreate, request.data))
        return _one(memory, status=201)


class MemoryDetailView(ApiView):
    permission_classes = [ReadOrWrite]

    @extend_schema(summary="Get a memory", parameters=[ETAG], responses={200: s.CatalogMemory})
    def get(self, request: Request, memory_id: str) -> Response:
        return _one(memories.get_memory(self.principal, memory_id))

    @extend_schema(
        summary="Change a memory (If-Match)",
        description="type, provider_id and namespace never change (422). always_load does"
        " not apply to a record memory (422); a file memory's paths follow the file path"
        " rules, each once.",
        request=s.MemoryChange,
        parameters=[IF_MATCH, ETAG],
        responses={200: s.CatalogMemory},
    )
    def patch(self, request: Request, memory_id: str) -> Response:
        changes = parse(s.MemoryChange, request.data)
        return _one(memories.update(self.principal, memory_id, if_match(request), **changes))

    @extend_schema(
        summary="Delete a memory (If-Match)", parameters=[IF_MATCH], responses={204: None}
    )
    def delete(self, request: Request, memory_id: str) -> Response:
        memories.delete_memory(self.principal, memory_id, if_match(request))
        return Response(status=204)
