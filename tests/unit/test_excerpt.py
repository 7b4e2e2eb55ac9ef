from __future__ import annotations

import itertools
import random

import pytest

from slowave_graph.services.excerpt import EXCERPT_BUDGET, EXCERPT_VERSION, Excerpt, excerpt
from slowave_graph.services.text import query_terms

_VOCABULARY = "token cache deploy server retries config schema index user fails expired queue worker timeout"
WORDS = [
    *_VOCABULARY.split(" "),
    "e.g.",
    "v1.2",
    "don't",
    "self-hosted",
    "naïve",
    "straße",
    "42",
    "x",
    "API",
    "GraphQL",
]
ENDS = [".", ".", "!", "?", "", ";", ","]
GAPS = [" ", " ", " ", "  ", "\n", "\n\n", " \n ", "\t", "\r\n"]


def _sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)) + rng.choice(ENDS)


def _text(rng: random.Random) -> str:
    parts: list[str] = []
    for _ in range(rng.randint(0, 80)):
        # mostly short sentences, sometimes one longer than any budget
        parts.append(_sentence(rng, rng.randint(1, 400) if rng.random() < 0.03 else rng.randint(1, 25)))
        parts.append(rng.choice(GAPS))
    return rng.choice(["", " ", "\n"]) + "".join(parts)


def _mid_word(text: str, i: int) -> bool:
    return 0 < i < len(text) and text[i - 1].isalnum() and text[i].isalnum()


def check_invariants(text: str, result: Excerpt, budget: int) -> None:
    assert result.source_chars == len(text)
    if len(text) <= budget:
        assert result == Excerpt(text, len(text), [])
        assert result.verbatim and result.source_excerpt() is None
        return
    spans = result.spans
    assert not result.verbatim
    assert result.content == "\n".join(text[s:e] for s, e in spans)
    assert len(result.content) <= budget
    assert sum(e - s for s, e in spans) <= budget
    if text.strip():
        assert spans, "non-blank content must deliver something"
    for s, e in spans:
        assert 0 <= s < e <= len(text)
        assert not text[s].isspace() and not text[e - 1].isspace()
        assert not _mid_word(text, s) and not _mid_word(text, e)
    for (_, e1), (s2, _) in itertools.pairwise(spans):
        assert e1 < s2, "sorted and disjoint"
        assert text[e1:s2].strip(), "spans separated only by whitespace must be merged"
    assert result.source_excerpt() == {
        "version": EXCERPT_VERSION,
        "source_chars": len(text),
        "source_spans": [[s, e] for s, e in spans],
    }


@pytest.mark.parametrize("seed", range(300))
def test_invariants_on_generated_texts(seed: int) -> None:
    rng = random.Random(seed)
    text = _text(rng)
    budget = rng.choice([EXCERPT_BUDGET, EXCERPT_BUDGET, rng.randint(1, 300)])
    cues = query_terms(" ".join(rng.sample(WORDS, rng.randint(0, 4))))
    result = excerpt(text, cues, budget)
    check_invariants(text, result, budget)
    assert excerpt(text, cues, budget) == result, "deterministic"


@pytest.mark.parametrize("seed", range(200))
def test_sentence_with_the_cue_is_included(seed: int) -> None:
    rng = random.Random(seed)
    plain = [w for w in WORDS if "." not in w]  # "e.g." ends a unit by the rule
    sentences = [" ".join(rng.choices(plain, k=rng.randint(3, 25))) + "." for _ in range(rng.randint(20, 80))]
    where = rng.randrange(1, len(sentences))
    sentences[where] = f"The zebrafish {sentences[where]}"
    text = " ".join(sentences)
    if len(text) <= EXCERPT_BUDGET:
        text += " " + text
    result = excerpt(text, query_terms("what about zebrafishes?"))
    check_invariants(text, result, EXCERPT_BUDGET)
    assert sentences[0] in result.content, "the first sentence names the subject"
    assert sentences[where] in result.content


def test_verbatim_up_to_exactly_the_budget() -> None:
    text = ("word " * 205)[:EXCERPT_BUDGET]
    assert len(text) == 1024
    assert excerpt(text) == Excerpt(text, 1024, [])
    longer = text + "x"
    result = excerpt(longer)
    assert not result.verbatim and result.spans and len(result.content) <= 1024


def test_no_cues_takes_sentences_in_source_order() -> None:
    sentences = [f"Sentence number {i} is here." for i in range(100)]
    text = " ".join(sentences)
    result = excerpt(text)
    assert len(result.spans) == 1 and result.spans[0][0] == 0
    assert result.content == text[: result.spans[0][1]]
    assert result.content.endswith(".") and len(result.content) + 1 + len(sentences[99]) > 1024


def test_cue_sentence_and_first_sentence_are_merged_spans() -> None:
    filler = " ".join(f"Filler line {i} about nothing." for i in range(60))
    text = f"Redis is the cache. The token expired yesterday. {filler} Tokens rotate hourly. The end."
    result = excerpt(text, query_terms("when do tokens expire?"), budget=75)
    # the first two sentences are adjacent in the source: one span, whitespace included
    assert result.content == "Redis is the cache. The token expired yesterday.\nTokens rotate hourly."
    assert result.spans[0] == (0, len("Redis is the cache. The token expired yesterday."))


def test_lines_are_units_and_stay_exact() -> None:
    text = "  Title line\n\n- item one\n- item two\n" + "x\n" * 600
    result = excerpt(text, ["item"], budget=40)
    check_invariants(text, result, 40)
    assert result.content.startswith("Title line\n\n- item one\n- item two\nx")  # adjacent: one span


def test_long_first_unit_is_cut_at_whitespace_never_mid_word() -> None:
    text = " ".join(["abcdefg"] * 400)  # one sentence, 3,199 chars
    result = excerpt(text)
    ((s, e),) = result.spans
    assert s == 0 and text[e] == " " and e <= 1024 and e > 1024 - 8
    check_invariants(text, result, EXCERPT_BUDGET)


def test_one_giant_word_is_cut_at_the_budget() -> None:
    assert excerpt("a" * 3000).spans == [(0, 1024)]
    url = "https://example.org/" + "/".join(["segment"] * 300)
    ((s, e),) = excerpt(url).spans
    assert s == 0 and e > 1000 and not _mid_word(url, e)  # a word boundary before the budget


def test_unit_too_long_for_the_rest_is_skipped() -> None:
    text = "Short first. " + "long " * 300 + "end. Cue here. " + "pad " * 300
    result = excerpt(text, ["cue"], budget=100)
    assert result.content == "Short first.\nCue here."


def test_blank_content_and_bad_budget() -> None:
    assert excerpt(" " * 2000) == Excerpt("", 2000, [])
    assert excerpt(" " * 2000).source_excerpt() == {"version": 1, "source_chars": 2000, "source_spans": []}
    assert excerpt("") == Excerpt("", 0, [])
    with pytest.raises(ValueError):
        excerpt("text", budget=0)
