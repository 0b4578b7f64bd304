"""/api/v1/memory-providers and /api/v1/memories/{id}/records: thin views over the services."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.utils.urls import remove_query_param, replace_query_param

from memoryhub.api.base import ApiView, body, if_match, paginated, with_etag
from memoryhub.api.pagination import int_param
from memoryhub.api.representations import iso
from memoryhub.etags import etag_for
from memoryhub.models import MemoryProvider
from memoryhub.permissions import CanRead, ReadOrRun, ReadOrWrite
from memoryhub.schema import ETAG, IF_MATCH, PAGE_PARAMETERS, errors, page_of
from records import openapi as doc
from records.backends import Page
from records.services import providers, records

PROVIDER_FIELDS = {"type", "name", "config", "credential", "enabled"}
PROVIDER_PATCH_FIELDS = PROVIDER_FIELDS - {"type"}

UNAVAILABLE = {
    503: "The backend did not answer, or refused the provider's key (provider_auth): "
    "dependency names it."
}
DISABLED = "The memory's provider is disabled (disabled)."
DISABLED_OR_INVALID = DISABLED + " Or a parameter or body field is invalid."
WRITE_CONFLICT = {
    409: "The backend did not confirm the write (write_unconfirmed; never retried), or "
    "dropped an exact repeat (already_exists, duplicate_record)."
}
UNCONFIRMED = {409: "The backend did not confirm the write (write_unconfirmed; never retried)."}


def provider_json(provider: MemoryProvider) -> dict:
    """A provider as the API shows it: never its credential, only whether it has one."""
    return {
        "id": provider.id,
        "type": provider.type,
        "name": provider.name,
        "config": provider.config,
        "enabled": provider.enabled,
        "has_credential": bool(provider.credential_encrypted),
        "etag": etag_for(provider.version),
        "created_at": iso(provider.created_at),
        "updated_at": iso(provider.updated_at),
    }


class ProviderListView(ApiView):
    permission_classes = [ReadOrWrite]

    @extend_schema(
        summary="List the workspace's memory providers",
        operation_id="api_v1_memory_providers_list",
        parameters=PAGE_PARAMETERS,
        responses={200: page_of("MemoryProviderPage", doc.MemoryProviderSerializer)},
    )
    def get(self, request: Request) -> Response:
        rows = providers.list_providers(self.principal)
        return paginated(self, rows, lambda page: [provider_json(p) for p in page])

    @extend_schema(
        summary="Add a memory provider",
        parameters=[ETAG],
        request=doc.MemoryProviderCreateSerializer,
        responses={201: doc.MemoryProviderSerializer},
    )
    def post(self, request: Request) -> Response:
        data = body(request, PROVIDER_FIELDS, required={"type", "name"})
        provider = providers.create_provider(self.principal, data)
        return with_etag(provider_json(provider), provider.version, status=201)


class ProviderDetailView(ApiView):
    permission_classes = [ReadOrWrite]

    @extend_schema(
        summary="Get a memory provider",
        parameters=[ETAG],
        responses={200: doc.MemoryProviderSerializer},
    )
    def get(self, request: Request, provider_id: str) -> Response:
        provider = providers.get_provider(self.principal, provider_id)
        return with_etag(provider_json(provider), provider.version)

    @errors(
        {
            409: "The new base_url moves a namespace of this provider onto a backend where "
            "it is taken (already_exists) or being purged (namespace_purging)."
        }
    )
    @extend_schema(
        summary="Change a memory provider (If-Match)",
        parameters=[IF_MATCH, ETAG],
        request=doc.MemoryProviderChangeSerializer,
        responses={200: doc.MemoryProviderSerializer},
    )
    def patch(self, request: Request, provider_id: str) -> Response:
        data = body(request, PROVIDER_PATCH_FIELDS)
        provider = providers.update_provider(self.principal, provider_id, data, if_match(request))
        return with_etag(provider_json(provider), provider.version)

    @errors(
        {
            409: "Record memories use the provider (provider_in_use), or purges of deleted "
            "ones still need it (purge_pending)."
        }
    )
    @extend_schema(
        summary="Delete a memory provider (If-Match)",
        parameters=[IF_MATCH],
        responses={204: None},
    )
    def delete(self, request: Request, provider_id: str) -> Response:
        providers.delete_provider(self.principal, provider_id, if_match(request))
        return Response(status=204)


class ProviderTestView(ApiView):
    permission_classes = [ReadOrWrite]

    @errors(UNAVAILABLE)
    @extend_schema(
        summary="Test a memory provider's address and key",
        request=None,
        responses={200: doc.MemoryProviderTestSerializer},
    )
    def post(self, request: Request, provider_id: str) -> Response:
        body(request, set())
        return Response(providers.test_provider(self.principal, provider_id))


def _page_json(request: Request, page: Page, limit: int, offset: int) -> dict:
    url = request.build_absolute_uri()
    next_url = previous_url = None
    if offset + limit < page.count:
        next_url = replace_query_param(
            replace_query_param(url, "limit", limit), "offset", offset + limit
        )
    if offset > 0:
        previous_url = replace_query_param(url, "limit", limit)
        previous_url = (
            remove_query_param(previous_url, "offset")
            if offset - limit <= 0
            else replace_query_param(previous_url, "offset", offset - limit)
        )
    return {
        "count": page.count,
        "next": next_url,
        "previous": previous_url,
        "results": [r.as_json() for r in page.records],
    }


class RecordListView(ApiView):
    permission_classes = [ReadOrRun]

    @errors(UNAVAILABLE, {422: DISABLED_OR_INVALID})
    @extend_schema(
        summary="List a record memory's records (?limit=&offset=)",
        operation_id="api_v1_memories_records_list",
        parameters=[doc.RECORD_LIMIT, doc.RECORD_OFFSET],
        responses={200: doc.MemoryRecordPageSerializer},
    )
    def get(self, request: Request, memory_id: str) -> Response:
        limit = int_param(request, "limit", records.DEFAULT_LIST_LIMIT, 1, records.MAX_LIST_LIMIT)
        offset = int_param(request, "offset", 0, 0, records.MAX_LIST_OFFSET)
        page = records.list_records(self.principal, memory_id, limit=limit, offset=offset)
        return Response(_page_json(request, page, limit, offset))

    @errors(UNAVAILABLE, WRITE_CONFLICT, {422: DISABLED_OR_INVALID})
    @extend_schema(
        summary="Add a record",
        request=doc.MemoryRecordWriteSerializer,
        responses={201: doc.MemoryRecordSerializer},
    )
    def post(self, request: Request, memory_id: str) -> Response:
        data = body(request, {"text", "metadata"}, required={"text"})
        record = records.add_record(self.principal, memory_id, data["text"], data.get("metadata"))
        return Response(record.as_json(), status=201)


class RecordSearchView(ApiView):
    # Searching changes nothing: it needs read, although it is a POST.
    permission_classes = [CanRead]

    @errors(UNAVAILABLE, {422: DISABLED_OR_INVALID})
    @extend_schema(
        summary="Search a record memory",
        request=doc.MemoryRecordSearchSerializer,
        responses={200: doc.MemoryRecordSearchResultSerializer},
    )
    def post(self, request: Request, memory_id: str) -> Response:
        data = body(request, {"query", "k"}, required={"query"})
        found = records.search_records(self.principal, memory_id, data["query"], data.get("k"))
        return Response({"results": [r.as_json() for r in found]})


class RecordDetailView(ApiView):
    permission_classes = [ReadOrRun]

    @errors(UNAVAILABLE, {422: DISABLED})
    @extend_schema(
        summary="Get a record",
        parameters=[doc.RECORD_ID],
        responses={200: doc.MemoryRecordSerializer},
    )
    def get(self, request: Request, memory_id: str, record_id: str) -> Response:
        record = records.get_record(self.principal, memory_id, record_id)
        return Response(record.as_json())

    @errors(UNAVAILABLE, UNCONFIRMED, {422: DISABLED_OR_INVALID})
    @extend_schema(
        summary="Change a record (last write wins)",
        description="Give text, metadata or both.",
        parameters=[doc.RECORD_ID],
        request=doc.MemoryRecordChangeSerializer,
        responses={200: doc.MemoryRecordSerializer},
    )
    def patch(self, request: Request, memory_id: str, record_id: str) -> Response:
        data = body(request, {"text", "metadata"})
        record = records.update_record(self.principal, memory_id, record_id, data)
        return Response(record.as_json())

    @errors(UNAVAILABLE, UNCONFIRMED, {422: DISABLED})
    @extend_schema(summary="Delete a record", parameters=[doc.RECORD_ID], responses={204: None})
    def delete(self, request: Request, memory_id: str, record_id: str) -> Response:
        records.delete_record(self.principal, memory_id, record_id)
        return Response(status=204)
