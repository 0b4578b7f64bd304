"""/api/v1/end-users: the people agents serve, and erasing one."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from memoryhub.api import serializers as s
from memoryhub.api.base import ApiView, paginated
from memoryhub.api.representations import end_user_json
from memoryhub.permissions import ReadOrWrite
from memoryhub.schema import PAGE_PARAMETERS, page_of
from memoryhub.services import end_users


class EndUserListView(ApiView):
    permission_classes = [ReadOrWrite]

    @extend_schema(
        summary="List end users",
        parameters=PAGE_PARAMETERS,
        responses={200: page_of("EndUserPage", s.EndUser)},
    )
    def get(self, request: Request) -> Response:
        rows = end_users.list_end_users(self.principal)
        return paginated(self, rows, lambda page: [end_user_json(u) for u in page])


class EndUserDetailView(ApiView):
    permission_classes = [ReadOrWrite]

    @extend_schema(
        summary="Erase an end user and everything memoryhub keeps about them",
        description="Answers a receipt: what went per kind, and a search afterwards that "
        "finds nothing of the person's (`verified`).",
        responses={200: s.ErasureReceipt},
    )
    def delete(self, request: Request, end_user: str) -> Response:
        receipt = end_users.erase_end_user(self.principal, end_user)
        return Response(receipt.as_dict(), status=200)
