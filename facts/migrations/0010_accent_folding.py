"""Refold every stored fact's search text: ``search.fold`` now drops accents (issue 18).

It runs the ``rebuild_search`` service (``facts.services.rebuild``): batches of short
transactions, not one transaction over the whole table, so writers keep working while it
runs (hence ``atomic = False``; a stopped run is finished by rerunning it, or by
``manage.py rebuild_search``). The facts triggers move the term statistics with each
changed row, so they stay exact. Backwards it refolds too: the search text is always
whatever the installed ``fold`` makes of the text, and nothing in the schema changes.
"""

from django.db import migrations


def refold(apps, schema_editor) -> None:
    # The current model and fold on purpose: the search text must match what queries fold to.
    from facts.services.rebuild import refold_all

    for _ in refold_all():
        pass


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("facts", "0009_fact_author")]

    operations = [migrations.RunPython(refold, refold, elidable=True)]
