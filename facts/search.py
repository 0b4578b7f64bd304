"""Full-text search over facts: case and accent folding, prefix OR queries, ranking.

The text is folded in Python (``fold``): case as for Turkish and English (``I ı İ i`` are
one letter), and accents dropped (``ş ğ ü ö ç â é ñ`` -> ``s g u o c a e n``), and
PostgreSQL keeps ``to_tsvector('simple', folded text)`` in a stored, GIN-indexed column.
A query is folded the same way, so ``ayse`` finds ``Ayşe`` and ``Ayşe`` finds ``ayse``: an
accented word and its unaccented spelling are one word to the search. They match the same
facts, share one term's statistics and rank alike (ties newest first), because a query
typed on an English keyboard must not rank a fact lower for being spelled correctly, and
one word's statistics must not be split across its spellings. Only the search text is
folded; a fact's ``text`` is returned as written.

A query is split into words; each word becomes a quoted prefix
term (``'word':*``) and the terms are OR-ed. The query string is passed as a parameter of
``to_tsquery`` and only ever holds words of letters and digits, quoted and escaped, so no
user text reaches the tsquery parser as syntax.

The ranking is defined in ``facts.ranking`` and found by the memory's in-process index
(``facts.postings``) or, where that cannot serve, by ``facts.topk`` in SQL without scoring
every match; ``ranked_queryset`` keeps the plain ``ts_rank`` query as the benchmark's
baseline.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from functools import lru_cache, partial

from django.contrib.postgres.search import SearchQuery, SearchRank
from django.db import connection
from django.db.models import F, Lookup, QuerySet

from facts import postings, ranking, terms
from facts.models import Fact
from facts.topk import TopK
from memoryhub import prepared

# Words beyond these are ignored: a query is a handful of words, not a document.
MAX_QUERY_WORDS = 32
# A longer word still prefix-matches through its first characters.
MAX_WORD_CHARS = 100

_TURKISH_I = str.maketrans({"I": "i", "ı": "i"})  # İ is I + U+0307 once decomposed
_WORD_RE = re.compile(r"[^\W_]+")
# The accents NFKD splits off Latin (and Greek, Cyrillic) letters. Marks of other scripts
# (kana voicing, Indic vowel signs) are parts of their letters and stay.
_ACCENTS = re.compile("[\u0300-\u036f]")


def fold(text: str) -> str:
    """Fold case (Turkish and English alike) and accents: ``İSTANBUL``, ``ıstanbul`` ->
    ``istanbul``; ``Ayşe``, ``AYŞE``, ``ayse`` -> ``ayse``; ``çağrı`` -> ``cagri``.

    NFKD (so ``ﬁ`` and fullwidth ``ａ`` fold too), the Turkish I's, lower case, the accents
    dropped, then NFC for what is left (Hangul, kana). Letters without a decomposition
    (``ø ł æ ß``) stay as they are. ``fold(fold(t)) == fold(t)``.
    """
    decomposed = unicodedata.normalize("NFKD", text).translate(_TURKISH_I).lower()
    return unicodedata.normalize("NFC", _ACCENTS.sub("", decomposed))


def query_words(query: str) -> list[str]:
    """The distinct folded words of a query, in order, at most ``MAX_QUERY_WORDS``."""
    words: list[str] = []
    for match in _WORD_RE.finditer(fold(query)):
        word = match.group()[:MAX_WORD_CHARS]
        if word not in words:
            words.append(word)
            if len(words) == MAX_QUERY_WORDS:
                break
    return words


def _quoted(word: str) -> str:
    # Words are letters and digits only; escaping anyway keeps the quoting safe on its own.
    return "'" + word.replace("\\", "\\\\").replace("'", "''") + "':*"


def tsquery_text(words: list[str]) -> str:
    """``'w1':* | 'w2':*``: every word OR-ed and prefix-matched."""
    return " | ".join(_quoted(word) for word in words)


def ranked_queryset(facts: QuerySet[Fact], query: str, k: int) -> QuerySet[Fact] | None:
    """The naive query: every match ranked by ``ts_rank`` (the benchmark's baseline)."""
    words = query_words(query)
    if not words:
        return None
    tsquery = SearchQuery(tsquery_text(words), search_type="raw", config="simple")
    return (
        facts.filter(search_vector=tsquery)
        .annotate(score=SearchRank(F("search_vector"), tsquery))
        .order_by("-score", "-updated_at", "-id")[:k]
    )


def ranked(
    facts: QuerySet[Fact],
    query: str,
    k: int,
    owners: list[str] | None = None,
    by_owner: Callable[[], list[QuerySet[Fact]] | None] | None = None,
) -> list[Fact]:
    """The ``k`` facts best matching ``query`` (``facts.ranking``), each with ``score``.

    ``facts`` must be one memory's facts (filtered on ``agent_id`` and ``scope``, as
    ``FactScope.facts()`` is), with conditions on ``facts_fact``'s own columns only: they
    are reused verbatim in the search's SQL.

    ``owners``: whose facts the word statistics count (``FactScope.statistics_owners``).
    ``by_owner``: gives the same facts owner by owner (``FactScope.facts_by_owner``), read
    apart when other users' folders hold most of the memory.
    """
    words = query_words(query)
    memory = memory_of(facts)
    if memory is None:
        raise ValueError("ranked() needs the facts of one memory (agent_id and scope)")
    if not words:
        return []
    with postings.opened(memory, words, owners) as index:
        if index is None:
            stats = terms.document_frequencies(memory, words, owners)
            postings.note(memory, stats.memory_total)
        else:
            stats = index.frequencies(memory, words, owners)
        if not stats.total:
            return []
        held = [n > 0 for n in stats.whole_dfs]
        weighed = ranking.weigh(stats.total, words, stats.dfs, held, stats.longer)
        where = _where(facts)
        if index is not None and (
            TopK(memory, where, None, stats, k).common(weighed) >= postings.FROM_COMMON
        ):
            found = index.search(weighed, owners, k, partial(_present, facts, where))
            if found is not None:
                return [_scored(fact, score) for fact, score in found]
    columns = _columns(facts)
    in_sql = _in_sql(memory, where, columns, stats, weighed, k, by_owner)
    return [_scored(Fact.from_db(facts.db, columns[1], row), score) for row, score in in_sql]


def _scored(fact: Fact, score: float) -> Fact:
    fact.score = score  # type: ignore[attr-defined]  # the search's own, as annotate() adds
    return fact


def _in_sql(
    memory: terms.Memory,
    where: tuple[str, list],
    columns: tuple[str, tuple[str, ...]],
    stats: terms.Frequencies,
    words: list[ranking.Word],
    k: int,
    by_owner: Callable[[], list[QuerySet[Fact]] | None] | None,
) -> list[tuple[tuple, float]]:
    """The top k found in SQL (``facts.topk``): each fact's ``columns`` and its score."""
    parts = None  # when the searcher sees most of the memory, one scan through it is cheaper
    if by_owner is not None and stats.memory_total >= 2 * stats.total:
        parts = by_owner()
        if parts == []:
            return []  # no owner the run may see has facts under these folders
    where_parts = None if parts is None else [_where(part) for part in parts]
    topk = TopK(memory, where, where_parts, stats, k, columns)
    return [(topk.rows[hit.id], hit.score) for hit in topk.run(words)]


def _present(
    facts: QuerySet[Fact], where: tuple[str, list], ids: list[int]
) -> dict[int, tuple[int, Fact]]:
    """Which of the index's candidates are still there and within ``where``, their columns
    loaded (the deferred ones left out), each with ``updated_at`` in microseconds (as the
    index has it)."""
    columns, names = _columns(facts)
    sql = (  # OFFSET 0: found by primary key first, whatever the planner makes of where
        f"SELECT {columns}, {postings.MICROS} FROM (SELECT * FROM facts_fact "  # noqa: S608
        f"WHERE id = ANY(%s::bigint[]) OFFSET 0) AS facts_fact WHERE {where[0]}"
    )
    rows = prepared.fetch_all(sql, [ids, *where[1]])  # the plan is by primary key, always
    return {row[0]: (row[-1], Fact.from_db(facts.db, names, row[:-1])) for row in rows}


def _where(facts: QuerySet[Fact]) -> tuple[str, list]:
    """The queryset's conditions as SQL on ``facts_fact``, with their parameters."""
    sql, params = facts.query.get_compiler(using=facts.db).compile(facts.query.where)
    return sql, list(params)


def _columns(facts: QuerySet[Fact]) -> tuple[str, tuple[str, ...]]:
    """The queryset's columns (the deferred ones left out) as SQL, and their attnames."""
    names, deferring = facts.query.deferred_loading
    # A frozenset to be a cache key: only() leaves a set there (defer() a frozenset).
    return _columns_of(frozenset(names), deferring)


@lru_cache(maxsize=16)
def _columns_of(names: frozenset[str], deferring: bool) -> tuple[str, tuple[str, ...]]:
    fields = [
        f
        for f in Fact._meta.concrete_fields
        if f.primary_key or (f.name not in names if deferring else f.name in names)
    ]
    # A concrete field always has a column (django-stubs allows None, for relations).
    columns = ", ".join(connection.ops.quote_name(f.column) for f in fields)  # type: ignore[arg-type]
    return columns, tuple(f.attname for f in fields)


def memory_of(facts: QuerySet[Fact]) -> terms.Memory | None:
    """The memory a queryset is confined to, read from its ``agent_id = …`` and ``scope = …``."""
    equal: dict[str, object] = {}
    for node in facts.query.where.children:
        if not isinstance(node, Lookup) or node.lookup_name != "exact":
            continue
        target = getattr(node.lhs, "target", None)
        if target is not None and target.attname in ("agent_id", "scope"):
            equal[target.attname] = getattr(node.rhs, "pk", node.rhs)
    if not {"agent_id", "scope"} <= equal.keys():
        return None
    return terms.Memory(str(equal["agent_id"]), str(equal["scope"]))
