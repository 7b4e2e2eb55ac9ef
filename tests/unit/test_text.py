from __future__ import annotations

from slowave_graph.services.text import (
    active_key,
    lucene_query,
    normalise_claim,
    query_terms,
    scope_norm_key,
    scope_token,
    split_cues,
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
    token = scope_token("project:shop")
    assert token.isalnum() and token == scope_token("project:shop") != scope_token("project:Shop")


def test_lucene_query_cannot_carry_syntax() -> None:
    query = lucene_query('foo" OR scope_token:x) AND (bar* ~2 \\ NOT', "sabc")
    assert query == '+scope_token:sabc^0 +status:active^0 +content:("foo" "scope_token" "bar" "2")'


def test_query_terms_drop_stopwords_keep_numbers() -> None:
    assert query_terms("What is the port of the 2 Atlas APIs?") == ["port", "2", "atlas", "apis"]
    assert lucene_query("what is it?", "s1") is None


def test_split_cues_searches_each_question() -> None:
    cues = split_cues(["Payment webhooks keep failing; who is on call for incidents?", "Fix it. Now"])
    assert cues == [
        "Payment webhooks keep failing; who is on call for incidents?",
        "Payment webhooks keep failing;",
        "who is on call for incidents?",
        "Fix it. Now",
    ]
    assert split_cues(["  ", "same", "same"]) == ["same"]
