from rest_framework.pagination import LimitOffsetPagination


class Pagination(LimitOffsetPagination):
    """``?limit=&offset=`` with ``{count, next, previous, results}``; limit 1-200."""

    default_limit = 50
    max_limit = 200
