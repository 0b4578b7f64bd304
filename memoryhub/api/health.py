"""``GET /healthz``: the database and the broker answer."""

from __future__ import annotations

from django.db import connection
from django.http import HttpRequest, JsonResponse


def _database() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return "ok"


def _broker() -> str:
    from memoryhub.celery import app

    with app.connection_for_write() as conn:
        conn.ensure_connection(max_retries=1, timeout=2)
    return "ok"


def healthz(request: HttpRequest) -> JsonResponse:
    checks = {}
    for name, check in (("database", _database), ("broker", _broker)):
        try:
            checks[name] = check()
        except Exception as exc:  # noqa: BLE001 - any failure means unhealthy
            checks[name] = f"error: {type(exc).__name__}"
    healthy = all(value == "ok" for value in checks.values())
    return JsonResponse(
        {"status": "ok" if healthy else "error", "checks": checks}, status=200 if healthy else 503
    )
