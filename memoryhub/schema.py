"""OpenAPI details drf-spectacular cannot guess: our two credentials, list operation ids,
enums named for what they hold, and the error answers of every operation.

Errors: every operation lists the statuses it can answer besides its success, each with
the one error envelope (the ``Error`` component, see ``memoryhub.errors``). What is
knowable from the operation is added here (credentials, permissions, path and query
parameters, a body, If-Match); a view states the rest with :func:`errors` (409, 503, a
403 its service decides, a 404 without a path parameter...).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema
from drf_spectacular.plumbing import get_doc
from drf_spectacular.utils import OpenApiParameter, extend_schema_field, inline_serializer
from rest_framework import serializers

from memoryhub import permissions
from memoryhub.api.pagination import Pagination


class ApiKeyScheme(OpenApiAuthenticationExtension):
    target_class = "memoryhub.auth.ApiKeyAuthentication"
    name = "apiKey"

    def get_security_definition(self, auto_schema: Any) -> dict:
        return {"type": "http", "scheme": "bearer", "description": "A workspace API key"}


class RunTokenScheme(OpenApiAuthenticationExtension):
    target_class = "memoryhub.auth.RunTokenAuthentication"
    name = "runToken"

    def get_security_definition(self, auto_schema: Any) -> dict:
        return {
            "type": "apiKey",
            "in": "header",
            "name": "x-agentos-run-token",
            "description": "The token a run got when it was accepted",
        }


# --- the error envelope ----------------------------------------------------------------------


class ErrorDetail(serializers.Serializer):
    """What went wrong. Extra fields appear where the status says so."""

    code = serializers.CharField(
        help_text="Follows the status: bad_request, unauthenticated, forbidden, not_found, "
        "not_acceptable, conflict or already_exists, length_required, precondition_failed, "
        "payload_too_large, unsupported_media_type, invalid_argument, precondition_required, "
        "unavailable."
    )
    reason = serializers.CharField(
        required=False, help_text="The rule, where one is documented (memory_full, run_ended...)."
    )
    message = serializers.CharField(help_text="For people; do not parse it.")
    etag = serializers.CharField(required=False, help_text="412: the object's current ETag.")
    current = serializers.JSONField(
        required=False,
        allow_null=True,
        help_text="412 on a file: the file as it is now (without it: null).",
    )
    dependency = serializers.CharField(
        required=False, help_text='503: what did not answer, such as "memory:mem0_oss".'
    )
    provider_id = serializers.CharField(
        required=False,
        help_text="The memory provider concerned (a 503 from it, a 422 when it is disabled).",
    )


class Error(serializers.Serializer):
    """The one shape of every refusal."""

    error = ErrorDetail()


ERROR_DESCRIPTIONS = {
    400: "Malformed request: a body that is not valid JSON (invalid UTF-8, NaN or Infinity, "
    "numbers out of range, nesting too deep), or a NUL character in the URL.",
    401: "No credentials, or an invalid API key or run token; a write with the token of an "
    "ended run (reason run_ended).",
    403: "The credentials lack the permission this needs.",
    404: "No such object in this workspace (malformed ids too).",
    406: "The Accept header does not allow application/json.",
    409: "The change conflicts with the current state (reason says which rule).",
    411: "A chunked body without Content-Length.",
    412: "If-Match names another version: etag is the current one.",
    413: "The body is larger than this operation takes.",
    415: "The body is not application/json.",
    422: "A parameter or a body field is invalid; unknown or missing body fields.",
    428: "This change needs an If-Match header with the current ETag.",
    503: "A backend did not answer: dependency names it.",
}

# What any request can meet: a NUL in the URL (400), no or bad credentials (401), an Accept
# that excludes JSON (406), a chunked body without Content-Length (411).
ALWAYS = (400, 401, 406, 411)
BODY_METHODS = ("POST", "PUT", "PATCH")
ERRORS_ATTRIBUTE = "_memoryhub_errors"


def errors(
    *statuses: int | dict[int, str], drop: Iterable[int] = ()
) -> Callable[[Callable], Callable]:
    """Add error statuses to a view method's documented answers (or ``drop`` some).

    ``@errors(409, 503)`` adds them with the default descriptions; ``@errors({409: "..."})``
    with the operation's own. The statuses the schema finds on its own stay unless dropped.
    """
    added: dict[int, str | None] = {}
    for status in statuses:
        if isinstance(status, dict):
            added.update(status)
        else:
            added[status] = None
    for status in added:
        if status not in ERROR_DESCRIPTIONS:
            raise ValueError(f"no description of the error status {status}")

    def decorate(method: Callable) -> Callable:
        own: tuple[dict[int, str | None], frozenset[int]]
        own = getattr(method, ERRORS_ATTRIBUTE, ({}, frozenset()))
        setattr(method, ERRORS_ATTRIBUTE, ({**own[0], **added}, own[1] | frozenset(drop)))
        return method

    return decorate


def _permission_may_refuse(permission_class: type, method: str) -> bool:
    """Whether this permission class can answer 403 to an API key (every key may read)."""
    if issubclass(permission_class, (permissions.ReadOrWrite, permissions.ReadOrRun)):
        return method not in permissions.SAFE_METHODS
    return getattr(permission_class, "needed", None) not in (None, "read")


def lib_doc_excludes() -> list[type]:
    """Base classes whose docstrings say what the base is, not what a body holds."""
    from drf_spectacular.plumbing import get_lib_doc_excludes

    from memoryhub import rules

    return [*get_lib_doc_excludes(), rules.RequestSerializer, rules.QuerySerializer]


class AutoSchema(SpectacularAutoSchema):
    # drf-spectacular's own override takes no arguments (DRF's base takes path and method).
    def get_description(self) -> str:  # type: ignore[override]
        # The view's own docstring or its method's, never one inherited from a base view
        # (which tells how the base authenticates, not what the operation does).
        method = getattr(self.view, self.method.lower(), None)
        own = self.view.__class__.__dict__.get("__doc__") or ""
        return get_doc(method) or (inspect.cleandoc(own) if own else "")

    def get_operation_id(self) -> str:
        # Plain APIViews are all "retrieve"; a GET on a collection lists.
        operation_id = super().get_operation_id()
        if self.method == "GET" and not self.path.rstrip("/").endswith("}"):
            operation_id = operation_id.replace("_retrieve", "_list")
        return operation_id

    def _map_basic_serializer(self, serializer: Any, direction: str) -> dict[str, Any]:
        schema: dict[str, Any] = super()._map_basic_serializer(serializer, direction)
        # Unknown fields of a body are 422 (memoryhub.rules.RequestSerializer), save in the
        # few objects whose extra keys are read past (accepts_unknown_fields).
        if direction == "request" and not getattr(serializer, "accepts_unknown_fields", False):
            schema["additionalProperties"] = False
        # A serializer may add keywords no field can state, such as {"minProperties": 1}.
        schema.update(getattr(serializer, "schema_extra", None) or {})
        return schema

    def get_operation(
        self, path: str, path_regex: str, path_prefix: str, method: str, registry: Any
    ) -> dict[str, Any] | None:
        operation = super().get_operation(path, path_regex, path_prefix, method, registry)
        if operation is None:
            return None
        error_ref = self.resolve_serializer(Error, "response").ref
        responses = operation["responses"]
        for status, description in self.error_statuses(operation).items():
            responses.setdefault(
                str(status),
                {
                    "description": description,
                    "content": {"application/json": {"schema": error_ref}},
                },
            )
        operation["responses"] = dict(sorted(responses.items()))
        return operation

    def error_statuses(self, operation: dict[str, Any]) -> dict[int, str]:
        """The error statuses of this operation and what each means here."""
        found = set(ALWAYS)
        parameters = operation.get("parameters", [])
        where = {p["in"] for p in parameters}
        if "path" in where:
            found.add(404)
        if "query" in where:
            found.add(422)
        if self.method in BODY_METHODS:
            found |= {413, 415, 422}
        for parameter in parameters:
            if parameter["in"] == "header" and parameter["name"].lower() == "if-match":
                found.add(412)
                if parameter.get("required"):
                    found.add(428)
        if any(
            _permission_may_refuse(p, self.method)
            for p in getattr(self.view, "permission_classes", ())
        ):
            found.add(403)
        handler = getattr(self.view, self.method.lower(), None)
        added, dropped = getattr(handler, ERRORS_ATTRIBUTE, ({}, frozenset()))
        statuses = {s: ERROR_DESCRIPTIONS[s] for s in found}
        if self.method not in BODY_METHODS:  # no body: what is left of each
            statuses[400] = "A NUL character in the URL."
            if 422 in statuses:
                statuses[422] = "A parameter is invalid."
        statuses.update({s: text or ERROR_DESCRIPTIONS[s] for s, text in added.items()})
        for status in dropped:
            statuses.pop(status, None)
        return dict(sorted(statuses.items()))


def named_enum(name: str, choices: Sequence[str]) -> Callable[..., serializers.ChoiceField]:
    """A choice field whose choices are the enum component ``name``.

    A named component keeps drf-spectacular from naming enums after field names, which
    collide across apps (``status``, ``type``, ``kind``...).
    """

    @extend_schema_field({"type": "string", "enum": list(choices)}, component_name=name)
    class NamedEnum(serializers.ChoiceField):
        def __init__(self, **kwargs: Any) -> None:
            super().__init__(list(choices), **kwargs)

    return NamedEnum


# --- shared by every app's serializers.py --------------------------------------------------------

# The "type" of an OpenAI function tool (definitions and calls): one component for both.
FunctionToolType = named_enum("FunctionToolType", ["function"])


def page_parameters(pagination: type[Pagination] = Pagination, items: str = "Items") -> list:
    """The ``?limit=&offset=`` of a list paged by ``pagination``, with its bounds."""
    return [
        OpenApiParameter(
            "limit",
            {"type": "integer", "minimum": 1, "maximum": pagination.max_limit},
            default=pagination.default_limit,
            description="Page size.",
        ),
        OpenApiParameter(
            "offset",
            {"type": "integer", "minimum": 0, "maximum": pagination.max_offset},
            default=0,
            description=f"{items} to skip.",
        ),
    ]


PAGE_PARAMETERS = page_parameters()

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
