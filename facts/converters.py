"""The ``factid`` URL converter: ``m_<digits>``; anything else is a 404 before any query."""

from django.urls import register_converter


class FactIdConverter:
    regex = r"m_[0-9]{1,18}"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


# Registered once, when the first of facts' URL modules imports this one.
register_converter(FactIdConverter, "factid")
