from typing import Any

from django.apps import AppConfig
from django.conf import settings
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.signals import connection_created


def _session_settings(sender: Any, connection: BaseDatabaseWrapper, **kwargs: Any) -> None:
    """SETs on each new connection, not a startup ``options`` parameter, which poolers
    such as PgBouncer refuse."""
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        if not settings.MEMORYHUB_DB_JIT:
            cursor.execute("SET jit = off")
        if not settings.MEMORYHUB_DB_PARALLEL:
            cursor.execute("SET max_parallel_workers_per_gather = 0")
        if connection.connection.prepare_threshold is not None:
            # Prepared statements heed it: memoryhub.prepared's and those of the triggers'
            # PL/pgSQL (the ORM's queries are not prepared). Their plans do not depend on
            # their values, so each is planned once per connection instead of at every
            # execution: 0.4-0.6 ms of a 5 ms fact search.
            cursor.execute("SET plan_cache_mode = force_generic_plan")


class MemoryhubConfig(AppConfig):
    name = "memoryhub"
    verbose_name = "memoryhub"

    def ready(self) -> None:
        from memoryhub import schema  # noqa: F401 - registers the OpenAPI auth schemes

        connection_created.connect(_session_settings, dispatch_uid="memoryhub_session")
