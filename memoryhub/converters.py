"""URL converters: malformed ids never reach a query; they are 404 like unknown ones."""

from memoryhub.ids import ID_PATTERN


class PublicIdConverter:
    regex = ID_PATTERN

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value
