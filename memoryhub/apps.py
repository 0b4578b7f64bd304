from django.apps import AppConfig


class MemoryhubConfig(AppConfig):
    name = "memoryhub"
    verbose_name = "memoryhub"

    def ready(self) -> None:
        from memoryhub import schema  # noqa: F401 - registers the OpenAPI auth schemes
