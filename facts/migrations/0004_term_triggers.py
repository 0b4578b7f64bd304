"""Keep the term statistics on write, and index each memory's lexemes on their own.

* ``facts_count_terms_*``: statement-level triggers (transition tables, so a bulk insert
  or delete costs one statement) that add each written fact's lexemes to
  ``facts_factterm`` and take deleted or replaced ones away, in the writing transaction.
  They lock the memory's quota row first: writers and erasers then take their locks in one
  order (quota, then terms), and the terms are upserted in key order, so no deadlock.
* ``fact_memory_terms_gin``: a GIN index over ``facts_memory_terms(agent_id, scope,
  search_vector)``, each lexeme prefixed with its memory's key. A prefix query on it reads
  only that memory's posting lists, not every agent's.
* The statistics of the facts already there are counted once.
"""

from django.db import migrations

KEYED = """
CREATE FUNCTION facts_memory_terms(agent text, scope text, vector tsvector) RETURNS tsvector
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT array_to_tsvector(ARRAY(
        -- Cut so the key stays within a lexeme's 2047 bytes; query words are shorter.
        SELECT agent || ' ' || scope || ' ' || left(lexeme, 400)
        FROM unnest(tsvector_to_array(vector)) AS lexeme))
$$;
CREATE INDEX fact_memory_terms_gin ON facts_fact
    USING gin (facts_memory_terms(agent_id, scope, search_vector));
"""
UNKEYED = """
DROP INDEX fact_memory_terms_gin;
DROP FUNCTION facts_memory_terms(text, text, tsvector);
"""

_TERMS_OF = """
SELECT agent_id, scope, unnest(tsvector_to_array(search_vector)) AS term, sign FROM {rows}
UNION ALL SELECT agent_id, scope, '', sign FROM {rows}
"""

_FUNCTION = """
CREATE FUNCTION facts_count_terms_{name}() RETURNS trigger LANGUAGE plpgsql AS $$
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
CREATE TRIGGER facts_count_terms_{name} AFTER {event} ON facts_fact
    REFERENCING {tables} FOR EACH STATEMENT EXECUTE FUNCTION facts_count_terms_{name}();
"""

# Only the terms the old rows held can have dropped to zero.
_CLEANUP = """
    DELETE FROM facts_factterm t USING ({old_terms}) d
    WHERE t.agent_id = d.agent_id AND t.scope = d.scope AND t.term = d.term AND t.facts <= 0;
"""

_NEW = "(SELECT agent_id, scope, search_vector, 1 AS sign FROM new_rows)"
_OLD = "(SELECT agent_id, scope, search_vector, -1 AS sign FROM old_rows)"
# name: (event, transition tables, changed rows, cleanup)
_TRIGGERS = {
    "insert": ("INSERT", "NEW TABLE AS new_rows", _NEW, ""),
    "update": (
        "UPDATE",
        "OLD TABLE AS old_rows NEW TABLE AS new_rows",
        f"{_NEW} UNION ALL {_OLD}",
        _CLEANUP,
    ),
    "delete": ("DELETE", "OLD TABLE AS old_rows", _OLD, _CLEANUP),
}


def _trigger(name: str) -> str:
    event, tables, changed, cleanup = _TRIGGERS[name]
    rows = f"({changed}) AS c"
    return _FUNCTION.format(
        name=name,
        event=event,
        tables=tables,
        changed=changed,
        terms=_TERMS_OF.format(rows=rows),
        cleanup=cleanup.format(old_terms=_TERMS_OF.format(rows=f"{_OLD} AS c")),
    )


TRIGGERS = [_trigger(name) for name in _TRIGGERS]
NO_TRIGGERS = [
    f"DROP TRIGGER facts_count_terms_{name} ON facts_fact; "
    f"DROP FUNCTION facts_count_terms_{name}();"
    for name in _TRIGGERS
]

COUNT_EXISTING = """
INSERT INTO facts_factterm (agent_id, scope, term, facts)
SELECT agent_id, scope, term, count(*) FROM (
    SELECT agent_id, scope, unnest(tsvector_to_array(search_vector)) AS term FROM facts_fact
    UNION ALL SELECT agent_id, scope, '' FROM facts_fact
) t GROUP BY agent_id, scope, term;
"""


class Migration(migrations.Migration):
    dependencies = [("facts", "0003_term_statistics")]

    operations = [
        migrations.RunSQL(KEYED, reverse_sql=UNKEYED),
        migrations.RunSQL(TRIGGERS, reverse_sql=NO_TRIGGERS[::-1]),
        migrations.RunSQL(COUNT_EXISTING, reverse_sql=migrations.RunSQL.noop),
    ]
