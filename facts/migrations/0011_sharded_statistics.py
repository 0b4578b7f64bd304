"""Split each memory's fact counter and term statistics into shards (issue 18).

Before this, every write to a memory locked its one counter row and the term rows of its
common words until it committed, so writers of one busy agent queued one behind another.
Now each memory has ``facts.shards.SHARDS`` counter rows; a writing transaction takes one
that no one else holds (``SKIP LOCKED``, lowest first, so a quiet memory keeps using shard
0) and adds its term counts to that shard's rows. Readers sum over the shards, so the
statistics stay exact; a shard's row may go negative (a fact counted in one shard, deleted
in another), which only the sum means anything for.

``facts.shard``, a transaction-local setting, names the shard a transaction holds: the
triggers take one and set it when it is not set (bulk SQL too), the write services read it.
Backwards, the shards are summed into one row again.
"""

import importlib

from django.db import migrations, models

SHARDS = 8  # facts.shards.SHARDS at the time of this migration

_TERMS_OF = """
SELECT agent_id, scope, owner, unnest(tsvector_to_array(search_vector)) AS term, sign
FROM {rows}
UNION ALL SELECT agent_id, scope, owner, '', sign FROM {rows}
"""

# The shard: the transaction's (facts.shard) or, the first time, the lowest one of the first
# memory changed that no other transaction holds; when all are held, wait for one (a bulk
# load into a memory without counter rows writes in shard 0).
_FUNCTION = """
CREATE OR REPLACE FUNCTION facts_count_terms_{name}() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    s smallint := nullif(current_setting('facts.shard', true), '')::smallint;
    first_agent text;
    first_scope text;
BEGIN
    IF s IS NULL THEN
        SELECT agent_id, scope INTO first_agent, first_scope FROM ({changed}) c
        ORDER BY agent_id, scope LIMIT 1;
        SELECT q.shard INTO s FROM facts_factquota q
        WHERE q.agent_id = first_agent AND q.scope = first_scope
        ORDER BY q.shard FOR NO KEY UPDATE SKIP LOCKED LIMIT 1;
        IF s IS NULL THEN  -- every shard busy: wait for one; no counter rows yet: shard 0
            PERFORM 1 FROM facts_factquota q
            WHERE q.agent_id = first_agent AND q.scope = first_scope;
            s := CASE WHEN FOUND THEN txid_current() % {shards} ELSE 0 END;
        END IF;
        PERFORM set_config('facts.shard', s::text, true);
    END IF;
    PERFORM 1 FROM facts_factquota q
    WHERE (q.agent_id, q.scope) IN (SELECT DISTINCT agent_id, scope FROM ({changed}) c)
      AND q.shard = s
    ORDER BY q.id FOR NO KEY UPDATE;
    INSERT INTO facts_factterm AS t (agent_id, scope, owner, term, shard, facts)
    SELECT agent_id, scope, owner, term, s, sum(sign) FROM ({terms}) d
    GROUP BY agent_id, scope, term, owner HAVING sum(sign) <> 0
    ORDER BY agent_id, scope, term, owner
    ON CONFLICT (agent_id, scope, term, owner, shard)
    DO UPDATE SET facts = t.facts + excluded.facts;
    {cleanup}
    RETURN NULL;
END $$;
"""

# Only this shard's rows of the terms the old rows held can have reached zero.
_CLEANUP = """
    DELETE FROM facts_factterm t USING ({old_terms}) d
    WHERE t.agent_id = d.agent_id AND t.scope = d.scope AND t.owner = d.owner
      AND t.term = d.term AND t.shard = s AND t.facts = 0;
"""

_NEW = "(SELECT agent_id, scope, coalesce(owner_id, '') AS owner, search_vector, 1 AS sign FROM new_rows)"  # noqa: E501
_OLD = "(SELECT agent_id, scope, coalesce(owner_id, '') AS owner, search_vector, -1 AS sign FROM old_rows)"  # noqa: E501
_CHANGED = {"insert": (_NEW, ""), "update": (f"{_NEW} UNION ALL {_OLD}", _CLEANUP),
            "delete": (_OLD, _CLEANUP)}  # fmt: skip


def _function(name: str) -> str:
    changed, cleanup = _CHANGED[name]
    return _FUNCTION.format(
        name=name,
        shards=SHARDS,
        changed=changed,
        terms=_TERMS_OF.format(rows=f"({changed}) AS c"),
        cleanup=cleanup.format(old_terms=_TERMS_OF.format(rows=f"{_OLD} AS c")),
    )


FORWARD = [
    "ALTER TABLE facts_factquota ADD COLUMN shard smallint NOT NULL DEFAULT 0",
    "ALTER TABLE facts_factquota DROP CONSTRAINT fact_quota_unique",
    "ALTER TABLE facts_factquota ADD CONSTRAINT fact_quota_unique UNIQUE (agent_id, scope, shard)",
    f"""INSERT INTO facts_factquota (workspace_id, agent_id, scope, shard, count)
    SELECT q.workspace_id, q.agent_id, q.scope, s, 0
    FROM facts_factquota q CROSS JOIN generate_series(1, {SHARDS - 1}) AS s""",  # noqa: S608
    "ALTER TABLE facts_factterm ADD COLUMN shard smallint NOT NULL DEFAULT 0",
    "ALTER TABLE facts_factterm DROP CONSTRAINT facts_factterm_pkey",
    # Shard last: a word's prefix is still one range of the key, summed over what it holds.
    "ALTER TABLE facts_factterm ADD PRIMARY KEY (agent_id, scope, term, owner, shard)",
    *[_function(name) for name in _CHANGED],
]


def _backward() -> list[str]:
    by_owner = importlib.import_module("facts.migrations.0006_term_statistics_by_owner")
    return [
        *[by_owner._function(name) for name in _CHANGED],
        """CREATE TEMPORARY TABLE facts_summed ON COMMIT DROP AS
        SELECT agent_id, scope, term, owner, sum(facts)::int AS facts FROM facts_factterm
        GROUP BY agent_id, scope, term, owner HAVING sum(facts) <> 0""",
        "DELETE FROM facts_factterm",
        "ALTER TABLE facts_factterm DROP CONSTRAINT facts_factterm_pkey",
        "ALTER TABLE facts_factterm DROP COLUMN shard",
        "ALTER TABLE facts_factterm ADD PRIMARY KEY (agent_id, scope, term, owner)",
        """INSERT INTO facts_factterm (agent_id, scope, term, owner, facts)
        SELECT agent_id, scope, term, owner, facts FROM facts_summed""",
        """UPDATE facts_factquota q SET count = s.count FROM (
            SELECT agent_id, scope, sum(count)::int AS count FROM facts_factquota
            GROUP BY agent_id, scope) s
        WHERE q.agent_id = s.agent_id AND q.scope = s.scope AND q.shard = 0""",
        "DELETE FROM facts_factquota WHERE shard <> 0",
        "ALTER TABLE facts_factquota DROP CONSTRAINT fact_quota_unique",
        "ALTER TABLE facts_factquota DROP COLUMN shard",
        "ALTER TABLE facts_factquota ADD CONSTRAINT fact_quota_unique UNIQUE (agent_id, scope)",
    ]


class Migration(migrations.Migration):
    dependencies = [("facts", "0010_accent_folding")]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunSQL(FORWARD, reverse_sql=_backward())],
            state_operations=[
                migrations.RemoveConstraint(model_name="factquota", name="fact_quota_unique"),
                migrations.AddField(
                    model_name="factquota",
                    name="shard",
                    field=models.SmallIntegerField(default=0),
                ),
                migrations.AddConstraint(
                    model_name="factquota",
                    constraint=models.UniqueConstraint(
                        fields=("agent", "scope", "shard"), name="fact_quota_unique"
                    ),
                ),
                migrations.DeleteModel("FactTerm"),
                migrations.CreateModel(
                    name="FactTerm",
                    fields=[
                        (
                            "pk",
                            models.CompositePrimaryKey(
                                "agent",
                                "scope",
                                "term",
                                "owner",
                                "shard",
                                blank=True,
                                editable=False,
                                primary_key=True,
                                serialize=False,
                            ),
                        ),
                        ("scope", models.CharField(blank=True, default="", max_length=48)),
                        ("owner", models.CharField(blank=True, default="", max_length=48)),
                        ("term", models.TextField(db_collation="C")),
                        ("shard", models.SmallIntegerField(default=0)),
                        ("facts", models.IntegerField()),
                        (
                            "agent",
                            models.ForeignKey(
                                db_constraint=False,
                                db_index=False,
                                on_delete=models.deletion.DO_NOTHING,
                                related_name="+",
                                to="memoryhub.agent",
                            ),
                        ),
                    ],
                ),
            ],
        ),
    ]
