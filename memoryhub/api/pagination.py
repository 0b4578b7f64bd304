import re

from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request

from memoryhub.errors import ApiError

_DIGITS = re.compile(r"[0-9]+")
# The largest offset any list takes (an offset past the end answers an empty page).
MAX_OFFSET = 999_999_999


def int_param(request: Request, name: str, default: int, low: int, high: int) -> int:
    """A whole-number query parameter within [low, high]; 422 otherwise."""
    raw = request.query_params.get(name)
    if raw is None:
        return default
    # ASCII digits only: str.isdigit() also accepts "²", which int() refuses. Twenty digits
    # are more than any bound here and keep int() from reading a huge number.
    if not _DIGITS.fullmatch(raw) or len(raw) > 20 or not low <= int(raw) <= high:
        raise ApiError(422, f"{name} must be a whole number from {low} to {high}")
    return int(raw)


class Pagination(LimitOffsetPagination):
    """``?limit=&offset=`` with ``{count, next, previous, results}``; limit 1-200."""

    default_limit = 50
    max_limit = 200
    max_offset = MAX_OFFSET

    def get_limit(self, request: Request) -> int:
        return int_param(request, self.limit_query_param, self.default_limit, 1, self.max_limit)

    def get_offset(self, request: Request) -> int:
        return int_param(request, self.offset_query_param, 0, 0, self.max_offset)
