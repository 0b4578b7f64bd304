"""/api/v1/memory-providers and /api/v1/memories/{id}/records: thin views over the services."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from memoryhub.api.base import ApiView, if_match, paginated, with_etag
from memoryhub.api.representations import iso
from memoryhub.etags import etag_for
from memoryhub.models import MemoryProvider
from memoryhub.permissions import CanRead, ReadOrRun, ReadOrWrite
from memoryhub.rules import NoBody, parse
from memoryhub.schema import ETAG, IF_MATCH, PAGE_PARAMETERS, errors, page_of
from records import serializers
from records.backends import DEFAULT_BASE_URL
from records.filters import RECORD_PAGE_PARAMETERS, RecordPagination
from records.services import providers, records

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
# The rules across a provider's type and its config and credential (providers.config_for,
# providers.credential_for), which no field of the body can state.
TYPE_RULES = (
    "With the provider's type: config.base_url is required for mem0_oss (mem0_platform "
    f"defaults it to {DEFAULT_BASE_URL}); credential.api_key is required for mem0_platform, "
    "and credential.admin_api_key is mem0_oss's only."
)


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
        responses={200: page_of("MemoryProviderPage", serializers.MemoryProviderSerializer)},
    )
    def get(self, request: Request) -> Response:
        rows = providers.list_providers(self.principal)
        return paginated(self, rows, lambda page: [provider_json(p) for p in page])

    @extend_schema(
        summary="Add a memory provider",
        description=TYPE_RULES,
        parameters=[ETAG],
        request=serializers.MemoryProviderCreateSerializer,
        responses={201: serializers.MemoryProviderSerializer},
    )
    def post(self, request: Request) -> Response:
        values = parse(serializers.MemoryProviderCreateSerializer, request.data)
        provider = providers.add_provider(self.principal, **values)
        return with_etag(provider_json(provider), provider.version, status=201)


class ProviderDetailView(ApiView):
    permission_classes = [ReadOrWrite]

    @extend_schema(
        summary="Get a memory provider",
        parameters=[ETAG],
        responses={200: serializers.MemoryProviderSerializer},
    )
    def get(self, request: Request, provider_id: str) -> Response:
        provider = providers.get_provider(self.principal, provider_id)
        return with_etag(provider_json(provider), provider.version)

    @errors(
        {
            409: "The new base_url moves a namespace of this provider onto a backend where "
            "it is taken (already_exists) or being purged (namespace_purging).",
            422: "A field breaks its rule, or a new base_url on another server comes without "
            "a credential while one is stored (credential_required).",
        }
    )
    @extend_schema(
        summary="Change a memory provider (If-Match)",
        description=TYPE_RULES + " A new base_url on another server (another scheme, host or "
        "port) needs the credential in the same request (null for none, on mem0_oss) while "
        "one is stored: the stored credential is never sent to another address. A new path "
        "on the same server keeps it. A new base_url may not move the provider's namespaces "
        "onto a backend where they are taken or being purged.",
        parameters=[IF_MATCH, ETAG],
        request=serializers.MemoryProviderChangeSerializer,
        responses={200: serializers.MemoryProviderSerializer},
    )
    def patch(self, request: Request, provider_id: str) -> Response:
        changes = parse(serializers.MemoryProviderChangeSerializer, request.data)
        provider = providers.update_provider(
            self.principal, provider_id, if_match(request), **changes
        )
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
        responses={200: serializers.MemoryProviderTestSerializer},
    )
    def post(self, request: Request, provider_id: str) -> Response:
        parse(NoBody, request.data)
        return Response(providers.test_provider(self.principal, provider_id))


class RecordListView(ApiView):
    permission_classes = [ReadOrRun]

    @errors(UNAVAILABLE, {422: DISABLED_OR_INVALID})
    @extend_schema(
        summary="List a record memory's records (?limit=&offset=)",
        operation_id="api_v1_memories_records_list",
        parameters=RECORD_PAGE_PARAMETERS,
        responses={200: serializers.MemoryRecordPageSerializer},
    )
    def get(self, request: Request, memory_id: str) -> Response:
        paginator = RecordPagination()
        limit, offset = paginator.window(request)
        page = records.list_records(self.principal, memory_id, limit=limit, offset=offset)
        return paginator.page(page.count, [r.as_json() for r in page.records])

    @errors(UNAVAILABLE, WRITE_CONFLICT, {422: DISABLED_OR_INVALID})
    @extend_schema(
        summary="Add a record",
        request=serializers.MemoryRecordWriteSerializer,
        responses={201: serializers.MemoryRecordSerializer},
    )
    def post(self, request: Request, memory_id: str) -> Response:
        values = parse(serializers.MemoryRecordWriteSerializer, request.data)
        record = records.add_record(self.principal, memory_id, **values)
        return Response(record.as_json(), status=201)


class RecordSearchView(ApiView):
    # Searching changes nothing: it needs read, although it is a POST.
    permission_classes = [CanRead]

    @errors(UNAVAILABLE, {422: DISABLED_OR_INVALID})
    @extend_schema(
        summary="Search a record memory",
        request=serializers.MemoryRecordSearchSerializer,
        responses={200: serializers.MemoryRecordSearchResultSerializer},
    )
    def post(self, request: Request, memory_id: str) -> Response:
        values = parse(serializers.MemoryRecordSearchSerializer, request.data)
        found = records.search_records(self.principal, memory_id, **values)
        return Response({"results": [r.as_json() for r in found]})


class RecordDetailView(ApiView):
    permission_classes = [ReadOrRun]

    @errors(UNAVAILABLE, {422: DISABLED})
    @extend_schema(
        summary="Get a record",
        parameters=[serializers.RECORD_ID],
        responses={200: serializers.MemoryRecordSerializer},
    )
    def get(self, request: Request, memory_id: str, record_id: str) -> Response:
        record = records.get_record(self.principal, memory_id, record_id)
        return Response(record.as_json())

    @errors(UNAVAILABLE, UNCONFIRMED, {422: DISABLED_OR_INVALID})
    @extend_schema(
        summary="Change a record (last write wins)",
        description="Give text, metadata or both.",
        parameters=[serializers.RECORD_ID],
        request=serializers.MemoryRecordChangeSerializer,
        responses={200: serializers.MemoryRecordSerializer},
    )
    def patch(self, request: Request, memory_id: str, record_id: str) -> Response:
        changes = parse(serializers.MemoryRecordChangeSerializer, request.data)
        record = records.update_record(self.principal, memory_id, record_id, **changes)
        return Response(record.as_json())

    @errors(UNAVAILABLE, UNCONFIRMED, {422: DISABLED})
    @extend_schema(
        summary="Delete a record", parameters=[serializers.RECORD_ID], responses={204: None}
    )
    def delete(self, request: Request, memory_id: str, record_id: str) -> Response:
        records.delete_record(self.principal, memory_id, record_id)
        return Response(status=204)
