"""What crosses the wire between this thread's connection and PostgreSQL."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection
from psycopg import pq


@contextmanager
def round_trips() -> Iterator[list[list[str]]]:
    """The round trips this thread's connection makes to PostgreSQL meanwhile, each as the
    messages it sent (libpq's protocol trace): a turn from sending to receiving is one."""
    found: list[list[str]] = []
    connection.ensure_connection()
    raw = connection.connection.pgconn
    with tempfile.TemporaryFile("w+") as trace:
        raw.trace(trace.fileno())
        raw.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)
        try:
            yield found
        finally:
            raw.untrace()
        trace.seek(0)
        sending = False
        for line in trace.read().splitlines():
            if line[:2] not in ("F\t", "B\t"):
                continue  # a message's text running on past a line break (a query's SQL)
            direction, _, message = line.split("\t", 3)[:3]
            if direction == "F" and not sending:
                found.append([])
            if direction == "F":
                found[-1].append(message)
            sending = direction == "F"
