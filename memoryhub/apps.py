from django.apps import AppConfig
from django.conf import settings
from django.db.backends.signals import connection_created


def _session_settings(sender, connection, **kwargs) -> None:
    """SETs on each new connection, not a startup ``options`` parameter, which poolers
    such as PgBouncer refuse."""
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        if not settings.MEMORYHUB_DB_JIT:
            cursor.execute("SET jit = off")
        if not settings.MEMORYHUB_DB_PARALLEL:
            cursor.execute("SET max_parallel_workers_per_gather = 0")


class MemoryhubConfig(AppConfig):
    name = "memoryhub"
    verbose_name = "memoryhub"

    def ready(self) -> None:
        from memoryhub import schema  # noqa: F401 - registers the OpenAPI auth schemes

        connection_created.connect(_session_settings, dispatch_uid="memoryhub_session")
