"""New facts get random 15-digit ids instead of the global identity sequence.

The identity goes (existing rows keep their small ids) and the column defaults to
``facts_new_id()``: 60 random bits of ``gen_random_uuid()`` (the server's strong random, not
``random()``, whose state a tenant could infer from its own ids), mapped to 10**14 ..
10**15 - 1 like ``facts.models.new_fact_id``. The ORM draws its ids in Python; this default
serves rows inserted in SQL. Reversing brings the identity back, numbering after the
largest id (Django's identity would start at 1, among the existing ids).
"""

from django.db import migrations, models

import facts.models

NEW_ID = """
CREATE FUNCTION facts_new_id() RETURNS bigint LANGUAGE sql VOLATILE AS $$
    -- Hex digits 1-12 and 14-16 of a v4 UUID (13 is its version): 60 random bits.
    SELECT 100000000000000 + ('x' || substr(u, 1, 12) || substr(u, 14, 3))::bit(60)::bigint
        % 900000000000000
    FROM (SELECT replace(gen_random_uuid()::text, '-', '') AS u) AS uuid
$$;
"""
# Runs after the identity is back (operations are reversed last to first).
AFTER_LARGEST = """
SELECT setval(pg_get_serial_sequence('facts_fact', 'id'), coalesce(max(id), 0) + 1, false)
FROM facts_fact;
"""


class Migration(migrations.Migration):
    dependencies = [("facts", "0007_owner_newest_index")]

    operations = [
        migrations.RunSQL(NEW_ID, reverse_sql="DROP FUNCTION facts_new_id();"),
        migrations.RunSQL(migrations.RunSQL.noop, reverse_sql=AFTER_LARGEST),
        migrations.AlterField(
            model_name="fact",
            name="id",
            field=models.BigIntegerField(
                db_default=facts.models.NewFactId(),
                default=facts.models.new_fact_id,
                primary_key=True,
                serialize=False,
            ),
        ),
    ]
