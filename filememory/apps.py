from django.apps import AppConfig


class FilememoryConfig(AppConfig):
    name = "filememory"

    def ready(self) -> None:
        from filememory.kind import FILE_KIND
        from memoryhub.catalog import register_kind

        register_kind(FILE_KIND)
