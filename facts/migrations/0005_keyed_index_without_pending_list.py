"""Write ``fact_memory_terms_gin`` straight into the index, without GIN's pending list.

With the pending list, every search scans the entries written since the last vacuum one
by one: after a few hundred writes a rare-word query took several times longer. Writing
directly costs a write about 0.1 ms more (bench/bench_search.py).
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("facts", "0004_term_triggers")]

    operations = [
        migrations.RunSQL(
            "ALTER INDEX fact_memory_terms_gin SET (fastupdate = off)",
            reverse_sql="ALTER INDEX fact_memory_terms_gin RESET (fastupdate)",
        )
    ]
