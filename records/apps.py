from django.apps import AppConfig
from django.core import checks


class RecordsConfig(AppConfig):
    name = "records"
    verbose_name = "record memories"

    def ready(self) -> None:
        from memoryhub.catalog import register_kind
        from memoryhub.crypto import check_key
        from records.kind import RECORD_KIND

        register_kind(RECORD_KIND)
        # Registers the tasks in every process, so services can send them by name (they
        # never import the tasks module, which imports them) and eager mode runs them.
        import records.tasks  # noqa: F401

        # Provider credentials are the only secrets encrypted with this key.
        checks.register(check_key, checks.Tags.security)
