"""What every REST view of memoryhub shares: the principal, pages, ETag answers."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from memoryhub.api.pagination import Pagination
from memoryhub.auth import ApiKeyAuthentication, RunTokenAuthentication
from memoryhub.errors import ApiError
from memoryhub.etags import etag_for
from memoryhub.permissions import principal_of
from memoryhub.principals import Principal


class ApiView(APIView):
    """Authenticated by API key; each view states the permission its service requires."""

    authentication_classes = [ApiKeyAuthentication]

    @property
    def principal(self) -> Principal:
        return principal_of(self.request)


class RunOrKeyView(ApiView):
    """Also accepts a run token (``x-agentos-run-token``)."""

    authentication_classes = [ApiKeyAuthentication, RunTokenAuthentication]


def paginated(view: APIView, rows: Any, render: Callable[[Sequence], list]) -> Response:
    """One page of ``rows`` (``?limit=&offset=``) as ``{count, next, previous, results}``.

    ``render`` gets the page's rows at once, so it can fetch what they need in one query.
    """
    paginator = Pagination()
    page: list[Any] | None = paginator.paginate_queryset(rows, view.request, view)
    assert page is not None  # None only without a limit, and get_limit always gives one
    return paginator.get_paginated_response(render(page))


def with_etag(data: Any, version: int, status: int = 200) -> Response:
    response = Response(data, status=status)
    response["ETag"] = etag_for(version)
    return response


def if_match(request: Request) -> str:
    """The If-Match header a change requires (428 without it)."""
    value: str | None = request.META.get("HTTP_IF_MATCH")
    if value is None:
        raise ApiError(428, "this change needs an If-Match header with the current ETag")
    return value.strip()
