"""Make the facts tables' foreign keys ON DELETE CASCADE in the database.

Django's models say DO_NOTHING, so deleting an agent or a workspace never loads its facts
into Python; PostgreSQL removes them (and their versions and quota) in the same statement.
"""

from django.db import migrations

# (table, column, referenced table)
FOREIGN_KEYS = [
    ("facts_fact", "workspace_id", "memoryhub_workspace"),
    ("facts_fact", "agent_id", "memoryhub_agent"),
    ("facts_factversion", "workspace_id", "memoryhub_workspace"),
    ("facts_factversion", "agent_id", "memoryhub_agent"),
    ("facts_factversion", "fact_id", "facts_fact"),
    ("facts_factquota", "workspace_id", "memoryhub_workspace"),
    ("facts_factquota", "agent_id", "memoryhub_agent"),
]

_RECREATE = """
DO $$
DECLARE name text;
BEGIN
    FOR name IN
        SELECT c.conname FROM pg_constraint c
        JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY (c.conkey)
        WHERE c.contype = 'f' AND c.conrelid = '{table}'::regclass AND a.attname = '{column}'
    LOOP
        EXECUTE format('ALTER TABLE {table} DROP CONSTRAINT %I', name);
    END LOOP;
END $$;
ALTER TABLE {table} ADD CONSTRAINT {table}_{column}_cascade FOREIGN KEY ({column})
    REFERENCES {target} (id) ON DELETE {action} DEFERRABLE INITIALLY DEFERRED;
"""


def _sql(action: str) -> list[str]:
    return [
        _RECREATE.format(table=table, column=column, target=target, action=action)
        for table, column, target in FOREIGN_KEYS
    ]


class Migration(migrations.Migration):
    dependencies = [("facts", "0001_initial")]

    operations = [migrations.RunSQL(_sql("CASCADE"), reverse_sql=_sql("NO ACTION"))]
