"""Near-duplicates and updates (services/consolidation.py) and folding a catalog by them
(services/folding.py): pure logic, no model, no database. Similarities are given in calibrated
units, as remember computes them from the embeddings."""

from __future__ import annotations

import itertools

import pytest

from slowave_graph.services import consolidation, folding
from slowave_graph.services.consolidation import Neighbour, judge_claims, relation
from slowave_graph.services.folding import SimilarEdge, echoed, fold

HIGH = 9.0  # well above both thresholds
MODERATE = 6.8  # above the update threshold, below the duplicate one


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Deploys of the shop go out through Argo CD", "The shop is deployed via ArgoCD"),
        (
            "Nightly builds are triggered at 02:00 UTC",
            "Every night at 2 AM UTC the nightly build is triggered",
        ),
        ("The orders service runs on PostgreSQL 15", "The orders service runs on a Postgres 15 DB"),
        ("Logs are archived to GCS after fifteen days", "After 15 days logs go to Google Cloud Storage"),
        # one recurrence, one date, one range written several ways
        (
            "Physio with Jonas every other Monday at 11:15",
            "Fortnightly on Mondays at 11:15 am: physio with Jonas",
        ),
        ("Piano lesson with Mrs. Okafor every Thursday", "Piano with Mrs. Okafor on Thursdays, every week"),
        ("Her passport expires on 22 August 2027", "2027-08-22 is the expiry of her passport"),
        (
            "The warehouse window is 02:00-04:00 UTC on Sundays",
            "On Sundays the warehouse window is 2am to 4am UTC",
        ),
        ("The warranty on the Bosch dishwasher runs 2 years", "The Bosch dishwasher has a two-year warranty"),
        # short forms inside identifiers, names written in lower case
        (
            "The reports-service uses Redis as its Celery broker",
            "Redis is the Celery broker of the reports service",
        ),
        ("They work as Product Designer at Kestrel Labs", "They work at Kestrel Labs as a product designer"),
        ("The orders-svc runs on PostgreSQL 15", "The orders service runs on PostgreSQL 15 in production"),
    ],
)
def test_paraphrases_with_the_same_values_are_duplicates(old: str, new: str) -> None:
    assert relation(new, old, HIGH) == "duplicate"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("The staging database is in us-east-1", "The staging DB moved to eu-west-2"),
        ("The CI coverage threshold is 80%", "The CI coverage threshold is 85%"),
        ("Weekly 1:1 with Carlos is on Mondays at 10:00", "The weekly 1:1 with Carlos is on Mondays at 2 pm"),
        ("The staging cluster is shut down at night", "The staging cluster is no longer shut down at night"),
        ("Images are pushed to Docker Hub", "Images are pushed to GHCR instead of Docker Hub"),
        ("Release branches are cut every other Tuesday", "Release branches are cut every Tuesday"),
    ],
)
def test_a_new_value_for_the_same_subject_is_an_update(old: str, new: str) -> None:
    assert relation(new, old, HIGH) == "update"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # one template filled for two subjects
        ("Stage 3 of the pipeline publishes to queue q3", "Stage 4 of the pipeline publishes to queue q4"),
        ("The billing service listens on port 8080", "The search service listens on port 9090"),
        ("Kafka broker disk alerts trigger at 85%", "Kafka broker CPU alerts trigger at 85%"),
        ("Datadog log retention is 15 days", "Datadog metrics retention is 15 months"),
        (
            "The Netflix subscription renews on the 3rd of each month",
            "The Disney+ subscription renews on the 3rd of each month",
        ),
        ("The mother's birthday is 9 November", "The mother-in-law's birthday is 9 November"),
        # two facts about one subject
        ("Production deploys need one approving review", "Production deploys are frozen on Fridays"),
    ],
)
def test_claims_that_only_look_alike_are_neither(old: str, new: str) -> None:
    assert relation(new, old, HIGH) is None


def test_two_remarks_of_one_conversation_are_not_one_claim() -> None:
    # a speaker, a date and a time are all they share: a date names no thing
    old = "John (5:04 pm on 6 May, 2023): That pic makes me think of how important housing is"
    new = "John (5:04 pm on 6 May, 2023): Definitely! Everyone should have access to affordable housing"
    assert relation(new, old, MODERATE) is None


def test_below_the_update_threshold_nothing_is_judged() -> None:
    assert relation("The staging DB moved to eu-west-2", "The staging database is in us-east-1", 3.0) is None
    # without a name or value on either side, a paraphrase needs the higher similarity
    old, new = "Shop deploys need a green build", "The shop only deploys after a green build"
    assert relation(new, old, MODERATE) is None and relation(new, old, HIGH) == "duplicate"


def test_forty_facts_from_one_template_link_nothing() -> None:
    facts = [f"Stage {n} of the ingest pipeline publishes to queue q{n}" for n in range(40)]
    linked = [(a, b) for a, b in itertools.permutations(facts, 2) if relation(a, b, HIGH) is not None]
    assert linked == []


def test_a_call_links_to_stored_memories_and_to_its_own_earlier_claims() -> None:
    claims = ["The staging DB moved to eu-west-2", "Staging database: eu-west-2 region"]
    vectors = [[1.0, 0.0], [0.99, 0.141]]  # cosine 0.99 between the two claims
    stored = [[Neighbour("sch_1", "The staging database is in us-east-1", 0.9)], []]
    links = judge_claims(claims, vectors, stored, lambda cosine: cosine * 10)
    assert [(x.target, x.kind) for x in links[0]] == [("sch_1", "update")]
    assert [(x.target, x.kind) for x in links[1]] == [("#0", "duplicate")]
    # the very same text is no duplicate: remember matches it instead
    same = judge_claims(["Deploys use Argo CD."], [[1.0, 0.0]], [[Neighbour("sch_2", "deploys use argo cd", 1.0)]],
                        lambda cosine: cosine * 10)  # fmt: skip
    assert same == [[]]


def test_a_duplicate_cluster_is_shown_once_through_its_best_member() -> None:
    order = [("a", "direct"), ("b", "direct"), ("c", "direct"), ("d", "associated")]
    edges = [SimilarEdge("c", "a", "duplicate"), SimilarEdge("d", "c", "duplicate")]
    folded = fold(order, edges, {})
    assert [(f.id, f.also_stored_as, f.conflicts_with) for f in folded] == [
        ("a", ["c", "d"], []),
        ("b", [], []),
    ]


def test_an_update_pair_stands_together_newest_first_and_a_missing_partner_comes_in() -> None:
    order = [("x", "direct"), ("old", "direct"), ("y", "direct"), ("new", "direct")]
    created = {"old": 100.0, "new": 200.0, "outside": 300.0}
    folded = fold(order, [SimilarEdge("new", "old", "update")], created)
    assert [f.id for f in folded] == ["x", "new", "old", "y"]
    assert {f.id: f.conflicts_with for f in folded}["new"] == ["old"]
    # the partner the search did not admit is placed beside the one it did
    folded = fold(
        [("x", "direct"), ("old", "associated")], [SimilarEdge("outside", "old", "update")], created
    )
    assert [(f.id, f.pathway, f.conflicts_with) for f in folded] == [
        ("x", "direct", []),
        ("outside", "associated", ["old"]),
        ("old", "associated", ["outside"]),
    ]


def test_an_update_group_is_bounded() -> None:
    chain = [SimilarEdge(f"m{i}", "m0", "update") for i in range(1, 10)]  # nine updates of one memory
    created = {f"m{i}": float(i) for i in range(10)}
    folded = fold([("m0", "direct")], chain, created)
    assert len(folded) == folding.GROUP_MAX and "m0" in [f.id for f in folded]


def test_what_the_agent_just_said_is_left_out() -> None:
    said = "deploy the shop. remember: deploys of the shop go out through argo cd, so use it"
    assert echoed("Deploys of the shop go out through Argo CD.", said)
    assert not echoed("Deploys of the shop go out through Argo CD on Tuesdays", said)
    assert not echoed("Use it", said), "too short to count as said"
    assert consolidation.NEIGHBOURS >= 4


def test_a_rule_restated_is_one_lesson_and_a_changed_rule_is_not() -> None:
    # "running" with an object is a verb, not the state of something ("the VM is running")
    older = "Run uv sync before running the test suite, otherwise the tests import stale packages"
    newer = "Always do a uv sync before you run the tests; without it stale packages get imported"
    assert consolidation.same_lesson(newer, older, HIGH)
    assert not consolidation.same_lesson("The VM is stopped at night", "The VM is running at night", HIGH)
    assert not consolidation.same_lesson(
        "The GraphQL endpoint on the api-gateway was changed to /api/graphql",
        "The GraphQL endpoint on the api-gateway is /graphql",
        HIGH,
    )
