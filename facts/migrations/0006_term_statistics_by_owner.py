"""Term statistics per owner: a run's ranking never depends on other end users' facts.

``facts_factterm`` gains ``owner`` ('' for facts outside users' folders, else the end
user's id) in its primary key, and the triggers of 0004 count by owner. A run weighs words
by the facts it may see (the shared ones and its own user's); staff by all of them. Without
this, a score would reveal how many facts in another user's private folder hold a word.
"""

from django.db import migrations, models

_TERMS_OF = """
SELECT agent_id, scope, owner, unnest(tsvector_to_array(search_vector)) AS term, sign
FROM {rows}
UNION ALL SELECT agent_id, scope, owner, '', sign FROM {rows}
"""

_FUNCTION = """
CREATE OR REPLACE FUNCTION facts_count_terms_{name}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM facts_factquota q
    WHERE (q.agent_id, q.scope) IN (SELECT DISTINCT agent_id, scope FROM ({changed}) c)
    ORDER BY q.id FOR NO KEY UPDATE;
    INSERT INTO facts_factterm AS t (agent_id, scope, owner, term, facts)
    SELECT agent_id, scope, owner, term, sum(sign) FROM ({terms}) d
    GROUP BY agent_id, scope, term, owner HAVING sum(sign) <> 0
    ORDER BY agent_id, scope, term, owner
    ON CONFLICT (agent_id, scope, term, owner) DO UPDATE SET facts = t.facts + excluded.facts;
    {cleanup}
    RETURN NULL;
END $$;
"""

_CLEANUP = """
    DELETE FROM facts_factterm t USING ({old_terms}) d
    WHERE t.agent_id = d.agent_id AND t.scope = d.scope AND t.owner = d.owner
      AND t.term = d.term AND t.facts <= 0;
"""

_NEW = "(SELECT agent_id, scope, coalesce(owner_id, '') AS owner, search_vector, 1 AS sign FROM new_rows)"  # noqa: E501
_OLD = "(SELECT agent_id, scope, coalesce(owner_id, '') AS owner, search_vector, -1 AS sign FROM old_rows)"  # noqa: E501
_CHANGED = {"insert": (_NEW, ""), "update": (f"{_NEW} UNION ALL {_OLD}", _CLEANUP),
            "delete": (_OLD, _CLEANUP)}  # fmt: skip


def _function(name: str) -> str:
    changed, cleanup = _CHANGED[name]
    return _FUNCTION.format(
        name=name,
        changed=changed,
        terms=_TERMS_OF.format(rows=f"({changed}) AS c"),
        cleanup=cleanup.format(old_terms=_TERMS_OF.format(rows=f"{_OLD} AS c")),
    )


RECOUNT = """
DELETE FROM facts_factterm;
INSERT INTO facts_factterm (agent_id, scope, owner, term, facts)
SELECT agent_id, scope, owner, term, count(*) FROM (
    SELECT agent_id, scope, coalesce(owner_id, '') AS owner,
           unnest(tsvector_to_array(search_vector)) AS term FROM facts_fact
    UNION ALL SELECT agent_id, scope, coalesce(owner_id, ''), '' FROM facts_fact
) t GROUP BY agent_id, scope, owner, term;
"""

FORWARD = [
    "ALTER TABLE facts_factterm ADD COLUMN owner varchar(48) NOT NULL DEFAULT ''",
    "ALTER TABLE facts_factterm DROP CONSTRAINT facts_factterm_pkey",
    # Owner last: a word's prefix stays one range of the key; the owners filter that range.
    "ALTER TABLE facts_factterm ADD PRIMARY KEY (agent_id, scope, term, owner)",
    *[_function(name) for name in _CHANGED],
    RECOUNT,
]

# Back to one row per (memory, term): 0004's functions, and a recount without owners.
_OLD_FUNCTION = """
CREATE OR REPLACE FUNCTION facts_count_terms_{name}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM facts_factquota q
    WHERE (q.agent_id, q.scope) IN (SELECT DISTINCT agent_id, scope FROM ({changed}) c)
    ORDER BY q.id FOR NO KEY UPDATE;
    INSERT INTO facts_factterm AS t (agent_id, scope, term, facts)
    SELECT agent_id, scope, term, sum(sign) FROM ({terms}) d
    GROUP BY agent_id, scope, term HAVING sum(sign) <> 0
    ORDER BY agent_id, scope, term
    ON CONFLICT (agent_id, scope, term) DO UPDATE SET facts = t.facts + excluded.facts;
    {cleanup}
    RETURN NULL;
END $$;
"""
_OLD_TERMS_OF = """
SELECT agent_id, scope, unnest(tsvector_to_array(search_vector)) AS term, sign FROM {rows}
UNION ALL SELECT agent_id, scope, '', sign FROM {rows}
"""
_OLD_CLEANUP = """
    DELETE FROM facts_factterm t USING ({old_terms}) d
    WHERE t.agent_id = d.agent_id AND t.scope = d.scope AND t.term = d.term AND t.facts <= 0;
"""
_NEW_0004 = "(SELECT agent_id, scope, search_vector, 1 AS sign FROM new_rows)"
_OLD_0004 = "(SELECT agent_id, scope, search_vector, -1 AS sign FROM old_rows)"
_CHANGED_0004 = {"insert": (_NEW_0004, ""),
                 "update": (f"{_NEW_0004} UNION ALL {_OLD_0004}", _OLD_CLEANUP),
                 "delete": (_OLD_0004, _OLD_CLEANUP)}  # fmt: skip
_OLD_FUNCTIONS = [
    _OLD_FUNCTION.format(
        name=name,
        changed=changed,
        terms=_OLD_TERMS_OF.format(rows=f"({changed}) AS c"),
        cleanup=cleanup.format(old_terms=_OLD_TERMS_OF.format(rows=f"{_OLD_0004} AS c")),
    )
    for name, (changed, cleanup) in _CHANGED_0004.items()
]
BACKWARD = [
    "DELETE FROM facts_factterm",
    "ALTER TABLE facts_factterm DROP CONSTRAINT facts_factterm_pkey",
    "ALTER TABLE facts_factterm DROP COLUMN owner",
    "ALTER TABLE facts_factterm ADD PRIMARY KEY (agent_id, scope, term)",
    *_OLD_FUNCTIONS,
    """INSERT INTO facts_factterm (agent_id, scope, term, facts)
    SELECT agent_id, scope, term, count(*) FROM (
        SELECT agent_id, scope, unnest(tsvector_to_array(search_vector)) AS term FROM facts_fact
        UNION ALL SELECT agent_id, scope, '' FROM facts_fact
    ) t GROUP BY agent_id, scope, term""",
]


class Migration(migrations.Migration):
    dependencies = [("facts", "0005_keyed_index_without_pending_list")]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunSQL(FORWARD, reverse_sql=BACKWARD)],
            state_operations=[
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
                                blank=True,
                                editable=False,
                                primary_key=True,
                                serialize=False,
                            ),
                        ),
                        ("scope", models.CharField(blank=True, default="", max_length=48)),
                        ("owner", models.CharField(blank=True, default="", max_length=48)),
                        ("term", models.TextField(db_collation="C")),
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
