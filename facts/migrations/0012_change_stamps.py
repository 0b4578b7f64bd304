"""Change stamps: what an in-process postings index (``facts.postings``) reads to stay exact.

Each counter shard gets ``changes``, bumped once per transaction that writes facts of its
memory in it; the sequence ``facts_search_epoch`` is bumped when the statistics are
recounted (a bulk load that bypassed the triggers). A written fact row gets ``(change_shard, change_no)``: the shard
the transaction holds and that bump's number. A transaction holds its shard's counter row
until it commits, so within one shard the numbers commit in order: a reader that has seen
``changes = c`` has every row stamped ``<= c`` and finds what is new as ``change_no > c``.

The stamp is set by a BEFORE ROW trigger, which takes the shard as the statement triggers
of migration 0011 do (``facts.shard``); it keeps the memory, shard and number in the
transaction-local ``facts.change``, so a transaction bumps a memory's counter once, not once per row. A
delete bumps it too, without a stamp (the row is gone): the reader's remembered word
statistics change with it.
"""

from django.db import migrations, models

SHARDS = 8  # facts.shards.SHARDS at the time of this migration

_STAMP = f"""
CREATE OR REPLACE FUNCTION facts_stamp_change() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    memory text := NEW.agent_id || ' ' || NEW.scope;
    held text := coalesce(current_setting('facts.change', true), '');
    s smallint := nullif(current_setting('facts.shard', true), '')::smallint;
    n bigint;
BEGIN
    IF s IS NOT NULL AND starts_with(held, memory || '|' || s || '|') THEN
        NEW.change_shard := s;
        NEW.change_no := nullif(substr(held, length(memory || '|' || s || '|') + 1), '');
        RETURN NEW;
    END IF;
    IF s IS NULL THEN  -- as facts_count_terms_*: the lowest free shard, else wait for one
        SELECT q.shard INTO s FROM facts_factquota q
        WHERE q.agent_id = NEW.agent_id AND q.scope = NEW.scope
        ORDER BY q.shard FOR NO KEY UPDATE SKIP LOCKED LIMIT 1;
        IF s IS NULL THEN
            PERFORM 1 FROM facts_factquota q
            WHERE q.agent_id = NEW.agent_id AND q.scope = NEW.scope;
            s := CASE WHEN FOUND THEN txid_current() % {SHARDS} ELSE 0 END;
        END IF;
        PERFORM set_config('facts.shard', s::text, true);
    END IF;
    UPDATE facts_factquota q SET changes = q.changes + 1
    WHERE q.agent_id = NEW.agent_id AND q.scope = NEW.scope AND q.shard = s
    RETURNING q.changes INTO n;  -- NULL without counter rows: the index is not used then
    PERFORM set_config('facts.change', memory || '|' || s || '|' || coalesce(n::text, ''), true);
    NEW.change_shard := s;
    NEW.change_no := n;
    RETURN NEW;
END $$;
"""  # noqa: S608 - constant SQL

# A delete bumps the counter too (a reader's cached statistics change), in the shard
# facts_count_terms_delete took and locked: triggers of one event fire in name order.
_DELETED = """
CREATE OR REPLACE FUNCTION facts_stamp_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE facts_factquota q SET changes = q.changes + 1
    WHERE (q.agent_id, q.scope) IN (SELECT DISTINCT agent_id, scope FROM old_rows)
      AND q.shard = nullif(current_setting('facts.shard', true), '')::smallint;
    RETURN NULL;
END $$;
"""

FORWARD = [
    # Bumped by a recount of the statistics (terms.RECOUNT_SQL), as after a bulk load past
    # the triggers: the indexes are built anew. A sequence, so that a recount under its
    # table lock never waits for a writer's counter row.
    "CREATE SEQUENCE facts_search_epoch",
    _STAMP,
    "CREATE TRIGGER facts_stamp_change BEFORE INSERT OR UPDATE ON facts_fact "
    "FOR EACH ROW EXECUTE FUNCTION facts_stamp_change()",
    _DELETED,
    "CREATE TRIGGER facts_stamp_delete AFTER DELETE ON facts_fact "
    "REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION facts_stamp_delete()",
]
BACKWARD = [
    "DROP SEQUENCE facts_search_epoch",
    "DROP TRIGGER facts_stamp_delete ON facts_fact",
    "DROP FUNCTION facts_stamp_delete()",
    "DROP TRIGGER facts_stamp_change ON facts_fact",
    "DROP FUNCTION facts_stamp_change()",
]


class Migration(migrations.Migration):
    dependencies = [("facts", "0011_sharded_statistics")]

    operations = [
        migrations.AddField(
            model_name="factquota",
            name="changes",
            field=models.BigIntegerField(db_default=0, default=0, editable=False),
        ),
        migrations.AddField(
            model_name="fact",
            name="change_shard",
            field=models.SmallIntegerField(editable=False, null=True),
        ),
        migrations.AddField(
            model_name="fact",
            name="change_no",
            field=models.BigIntegerField(editable=False, null=True),
        ),
        migrations.AddIndex(
            model_name="fact",
            index=models.Index(
                condition=models.Q(change_no__isnull=False),
                fields=["agent", "scope", "change_shard", "change_no"],
                name="fact_changes",
            ),
        ),
        migrations.RunSQL(FORWARD, reverse_sql=BACKWARD),
    ]
