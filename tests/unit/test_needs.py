"""A request's needs (services/needs.py) and the catalog's order by need (services/ranking.py):
pure logic, no model, no database."""

from __future__ import annotations

from dataclasses import replace

from slowave_graph.services.needs import MAX_NEEDS, split_needs
from slowave_graph.services.ranking import DEFAULT_POLICY, Candidate, by_need, worth_reading


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


def _hit(memory_id: str, score: float, answers: dict[int, float] | None = None) -> Candidate:
    cand = Candidate(memory_id, memory_id, "fact", answers=answers if answers is not None else {0: 5.0})
    cand.score = score
    return cand


def test_the_catalog_keeps_its_head_and_the_tail_near_each_needs_best() -> None:
    policy = replace(DEFAULT_POLICY, catalog_head=2, catalog_gap=3.0)
    ranked = [_hit("m1", 20.0), _hit("m2", 12.0), _hit("m3", 17.5), _hit("m4", 16.9), _hit("m5", 17.0, {})]
    # the head (the first two, however far below) stays; beyond it only what lies within 3 of the best
    assert [c.id for c in worth_reading(ranked, [0], policy)] == ["m1", "m2", "m3", "m5"]
    assert worth_reading(ranked[:2], [0], policy) == ranked[:2]  # nothing beyond the head

    # two needs: the head is two per need, and each tail hit is judged against its own need's best
    two = [
        _hit("a1", 20.0, {0: 7.0}),
        _hit("a2", 19.0, {0: 6.0}),
        _hit("a3", 18.0, {0: 5.0}),
        _hit("a4", 15.0, {0: 4.0}),  # 5 below need 0's best: cut
        _hit("b1", 11.0, {1: 7.0}),
        _hit("b2", 10.0, {1: 6.0}),
        _hit("b3", 9.0, {1: 5.0}),  # 2 below need 1's best, though 11 below the catalog's: kept
        _hit("b4", 7.0, {1: 4.0}),  # 4 below need 1's best: cut
    ]
    kept = [c.id for c in worth_reading(two, [0, 1], policy)]
    assert kept == ["a1", "a2", "a3", "b1", "b2", "b3"]
    # with one need asked the head is two; need 1's hits are then judged against their own best too
    assert [c.id for c in worth_reading(two, [0], policy)] == ["a1", "a2", "a3", "b1", "b2", "b3"]
