"""``fact_owner_newest``: a run's newest-first search reads the shared facts and its own
end user's folder as two ranges of it, never through other users' folders.

Built concurrently, so that facts can be written while it is built on a big table.
"""

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("facts", "0006_term_statistics_by_owner"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="fact",
            index=models.Index(
                fields=["agent", "scope", "owner_id", "-updated_at", "-id"],
                name="fact_owner_newest",
            ),
        ),
    ]
