import re

from rest_framework.pagination import LimitOffsetPagination

from memoryhub.errors import ApiError

_DIGITS = re.compile(r"[0-9]{1,9}")


def int_param(request, name: str, default: int, low: int, high: int | None = None) -> int:
    """A whole-number query parameter within [low, high]; 422 otherwise."""
    raw = request.query_params.get(name)
    if raw is None:
        return default
    # ASCII digits only: str.isdigit() also accepts "²", which int() refuses.
    if not _DIGITS.fullmatch(raw) or int(raw) < low or (high is not None and int(raw) > high):
        bounds = f"{low}-{high}" if high is not None else f">= {low}"
        raise ApiError(422, f"{name} must be a whole number {bounds}")
    return int(raw)


class Pagination(LimitOffsetPagination):
    """``?limit=&offset=`` with ``{count, next, previous, results}``; limit 1-200."""

    default_limit = 50
    max_limit = 200

    def get_limit(self, request) -> int:
        return int_param(request, self.limit_query_param, self.default_limit, 1, self.max_limit)

    def get_offset(self, request) -> int:
        return int_param(request, self.offset_query_param, 0, 0)
