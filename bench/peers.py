"""Two BM25 engines beside memoryhub's fact search, in process, on the same facts and queries.

Both index the text folded as memoryhub folds it (``facts.search.fold``: lowercase, Turkish
``I ı İ i`` as one letter) and take the same query words (``facts.search.query_words``):
every word OR-ed and prefix-matched, as memoryhub does.

* **SQLite FTS5** (Python's ``sqlite3``): tokenizer ``unicode61 remove_diacritics 0`` (splits
  on what is not a letter or digit, as ``query_words`` does; no accent folding, as memoryhub
  has none), prefix indexes for 2 and 3 characters; a query is ``"w1"* OR "w2"* …`` ordered
  by ``bm25()``. FTS5 scores a prefix term as one term: its idf counts the facts holding any
  word it starts, like memoryhub's ``df``.
* **Tantivy** (tantivy-py, in memory, BM25): its default tokenizer (letters and digits,
  lowercase, words over 40 bytes dropped). Tantivy's query parser has no one-word prefix
  query, so each query word becomes a disjunction-max of term queries over the words of the
  dictionary it starts (the 50 most frequent, as Tantivy's own phrase-prefix expansion
  caps them, plus the word itself), and the words are OR-ed in a boolean query. The
  dictionary lookup is part of each query's time.

``prefix=False`` makes each word match whole words only (plain BM25 over terms): the
known-item test reports both, its query words being whole words of the fact.

``search(words, k)`` gives the positions (in the indexed list) of the ``k`` best facts.
"""

from __future__ import annotations

import sqlite3

from facts.search import fold

MAX_EXPANSIONS = 50


class Fts5:
    def __init__(self, texts: list[str], prefix: bool = True) -> None:
        self.name = "sqlite_fts5_bm25" + ("" if prefix else "_whole_words")
        self.star = "*" if prefix else ""
        self.db = sqlite3.connect(":memory:")
        self.db.execute(
            "CREATE VIRTUAL TABLE facts USING fts5(body, "
            "tokenize = 'unicode61 remove_diacritics 0', prefix = '2 3')"
        )
        self.db.executemany(
            "INSERT INTO facts (rowid, body) VALUES (?, ?)",
            ((n, fold(text)) for n, text in enumerate(texts)),
        )
        self.db.execute("INSERT INTO facts (facts) VALUES ('optimize')")
        self.db.commit()

    def search(self, words: list[str], k: int) -> list[int]:
        if not words:
            return []
        match = " OR ".join('"' + w.replace('"', '""') + '"' + self.star for w in words)
        rows = self.db.execute(
            "SELECT rowid FROM facts WHERE facts MATCH ? ORDER BY rank LIMIT ?", (match, k)
        )
        return [row[0] for row in rows]


class Tantivy:
    def __init__(self, texts: list[str], prefix: bool = True) -> None:
        import tantivy

        self.name = "tantivy_bm25" + ("" if prefix else "_whole_words")
        self.prefix = prefix
        self.tantivy = tantivy
        builder = tantivy.SchemaBuilder()
        builder.add_integer_field("n", stored=True, fast=True)
        builder.add_text_field("body", index_option="freq")
        self.schema = builder.build()
        self.index = tantivy.Index(self.schema)
        writer = self.index.writer(heap_size=200_000_000, num_threads=1)
        for n, text in enumerate(texts):
            writer.add_document(tantivy.Document(n=n, body=fold(text)))
        writer.commit()
        writer.wait_merging_threads()
        self.index.reload()
        self.searcher = self.index.searcher()

    def _word(self, word: str):
        query = self.tantivy.Query
        if not self.prefix:
            return query.term_query(self.schema, "body", word, index_option="freq")
        expansions = self.searcher.terms_with_prefix("body", word, limit=MAX_EXPANSIONS)
        terms = {word, *(term for term, _ in expansions)}
        return query.disjunction_max_query(
            [query.term_query(self.schema, "body", t, index_option="freq") for t in terms]
        )

    def search(self, words: list[str], k: int) -> list[int]:
        if not words:
            return []
        should = self.tantivy.Occur.Should
        query = self.tantivy.Query.boolean_query([(should, self._word(w)) for w in words])
        hits = self.searcher.search(query, k, count=False).hits
        return [self.searcher.doc(address)["n"][0] for _, address in hits]


def engines(texts: list[str], prefix: bool = True) -> list:
    """Both peers over ``texts``; Tantivy only when tantivy-py is installed (``.[bench]``)."""
    found: list = [Fts5(texts, prefix)]
    try:
        found.append(Tantivy(texts, prefix))
    except ImportError:
        print("    tantivy is not installed (pip install -e '.[bench]'): skipped", flush=True)
    return found
