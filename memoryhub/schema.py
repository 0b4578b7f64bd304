"""OpenAPI details drf-spectacular cannot guess: our two credentials, list operation ids,
enums named for what they hold."""

from __future__ import annotations

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema
from drf_spectacular.utils import OpenApiParameter, extend_schema_field, inline_serializer
from rest_framework import serializers

from memoryhub.api.pagination import Pagination


class ApiKeyScheme(OpenApiAuthenticationExtension):
    target_class = "memoryhub.auth.ApiKeyAuthentication"
    name = "apiKey"

    def get_security_definition(self, auto_schema) -> dict:
        return {"type": "http", "scheme": "bearer", "description": "A workspace API key"}


class RunTokenScheme(OpenApiAuthenticationExtension):
    target_class = "memoryhub.auth.RunTokenAuthentication"
    name = "runToken"

    def get_security_definition(self, auto_schema) -> dict:
        return {
            "type": "apiKey",
            "in": "header",
            "name": "x-agentos-run-token",
            "description": "The token a run got when it was accepted",
        }


class AutoSchema(SpectacularAutoSchema):
    def get_operation_id(self) -> str:
        # Plain APIViews are all "retrieve"; a GET on a collection lists.
        operation_id = super().get_operation_id()
        if self.method == "GET" and not self.path.rstrip("/").endswith("}"):
            operation_id = operation_id.replace("_retrieve", "_list")
        return operation_id


def named_enum(name: str, choices) -> type[serializers.ChoiceField]:
    """A choice field whose choices are the enum component ``name``.

    A named component keeps drf-spectacular from naming enums after field names, which
    collide across apps (``status``, ``type``, ``kind``...).
    """

    @extend_schema_field({"type": "string", "enum": list(choices)}, component_name=name)
    class NamedEnum(serializers.ChoiceField):
        def __init__(self, **kwargs) -> None:
            super().__init__(list(choices), **kwargs)

    return NamedEnum


# --- shared by every app's openapi.py --------------------------------------------------------

PAGE_PARAMETERS = [
    OpenApiParameter(
        "limit",
        {"type": "integer", "minimum": 1, "maximum": Pagination.max_limit},
        default=Pagination.default_limit,
        description="Page size.",
    ),
    OpenApiParameter(
        "offset", {"type": "integer", "minimum": 0}, default=0, description="Items to skip."
    ),
]

IF_MATCH = OpenApiParameter(
    "If-Match",
    str,
    OpenApiParameter.HEADER,
    required=True,
    description="The object's current ETag; 428 without it, 412 when stale.",
)

ETAG = OpenApiParameter(
    "ETag",
    str,
    OpenApiParameter.HEADER,
    response=True,
    description="The object's current ETag (the body's etag), for If-Match.",
)


def page_of(name: str, item: type[serializers.Serializer]) -> serializers.Serializer:
    """The ``{count, next, previous, results}`` page of a list operation."""
    return inline_serializer(
        name=name,
        fields={
            "count": serializers.IntegerField(help_text="Items in the whole list."),
            "next": serializers.URLField(allow_null=True, help_text="The next page."),
            "previous": serializers.URLField(allow_null=True, help_text="The previous page."),
            "results": item(many=True),
        },
    )
