"""Term statistics of one memory (``FactTerm``, kept by triggers) and its keyed lexemes.

``document_frequencies`` answers, for each query word, how many facts hold a lexeme that
starts with it (summed over those lexemes, at most the facts counted); ``keyed`` writes the
tsquery that reads only this memory's posting lists in ``fact_memory_terms_gin``.
"""

from __future__ import annotations

from dataclasses import dataclass

from memoryhub import prepared

# Above every code point a lexeme can hold: [word, word + TOP) is the word's prefix range.
TOP = "\U0010ffff"

# The facts seen and every fact, of the term rows matching {terms}.
_SUMS = """(
    SELECT coalesce(sum(t.facts) FILTER (WHERE %(owners)s::text[] IS NULL
                                            OR t.owner = ANY(%(owners)s::text[])), 0) AS seen,
           coalesce(sum(t.facts), 0) AS every
    FROM facts_factterm t
    WHERE t.agent_id = %(agent)s AND t.scope = %(scope)s AND {terms}
)"""
# One range scan per word: the facts the searcher may see (%(owners)s: '' shared, end user
# ids; NULL: all) and every fact of the memory (what its indexes hold), each also for the
# word's own lexeme (the word held whole), a second, short scan. The first range,
# from '' to U+0001 (the least non-empty text), holds only the empty term: the fact count.
# A FROM clause (r.i, s.*, w.*), so that facts.postings can read them in the statement that
# reads the counter shards' stamps: one round trip, one snapshot.
FREQUENCY_ROWS = f"""
unnest(%(lows)s::text[], %(highs)s::text[]) WITH ORDINALITY AS r(low, high, i)
CROSS JOIN LATERAL {_SUMS.format(terms="t.term >= r.low AND t.term < r.high")} AS s
CROSS JOIN LATERAL {_SUMS.format(terms="t.term = r.low")} AS w
"""  # noqa: S608 - constant SQL
_FREQUENCIES_SQL = f"SELECT s.seen, s.every, w.seen, w.every FROM {FREQUENCY_ROWS} ORDER BY r.i"  # noqa: S608

# The statistics of every fact present, as the triggers keep them.
EXPECTED_SQL = """
SELECT agent_id, scope, owner, term, count(*)::int AS facts FROM (
    SELECT agent_id, scope, coalesce(owner_id, '') AS owner,
           unnest(tsvector_to_array(search_vector)) AS term FROM facts_fact
    UNION ALL SELECT agent_id, scope, coalesce(owner_id, ''), '' FROM facts_fact
) t GROUP BY agent_id, scope, owner, term
"""

# For a bulk load that bypassed the triggers, or statistics found wrong (manage.py verify).
RECOUNT_SQL = f"""
DELETE FROM facts_factterm;
INSERT INTO facts_factterm (agent_id, scope, owner, term, facts) {EXPECTED_SQL};
SELECT nextval('facts_search_epoch');
"""  # noqa: S608 - constant SQL


@dataclass(frozen=True)
class Memory:
    """One facts memory: an agent's real memory (scope ``""``) or an eval's."""

    agent_id: str
    scope: str


@dataclass(frozen=True)
class Frequencies:
    """A query's word statistics. ``total`` and ``dfs`` count the facts the searcher may
    see (they weigh the words); ``memory_total`` and ``postings`` count every fact of the
    memory, which is what its indexes hold and a plan reads through."""

    total: int
    dfs: list[int]
    memory_total: int
    postings: list[int]
    # The same for each word's own lexeme (the facts holding it whole), and whether the
    # facts seen hold a longer lexeme starting with it.
    whole_dfs: list[int]
    whole_postings: list[int]
    longer: list[bool]


def document_frequencies(
    memory: Memory, words: list[str], owners: list[str] | None = None
) -> Frequencies:
    """For each word, the facts holding a lexeme it prefixes (at most the facts counted).

    ``owners`` limits ``total`` and ``dfs`` to the facts of those owners ("" for the shared
    ones, end user ids for their folders): the facts the searcher may see. None: all.
    """
    return frequencies_of(prepared.fetch_all(_FREQUENCIES_SQL, parameters(memory, words, owners)))


def parameters(memory: Memory, words: list[str], owners: list[str] | None) -> dict:
    """``FREQUENCY_ROWS``' parameters (with ``agent`` and ``scope``)."""
    return {
        "agent": memory.agent_id,
        "scope": memory.scope,
        "lows": ["", *words],
        "highs": ["\x01", *(word + TOP for word in words)],
        "owners": owners,
    }


def frequencies_of(rows: list[tuple]) -> Frequencies:
    """``FREQUENCY_ROWS``' (seen, every, seen whole, every whole), in order, as Frequencies."""
    (total, memory_total, _, _), *rows = rows
    return Frequencies(
        total,
        [min(int(row[0]), total) for row in rows],
        memory_total,
        [min(int(row[1]), memory_total) for row in rows],
        [int(row[2]) for row in rows],
        [int(row[3]) for row in rows],
        [row[0] > row[2] for row in rows],
    )


def quoted(lexeme: str) -> str:
    """A tsquery prefix operand; quotes and backslashes escaped, anything else verbatim."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "':*"


def exact(lexeme: str) -> str:
    """A tsquery operand matching ``lexeme`` itself (the word held whole)."""
    return quoted(lexeme)[:-2]


def keyed(memory: Memory, word: str, whole: bool = False) -> str:
    """The prefix operand of ``word`` within this memory's keyed lexemes (``whole``: the
    operand of the word's own lexeme)."""
    lexeme = f"{memory.agent_id} {memory.scope} {word}"
    return exact(lexeme) if whole else quoted(lexeme)
