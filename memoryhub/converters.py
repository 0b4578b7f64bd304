"""The ``mhid`` URL converter: malformed ids never reach a query; they are 404 like unknown
ones."""

from django.urls import register_converter

from memoryhub.ids import ID_PATTERN


class PublicIdConverter:
    regex = ID_PATTERN

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


# Registered once, when the first URL module that uses it imports this one (the kernel's
# memoryhub.api.urls, which hub.urls includes before the apps' URLs).
register_converter(PublicIdConverter, "mhid")
