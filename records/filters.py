"""The query parameters of this app's list operations: paging only, no filters.

Memory providers are a queryset, paged by memoryhub's :class:`Pagination`
(``memoryhub.api.base.paginated``). A record memory's records are paged by its backend:
:class:`RecordPagination` is the same class with the records' bounds, reading ``limit`` and
``offset`` (its checks, its messages) and building the same ``{count, next, previous,
results}`` page around what the backend answered.
"""

from __future__ import annotations

from rest_framework.request import Request
from rest_framework.response import Response

from memoryhub.api.pagination import Pagination
from memoryhub.schema import page_parameters
from records.services.records import DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT, MAX_LIST_OFFSET


class RecordPagination(Pagination):
    """``?limit=&offset=`` of a record memory's records: limit 1-200, offset at most 1,000,000."""

    default_limit = DEFAULT_LIST_LIMIT
    max_limit = MAX_LIST_LIMIT
    max_offset = MAX_LIST_OFFSET

    def window(self, request: Request) -> tuple[int, int]:
        """The request's ``(limit, offset)``; 422 for a value out of bounds."""
        self.request = request
        self.limit = self.get_limit(request)
        self.offset = self.get_offset(request)
        return self.limit, self.offset

    def page(self, count: int, results: list) -> Response:
        """The page of :meth:`window`, of ``count`` records in all."""
        self.count = count
        return self.get_paginated_response(results)


RECORD_PAGE_PARAMETERS = page_parameters(RecordPagination, "Records")
