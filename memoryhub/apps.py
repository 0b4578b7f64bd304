from django.apps import AppConfig
from django.conf import settings
from django.db.backends.signals import connection_created


def _jit_off(sender, connection, **kwargs) -> None:
    """A SET on each new connection, not a startup ``options`` parameter, which poolers
    such as PgBouncer refuse."""
    if connection.vendor == "postgresql" and not settings.MEMORYHUB_DB_JIT:
        with connection.cursor() as cursor:
            cursor.execute("SET jit = off")


class MemoryhubConfig(AppConfig):
    name = "memoryhub"
    verbose_name = "memoryhub"

    def ready(self) -> None:
        from memoryhub import schema  # noqa: F401 - registers the OpenAPI auth schemes

        connection_created.connect(_jit_off, dispatch_uid="memoryhub_jit_off")
