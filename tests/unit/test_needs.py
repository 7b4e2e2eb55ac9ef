"""A request's needs (services/needs.py) and the catalog's order by need (services/ranking.py):
pure logic, no model, no database."""

from __future__ import annotations

from slowave_graph.services.needs import MAX_NEEDS, split_needs
from slowave_graph.services.ranking import Candidate, by_need


def test_each_question_of_one_sentence_is_a_need() -> None:
    asked = "Where are rate limits enforced and which endpoints must be exempt?"
    assert split_needs([asked]).texts == [
        asked,
        "Where are rate limits enforced",
        "which endpoints must be exempt?",
    ]
    two = "What are Caroline's plans for the summer, and how does she feel about adoption?"
    assert split_needs([two]).texts[1:] == [
        "What are Caroline's plans for the summer",
        "how does she feel about adoption?",
    ]


def test_a_single_question_stays_one_need() -> None:
    for question in ("What did Melanie paint and when?", "When did Caroline go to the LGBTQ support group?"):
        assert split_needs([question]).texts == [question]
    assert split_needs(["  ", "same", "Same."]).texts == ["same"]


def test_sentences_lines_and_list_items_are_needs() -> None:
    task = "Payment webhooks keep failing; who is on call for incidents?"
    assert split_needs([task, "Fix it. Now"]).texts == [
        task,
        "Fix it. Now",
        "Payment webhooks keep failing;",
        "who is on call for incidents?",
    ]
    listed = "Fix the flaky webhook tests:\n- check the retry policy of the client\n* find who owns payments\n2) list exempt endpoints"
    assert split_needs([listed]).texts[1:] == [
        "Fix the flaky webhook tests:",
        "check the retry policy of the client",
        "find who owns payments",
        "list exempt endpoints",
    ]


def test_task_context_strings_are_needs_and_bare_values_are_not() -> None:
    context = {
        "questions": ["Which tickets were closed this week?", {"q": "Who approved the last deploy?"}],
        "lang": "python",
    }
    assert split_needs(["Prepare the release notes"], context).texts == [
        "Prepare the release notes",
        "Which tickets were closed this week?",
        "Who approved the last deploy?",
    ]


def test_the_bound_says_when_it_cuts() -> None:
    many = " ".join(f"Question number {n} asks about topic {n}." for n in range(12))
    found = split_needs([many])
    assert len(found.texts) == MAX_NEEDS and found.truncated
    assert not split_needs(["One question about the deploy pipeline?"]).truncated


def test_the_catalog_opens_with_each_needs_best_in_the_order_asked() -> None:
    ranked = [
        Candidate("m1", "a", "fact", answers={0: 6.0, 1: 5.0}),
        Candidate("m2", "b", "fact", answers={0: 5.5, 1: 7.0}),
        Candidate("m3", "c", "fact", answers={2: 4.0}),
        Candidate("m4", "d", "fact", answers={2: 4.5}),
        Candidate("m5", "e", "fact"),  # a neighbour or an associated hit: no need of its own
    ]
    # each need's most similar, in the order asked; then the rest as ranked
    assert [c.id for c in by_need(ranked, [1, 2])] == ["m2", "m4", "m1", "m3", "m5"]
    assert [c.id for c in by_need(ranked, [0, 1, 2])] == ["m1", "m2", "m4", "m3", "m5"]
    assert [c.id for c in by_need(ranked, [2, 0])] == ["m4", "m1", "m2", "m3", "m5"]
    assert [c.id for c in by_need(ranked, [1])] == ["m1", "m2", "m3", "m4", "m5"]  # one need: as ranked


def test_the_needs_are_asked_in_their_finest_form() -> None:
    asked = "Where are rate limits enforced and which endpoints must be exempt?"
    found = split_needs([asked, "Ship the gateway"])
    # the question's two clauses (not the question whole), then the goal
    assert [found.texts[i] for i in found.asked] == [
        "Where are rate limits enforced",
        "which endpoints must be exempt?",
        "Ship the gateway",
    ]
    assert split_needs(["One question about the deploy pipeline?"]).asked == [0]


def test_prose_and_dialogue_are_one_ask_and_lists_are_several() -> None:
    dialogue = '<Bart>: "I got a perfect score on my math test today!"\n<Assistant>: "Wow, that is awesome!"\n<Bart>: "How should I celebrate with my friends?"'
    found = split_needs([dialogue])
    assert len(found.texts) > 1 and found.asked == [0]  # every line searched, the whole asked
    listed = split_needs(
        [
            "Harden the API before launch:\n- where are rate limits enforced?\n- which endpoints must be exempt?"
        ]
    )
    assert [listed.texts[i] for i in listed.asked] == [
        "where are rate limits enforced?",
        "which endpoints must be exempt?",
    ]
