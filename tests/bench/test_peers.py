"""The BM25 peers take memoryhub's query semantics: folded text, every word OR-ed and
prefix-matched (whole words only when asked)."""

from __future__ import annotations

import pytest

from bench import peers

TEXTS = [
    "İSTANBUL ofisinde toplantı var",
    "the filesystem checks files",
    "a file is a file",
    "nothing to see",
]


def engines(prefix: bool = True) -> list:
    """FTS5, and Tantivy when the bench extra is installed (``make bench`` installs it)."""
    return peers.engines(TEXTS, prefix)


@pytest.mark.parametrize("prefix", [True, False])
def test_turkish_capitals_fold_as_memoryhub_folds_them(prefix):
    for engine in engines(prefix):
        assert engine.search(["istanbul"], 5) == [0], engine.name


def test_every_word_is_or_ed_and_prefix_matched():
    for engine in engines():
        assert set(engine.search(["fil", "ofis"], 5)) == {0, 1, 2}, engine.name
        assert engine.search(["fil", "ofis"], 1) in ([0], [1], [2])
        assert engine.search([], 5) == []


def test_whole_words_only_when_asked():
    for engine in engines(prefix=False):
        assert set(engine.search(["file"], 5)) == {2}, engine.name


def test_bm25_puts_the_fact_repeating_a_word_first():
    for engine in engines(prefix=False):
        assert engine.search(["file", "files"], 5)[0] == 2, engine.name
