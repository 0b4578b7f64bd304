"""Template tags of the panel."""

from __future__ import annotations

from django import template
from django.core.paginator import Page

register = template.Library()


@register.inclusion_tag("panel/_pager.html", takes_context=True)
def pager(context, page: Page, one: str, many: str, newest_first: bool = True) -> dict:
    """Links to the pages before and after, keeping the list's other query parameters."""
    query = context["request"].GET.copy()
    query.pop("page", None)
    kept = query.urlencode()
    return {
        "page": page,
        "noun": one if page.paginator.count == 1 else many,
        "prefix": f"?{kept}&page=" if kept else "?page=",
        "back": "← Newer" if newest_first else "← Previous",
        "on": "Older →" if newest_first else "Next →",
    }
