"""Term statistics of one memory (``FactTerm``, kept by triggers) and its keyed lexemes.

``document_frequencies`` answers, for each query word, how many facts hold a lexeme that
starts with it (summed over those lexemes, at most the memory's size); ``keyed`` writes the
tsquery that reads only this memory's posting lists in ``fact_memory_terms_gin``.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import connection

# Above every code point a lexeme can hold: [word, word + TOP) is the word's prefix range.
TOP = "\U0010ffff"

_FREQUENCIES_SQL = """
SELECT coalesce((SELECT facts FROM facts_factterm
                 WHERE agent_id = %(agent)s AND scope = %(scope)s AND term = ''), 0),
       ARRAY(SELECT (SELECT coalesce(sum(t.facts), 0) FROM facts_factterm t
                     WHERE t.agent_id = %(agent)s AND t.scope = %(scope)s
                       AND t.term >= w.word AND t.term < w.word || %(top)s)::bigint
             FROM unnest(%(words)s::text[]) WITH ORDINALITY AS w(word, i) ORDER BY w.i)
"""

# The statistics of every fact present, for a bulk load that bypassed the triggers.
RECOUNT_SQL = """
DELETE FROM facts_factterm;
INSERT INTO facts_factterm (agent_id, scope, term, facts)
SELECT agent_id, scope, term, count(*) FROM (
    SELECT agent_id, scope, unnest(tsvector_to_array(search_vector)) AS term FROM facts_fact
    UNION ALL SELECT agent_id, scope, '' FROM facts_fact
) t GROUP BY agent_id, scope, term;
"""


@dataclass(frozen=True)
class Memory:
    """One facts memory: an agent's real memory (scope ``""``) or an eval's."""

    agent_id: str
    scope: str


def document_frequencies(memory: Memory, words: list[str]) -> tuple[int, list[int]]:
    """(facts in the memory, for each word the facts holding a lexeme it prefixes)."""
    params = {"agent": memory.agent_id, "scope": memory.scope, "words": words, "top": TOP}
    with connection.cursor() as cursor:
        cursor.execute(_FREQUENCIES_SQL, params)
        total, frequencies = cursor.fetchone()
    return total, [min(int(df), total) for df in frequencies]


def quoted(lexeme: str) -> str:
    """A tsquery prefix operand; quotes and backslashes escaped, anything else verbatim."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "':*"


def keyed(memory: Memory, word: str) -> str:
    """The prefix operand of ``word`` within this memory's keyed lexemes."""
    return quoted(f"{memory.agent_id} {memory.scope} {word}")
