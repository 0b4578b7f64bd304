"""``GET /healthz``: the database and the broker answer (else 503), and whether memory
providers failed recently (``degraded``, still 200): each kind says for its own providers
(``MemoryKind.health``; records: records.services.health)."""

from __future__ import annotations

from collections.abc import Callable

from django.db import connection
from django.http import HttpRequest, JsonResponse

from memoryhub.catalog import kinds


def _database() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return "ok"


def _broker() -> str:
    from memoryhub.celery import app

    with app.connection_for_write() as conn:
        conn.ensure_connection(max_retries=1, timeout=2)
    return "ok"


def _memory_providers() -> str:
    """``ok``, or what each kind whose providers failed recently says of them."""
    failing = [said for kind in kinds() if (said := kind.health()) != "ok"]
    return "; ".join(failing) or "ok"


def _run(check: Callable[[], str]) -> str:
    try:
        return check()
    except Exception as exc:  # noqa: BLE001 - any failure means unhealthy
        return f"error: {type(exc).__name__}"


def healthz(request: HttpRequest) -> JsonResponse:
    checks = {"database": _run(_database), "broker": _run(_broker)}
    healthy = all(value == "ok" for value in checks.values())
    if checks["database"] == "ok":
        checks["memory_providers"] = _run(_memory_providers)
    else:
        checks["memory_providers"] = "unknown: the database did not answer"
    status = "error" if not healthy else "ok" if checks["memory_providers"] == "ok" else "degraded"
    return JsonResponse({"status": status, "checks": checks}, status=200 if healthy else 503)
