from __future__ import annotations

import random
import re

from slowave_graph.services.text import (
    active_key,
    lucene_query,
    normalise_claim,
    query_terms,
    scope_norm_key,
    scope_token,
    stem,
    term_coverage,
)


def test_normalised_duplicates() -> None:
    assert normalise_claim("  Use UV   to install packages. ") == "use uv to install packages"
    assert normalise_claim("Ｕｓｅ uv") == normalise_claim("use UV")  # NFKC full-width
    assert normalise_claim("Deploy on Friday?") == normalise_claim("deploy on friday")
    assert normalise_claim("v1.2") != normalise_claim("v1 2")


def test_active_key_is_per_scope() -> None:
    assert active_key("p:a", "Same claim") == active_key("p:a", "same claim.")
    assert active_key("p:a", "Same claim") != active_key("p:b", "Same claim")


def test_scope_keys() -> None:
    assert scope_norm_key("Project:My-Shop") == scope_norm_key("project:my_shop")
    assert scope_norm_key("project:shop") != scope_norm_key("project:shop2")
    # confusables: a Cyrillic о, full-width letters
    assert scope_norm_key("project:sh\u043ep") == scope_norm_key("project:shop")
    assert scope_norm_key("\uff50roject:shop") == scope_norm_key("project:shop")
    assert scope_norm_key("user:m\u00fcller") != scope_norm_key("user:muller")
    token = scope_token("project:shop")
    assert token.isalnum() and token == scope_token("project:shop") != scope_token("project:Shop")


def test_lucene_query_cannot_carry_syntax() -> None:
    query = lucene_query('foo" OR scope_token:x) AND (bar* ~2 \\ NOT', "sabc")
    assert query == '+scope_token:sabc^0 +status:active^0 +content:("foo" "scope_token" "bar" "2")'
    elsewhere = lucene_query("foo bar", "sabc", other_scopes=True)
    assert elsewhere == '-scope_token:sabc +status:active^0 +content:("foo" "bar")'


def test_query_terms_drop_stopwords_keep_numbers() -> None:
    assert query_terms("What is the port of the 2 Atlas APIs?") == ["port", "2", "atlas", "apis"]
    assert lucene_query("what is it?", "s1") is None


def test_term_coverage_compares_words_bystem() -> None:
    content = "The tokens expired; parties went on. Running jobs, a file and the CAFÉS of Straße."
    assert term_coverage(query_terms("tokens parties"), content) == 1.0  # token, parti
    assert term_coverage(query_terms("café straße jobs"), content) == 1.0  # case-folded, CAFÉS → café
    assert term_coverage(query_terms("tok"), content) == 0.0  # a stem is not a prefix
    assert term_coverage(query_terms("token zebra"), content) == 0.5
    assert term_coverage([], content) == 0.0


def test_term_coverage_equals_stemming_every_word_of_the_content() -> None:
    """The scan by the terms' stems finds exactly what stemming every content word would."""

    def every_word(terms: list[str], content: str) -> float:
        present = {stem(w) for w in re.findall(r"\w+", content.casefold())}
        return sum(1 for t in terms if stem(t) in present) / len(terms) if terms else 0.0

    words = "token tokens parties part going goes go expired expire runs running run ies x1 año Straße "
    words += "STRASSE café cafés v2 1999s İstanbul ﬁle files a_b_c tokenized happy happiness hoped "
    words += "generalizations general relational relate agreed studies study"
    pool = words.split()
    rng = random.Random(7)
    for _ in range(3000):
        content = " ".join(rng.choice(pool) + rng.choice(["", ",", ".", "-", "_x", "s"]) for _ in range(12))
        terms = query_terms(" ".join(rng.choice(pool) for _ in range(rng.randint(0, 4))))
        assert term_coverage(terms, content) == every_word(terms, content), (terms, content)
