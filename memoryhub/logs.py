"""Logging filters: what memoryhub's own logs may say about a request."""

from __future__ import annotations

import logging


class RouteNotPath(logging.Filter):
    """Django's request log names the URL pattern instead of the path.

    A path can hold a person's id (``DELETE /api/v1/end-users/<id>``), and erasing the person
    can remove it from the database but never from a log file.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        request = getattr(record, "request", None)
        path = getattr(request, "path", None)
        if path is not None and isinstance(record.args, tuple):
            route = getattr(getattr(request, "resolver_match", None), "route", "")
            shown = route or "an unresolved path"
            record.args = tuple(shown if arg == path else arg for arg in record.args)
        return True


class ClientErrorNoTraceback(logging.Filter):
    """A request's own fault (Django's ``DisallowedHost``: a ``Host`` not in ALLOWED_HOSTS)
    is one warning line: the client gets its 400, the log no traceback of memoryhub's."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.exc_info = None
        record.exc_text = None
        record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True
