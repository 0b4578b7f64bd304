"""Term statistics of one memory (``FactTerm``, kept by triggers) and its keyed lexemes.

``document_frequencies`` answers, for each query word, how many facts hold a lexeme that
starts with it (summed over those lexemes, at most the memory's size); ``keyed`` writes the
tsquery that reads only this memory's posting lists in ``fact_memory_terms_gin``.
"""

from __future__ import annotations

from dataclasses import dataclass

from memoryhub import prepared

# Above every code point a lexeme can hold: [word, word + TOP) is the word's prefix range.
TOP = "\U0010ffff"

# %(owners)s: the owners whose facts count ('' shared, end user ids); NULL counts them all.
_FREQUENCIES_SQL = """
SELECT coalesce((SELECT sum(facts) FROM facts_factterm
                 WHERE agent_id = %(agent)s AND scope = %(scope)s AND term = ''
                   AND (%(owners)s::text[] IS NULL OR owner = ANY(%(owners)s::text[]))), 0),
       ARRAY(SELECT (SELECT coalesce(sum(t.facts), 0) FROM facts_factterm t
                     WHERE t.agent_id = %(agent)s AND t.scope = %(scope)s
                       AND (%(owners)s::text[] IS NULL OR t.owner = ANY(%(owners)s::text[]))
                       AND t.term >= w.word AND t.term < w.word || %(top)s)::bigint
             FROM unnest(%(words)s::text[]) WITH ORDINALITY AS w(word, i) ORDER BY w.i)
"""

# The statistics of every fact present, for a bulk load that bypassed the triggers.
RECOUNT_SQL = """
DELETE FROM facts_factterm;
INSERT INTO facts_factterm (agent_id, scope, owner, term, facts)
SELECT agent_id, scope, owner, term, count(*) FROM (
    SELECT agent_id, scope, coalesce(owner_id, '') AS owner,
           unnest(tsvector_to_array(search_vector)) AS term FROM facts_fact
    UNION ALL SELECT agent_id, scope, coalesce(owner_id, ''), '' FROM facts_fact
) t GROUP BY agent_id, scope, owner, term;
"""


@dataclass(frozen=True)
class Memory:
    """One facts memory: an agent's real memory (scope ``""``) or an eval's."""

    agent_id: str
    scope: str


def document_frequencies(
    memory: Memory, words: list[str], owners: list[str] | None = None
) -> tuple[int, list[int]]:
    """(facts in the memory, for each word the facts holding a lexeme it prefixes).

    ``owners`` limits both counts to the facts of those owners ("" for the shared ones, end
    user ids for their folders): the facts the searcher may see. None counts every fact.
    """
    params = {
        "agent": memory.agent_id,
        "scope": memory.scope,
        "words": words,
        "top": TOP,
        "owners": owners,
    }
    total, frequencies = prepared.fetch_one(_FREQUENCIES_SQL, params)
    return total, [min(int(df), total) for df in frequencies]


def quoted(lexeme: str) -> str:
    """A tsquery prefix operand; quotes and backslashes escaped, anything else verbatim."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "':*"


def keyed(memory: Memory, word: str) -> str:
    """The prefix operand of ``word`` within this memory's keyed lexemes."""
    return quoted(f"{memory.agent_id} {memory.scope} {word}")
