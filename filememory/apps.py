from django.apps import AppConfig


class FilememoryConfig(AppConfig):
    name = "filememory"
