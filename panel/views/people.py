"""People (end users): the list with their facts and threads, and erasing one."""

from __future__ import annotations

from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from memoryhub.models import EndUser
from memoryhub.services.end_users import erase_end_user, list_end_users, preview_erasure
from panel.models import Role
from panel.services.access import seat
from panel.services.people import fact_counts, with_thread_counts
from panel.views.base import panel_page

PER_PAGE = 50


@panel_page
def people(request: HttpRequest, workspace_id: str) -> HttpResponse:
    here = seat(request.user, workspace_id)
    rows = with_thread_counts(list_end_users(here.principal))
    page = Paginator(rows, PER_PAGE).get_page(request.GET.get("page"))
    counts = fact_counts(page.object_list)
    listed = [(person, counts.get(person.id, 0)) for person in page.object_list]
    context = {"seat": here, "page": page, "people": listed}
    return render(request, "panel/people/list.html", context)


@panel_page
def erase(request: HttpRequest, workspace_id: str, external_id: str) -> HttpResponse:
    """A page that says exactly what will go; the POST erases and shows a receipt."""
    here = seat(request.user, workspace_id)
    here.require(Role.ADMIN)
    person = EndUser.objects.filter(workspace=here.workspace, external_id=external_id).first()
    if person is None:
        raise Http404("no such person")
    context = {"seat": here, "person": person}
    if request.method != "POST":
        context["going"] = preview_erasure(here.principal, external_id)
        return render(request, "panel/people/erase.html", context)
    context["gone"] = erase_end_user(here.principal, external_id)  # the API's own service
    return render(request, "panel/people/erased.html", context)
