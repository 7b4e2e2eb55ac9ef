"""Contract fidelity: a client written against the reference contract works unchanged.

The scenarios join the conformance scenarios (tests/support/conformance.py, named fidelity_<point>_…)
and run with them in-process, over stdio and over streamable HTTP (tests/integration/
test_conformance.py). Points that need a short idle timeout (16b) or two clients of one server (17)
have their own tests in tests/integration/test_fidelity.py.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from typing import Any

from mcp import Client

from tests.support.conformance import (
    AUDIT_NOTES,
    Scenario,
    procedure_session,
    recall_continue,
    remember_many,
    scenario,
    seeded,
)
from tests.support.mcp_helpers import (
    activate,
    call,
    commit,
    commit_args,
    error,
    ok,
    paths,
    recall,
    remember,
    settle,
)


def fidelity(name: str) -> Callable[[Scenario], Scenario]:
    return scenario(f"fidelity_{name}")


AUDIT_QUESTION = "Which Atlas sign-in audit rules throttle failed sign-ins?"
STEPS = [{"summary": "Build the image"}, {"summary": "Roll it out"}]


async def feedback(client: Client, retrieval_id: str, **fields: Any) -> dict[str, Any]:
    return ok(await call(client, "slowave_feedback", {"retrieval_id": retrieval_id, **fields}))


def rejections(data: dict[str, Any]) -> list[tuple[str, str]]:
    return [(r["target_id"], r["reason"]) for r in data["rejected"]]


async def all_pages(client: Client, scope: str, session: str, first: dict[str, Any]) -> list[dict[str, Any]]:
    """A result's first page followed by every continuation page."""
    pages = [first]
    while pages[-1].get("continue_from"):
        pages.append(await recall_continue(client, scope, session, pages[-1]["continue_from"]))
    return pages


# --------------------------------------------------------------------------- 1
@fidelity("01_feedback_applied_lists_target_ids")
async def applied_ids(client: Client, scope: str) -> None:
    """Point 1: applied holds lists of target id strings; salience moves to salience_changes."""
    [memory] = await seeded(client, scope, ["The shop API answers on port 8443 behind the ingress"])
    act = await activate(client, scope, "Which port does the shop API answer on?")
    assert [m["memory_id"] for m in act["memories"]] == [memory]
    data = await feedback(
        client,
        act["retrieval_id"],
        memory_feedback=[{"memory_id": memory, "assessment": "used", "effect": "helped"}],
    )
    applied = data["applied"]
    assert set(applied) >= {"strengthened", "weakened", "unchanged", "neutral", "stale"}, applied
    for key in ("strengthened", "weakened", "unchanged", "neutral", "stale"):
        assert all(isinstance(target, str) for target in applied[key]), applied
    assert memory in applied["strengthened"], applied
    if data.get("salience_changes") is not None:
        [change] = [c for c in data["salience_changes"] if c["target_id"] == memory]
        assert set(change) == {"target_id", "before", "after"} and change["after"] > change["before"]


# --------------------------------------------------------------------------- 2
@fidelity("02_commit_procedure_version_and_optional_context")
async def procedure_version(client: Client, scope: str) -> None:
    """Point 2: procedure.version (strict int, default 2) accepted, procedure.context optional."""
    goal = "Publish the harbor registry mirror"
    act = await activate(client, scope, goal)
    await settle(client, act)
    proc: dict[str, Any] = {
        "summary": "Mirror the harbor registry",
        "steps": STEPS,
        "caveats": [],
        "version": "2",
    }
    bad = await call(
        client, "slowave_commit", commit_args(act["session_id"], final_goal=goal, procedure=proc)
    )
    assert "procedure.version" in paths(error(bad, "invalid_input"))
    proc["version"] = 2  # no context at all
    done = await commit(client, act["session_id"], final_goal=goal, procedure=proc)
    assert done["procedure_id"] == "proc_" + act["session_id"]

    act2 = await activate(client, scope, "Publish the harbor registry mirror again")
    await settle(client, act2)
    unversioned = {"summary": "Mirror it", "context": {"tool": "skopeo"}, "steps": STEPS, "caveats": []}
    assert (await commit(client, act2["session_id"], procedure=unversioned))["committed"] is True

    act3 = await activate(client, scope, "Review the registry")
    found = await recall(client, scope, act3["session_id"], "How do we publish the harbor registry mirror?")
    contexts = {p["procedure_id"]: p["context"] for p in found["procedures"]}
    assert contexts.get(done["procedure_id"]) == {}, found["procedures"]


# --------------------------------------------------------------------------- 3
@fidelity("03_trajectory_status_optional")
async def trajectory_status(client: Client, scope: str) -> None:
    """Point 3: trajectory[].status is optional (default unknown)."""
    act = await activate(client, scope, "Rotate the TLS certificates")
    await settle(client, act)
    trajectory = [
        {"kind": "action", "summary": "Renewed the certificate with certbot"},
        {"kind": "observation", "summary": "The ingress picked up the new certificate"},
    ]
    done = await commit(client, act["session_id"], trajectory=trajectory)
    assert done["committed"] is True and done["operation"] == "closed"


# --------------------------------------------------------------------------- 4
GOOD_CONTEXT = {"task.type": "deploy", "service-name": "shop-api", "env:prod": True}
BAD_CONTEXTS = [{"Bad": 1}, {"9x": 1}]


@fidelity("04_context_keys_and_deduplication_key_pattern")
async def context_keys(client: Client, scope: str) -> None:
    """Point 4: context keys and deduplication_key match ^[a-z][a-z0-9_.:-]{0,63}$."""
    for bad in BAD_CONTEXTS:
        args = {"task": "Deploy", "initial_goal": "Deploy", "scope": scope, "task_context": bad}
        err = error(await call(client, "slowave_activate", args), "invalid_input")
        assert any(p.startswith("task_context") for p in paths(err)), err
    act = await activate(client, scope, "Deploy the shop API", task_context=GOOD_CONTEXT)
    session = act["session_id"]
    found = await recall(client, scope, session, "How do we deploy the shop API?", task_context=GOOD_CONTEXT)
    for bad in BAD_CONTEXTS:
        args = {"scope": scope, "session_id": session, "query": "How?", "task_context": bad}
        err = error(await call(client, "slowave_recall", args), "invalid_input")
        assert any(p.startswith("task_context") for p in paths(err)), err
    await settle(client, act)
    await settle(client, found)
    proc: dict[str, Any] = {"summary": "Deploy with helm", "steps": STEPS, "caveats": []}
    for bad in BAD_CONTEXTS:
        bad_context = commit_args(session, procedure={**proc, "context": bad})
        assert error(await call(client, "slowave_commit", bad_context), "invalid_input")["field_errors"]
    bad_key = {**proc, "context": GOOD_CONTEXT, "deduplication_key": "Deploy Harbor"}
    err = error(
        await call(client, "slowave_commit", commit_args(session, procedure=bad_key)), "invalid_input"
    )
    assert "procedure.deduplication_key" in paths(err), err
    good = {**proc, "context": GOOD_CONTEXT, "deduplication_key": "deploy.harbor"}
    assert (await commit(client, session, procedure=good))["procedure_id"] == "proc_" + session


# --------------------------------------------------------------------------- 5
@fidelity("05_stale_with_any_reason_may_carry_a_replacement")
async def stale_replacement(client: Client, scope: str) -> None:
    """Point 5: a contradicted/outdated stale entry may name replacement_memory_id."""
    old = await seeded(
        client,
        scope,
        ["The invoice service retries failed payments twice", "The invoice service sends reminders weekly"],
    )
    act = await activate(client, scope, "How does the invoice service retry payments and send reminders?")
    assert sorted(m["memory_id"] for m in act["memories"]) == sorted(old)
    session = act["session_id"]
    retries = await remember(client, scope, session, "The invoice service retries failed payments five times")
    reminders = await remember(client, scope, session, "The invoice service sends reminders every three days")
    data = await feedback(
        client,
        act["retrieval_id"],
        coverage="complete",
        memory_feedback=[
            {"memory_id": old[0], "assessment": "stale", "stale_reason": "contradicted",
             "reason": "the retry policy changed", "replacement_memory_id": retries["memory_id"]},
            {"memory_id": old[1], "assessment": "stale", "stale_reason": "outdated",
             "reason": "reminders moved to every three days", "replacement_memory_id": reminders["memory_id"]},
        ],
    )  # fmt: skip
    assert data["rejected"] == [] and data["coverage"] == "complete", data
    assert data["outstanding"] == {"memory_ids": [], "procedure_ids": []}
    assert sorted(data["applied"]["stale"]) == sorted(old)
    assert (await commit(client, session))["committed"] is True


# --------------------------------------------------------------------------- 6
PROCEDURE_VARIANTS = [
    ("deploy_blue_green", "Deploy the shop API with a blue-green switch",
     "Blue-green deploy of the shop API behind the load balancer"),
    ("deploy_canary", "Deploy the shop API with a canary release",
     "Canary deploy of the shop API: a small share of traffic first, then all of it"),
    ("deploy_rolling", "Deploy the shop API with a rolling update",
     "Rolling update of the shop API pods, one replica at a time"),
    ("deploy_pipeline", "Deploy the shop API from the release pipeline",
     "Deploy the shop API by promoting the release pipeline build"),
    ("deploy_hotfix", "Deploy a hotfix of the shop API",
     "Hotfix deploy of the shop API straight from the release branch"),
]  # fmt: skip
FULL_PROCEDURE_KEYS = {
    "procedure_id", "goal", "summary", "context", "steps", "caveats",
    "outcome", "outcome_summary", "created_at", "evidence", "contributions",
}  # fmt: skip


@fidelity("06_procedures_page_three_at_a_time")
async def procedure_pages(client: Client, scope: str) -> None:
    """Point 6: at most 3 procedures per page, the rest by continue_from, feedback-eligible once served."""
    ids = [
        await procedure_session(client, scope, goal, "success", key=key, summary=summary)
        for key, goal, summary in PROCEDURE_VARIANTS
    ]
    act = await activate(client, scope, "Deploy the shop API to production")
    session = act["session_id"]
    first = [p["procedure_id"] for p in act["procedures"]]
    assert len(first) == 3 and set(first) <= set(ids), act["procedures"]
    assert act["more_available"] is True and act.get("continue_from"), act
    field = act["accessible_field"]
    assert "procedure" in field["kinds"], field
    unseen_memories = act["relevant_total"] - len(act["memories"])
    assert field["extra_candidates"] == len(ids) - 3 + unseen_memories, field
    rest = sorted(set(ids) - set(first))
    # not served yet: not feedback-eligible
    early = await feedback(
        client, act["retrieval_id"], procedure_feedback=[{"procedure_id": rest[0], "use": "not_used"}]
    )
    assert rejections(early) == [(rest[0], "target_not_exposed")]
    page_one = await feedback(
        client,
        act["retrieval_id"],
        memory_feedback=[{"memory_id": m["memory_id"], "assessment": "not_used"} for m in act["memories"]],
        procedure_feedback=[{"procedure_id": p, "use": "not_used"} for p in first],
    )
    assert page_one["rejected"] == []
    served: list[str] = []
    for page in (await all_pages(client, scope, session, act))[1:]:
        for procedure in page["procedures"]:
            assert set(procedure) >= FULL_PROCEDURE_KEYS, procedure
        served.extend(p["procedure_id"] for p in page["procedures"])
    assert sorted(served) == rest and len(served) == len(set(served)), served
    err = error(await call(client, "slowave_commit", commit_args(session)), "incomplete_feedback")
    [outstanding] = [o for o in err["outstanding"] if o["retrieval_id"] == act["retrieval_id"]]
    assert sorted(outstanding["procedure_ids"]) == rest, err
    done = await feedback(
        client,
        act["retrieval_id"],
        coverage="complete",
        procedure_feedback=[{"procedure_id": p, "use": "not_used"} for p in rest],
    )
    assert done["rejected"] == [] and done["coverage"] == "complete", done
    assert (await commit(client, session))["committed"] is True


# --------------------------------------------------------------------------- 7
@fidelity("07_verification_evidence_refs_optional")
async def evidence_refs_optional(client: Client, scope: str) -> None:
    """Point 7: verification.evidence_refs is optional (default [])."""
    act = await activate(client, scope, "Upgrade the node runtime")
    await settle(client, act)
    verification = {"status": "verified", "summary": "The smoke tests passed."}
    done = await commit(client, act["session_id"], verification=verification)
    assert done["committed"] is True and done["verification_status"] == "verified"


# --------------------------------------------------------------------------- 8
@fidelity("08_feedback_rejection_codes_and_order")
async def rejection_codes(client: Client, scope: str) -> None:
    """Point 8: per-target rejection codes, fields and order as in the reference contract; batch unknown → invalid_input."""
    first, second, hidden = await seeded(
        client,
        scope,
        [
            "The staging database is PostgreSQL 16",
            "Staging deploys need a green CI run",
            "The CDN caches product images for 24 hours",
        ],
    )
    proc = await procedure_session(client, scope, "Deploy the shop API with a blue-green switch", "success")
    act = await activate(client, scope, "How do we deploy to the staging database?")
    shown = {m["memory_id"] for m in act["memories"]}
    assert {first, second} <= shown and hidden not in shown, act["memories"]
    found = await recall(
        client, scope, act["session_id"], "How do we deploy the shop API with a blue-green switch?"
    )
    assert proc in [p["procedure_id"] for p in found["procedures"]], found["procedures"]

    stale = {"assessment": "stale", "stale_reason": "superseded", "reason": "replaced"}
    memory_cases: list[tuple[dict[str, Any], str]] = [
        ({"memory_id": first, "assessment": "already_known", "effect": "helped"},
         "already_known_requires_unknown_or_absent_effect"),
        ({"memory_id": first, "assessment": "already_known", "replacement_memory_id": second},
         "already_known_requires_no_replacement"),
        ({"memory_id": first, "assessment": "irrelevant", "effect": "harmed"},
         "irrelevant_requires_unknown_or_absent_effect"),
        ({"memory_id": first, "assessment": "stale", "effect": "helped", "stale_reason": "outdated",
          "reason": "no longer true"}, "stale_requires_unknown_or_absent_effect"),
        ({"memory_id": first, "assessment": "used", "stale_reason": "outdated"},
         "stale_reason_requires_stale_assessment"),
        ({"memory_id": first, "assessment": "used", "replacement_memory_id": second},
         "replacement_requires_stale_assessment"),
        ({"memory_id": first, **stale, "replacement_memory_id": first}, "replacement_matches_retired_memory"),
        ({"memory_id": first, **stale, "replacement_memory_id": "not-an-id"}, "invalid_replacement_memory_id"),
        ({"memory_id": first, **stale, "replacement_memory_id": "sch_999999999"}, "replacement_not_found"),
        # order: not exposed is checked before the assessment
        ({"memory_id": hidden, "assessment": "useful"}, "target_not_exposed"),
    ]  # fmt: skip
    for entry, reason in memory_cases:
        data = await feedback(client, act["retrieval_id"], memory_feedback=[entry])
        assert rejections(data) == [(entry["memory_id"], reason)], (entry, data["rejected"])
    unexposed = await feedback(
        client, act["retrieval_id"], memory_feedback=[{"memory_id": hidden, "assessment": "used"}]
    )
    [rejected] = unexposed["rejected"]
    assert (rejected["reason"], rejected["field"]) == ("target_not_exposed", "target_id"), rejected

    procedure_cases: list[tuple[dict[str, Any], str]] = [
        ({"procedure_id": proc, "use": "used", "effect": "great", "contribution": "followed it"},
         "invalid_procedure_effect"),
        ({"procedure_id": proc, "use": "not_used", "contribution": "skimmed it"},
         "not_used_requires_unknown_effect_and_no_contribution"),
        ({"procedure_id": proc, "use": "not_used", "effect": "helped"},
         "not_used_requires_unknown_effect_and_no_contribution"),
    ]  # fmt: skip
    for proc_entry, reason in procedure_cases:
        data = await feedback(client, found["retrieval_id"], procedure_feedback=[proc_entry])
        assert rejections(data) == [(proc, reason)], (proc_entry, data["rejected"])

    batch = ok(
        await call(
            client,
            "slowave_feedback",
            {"items": [{"retrieval_id": "ctx_doesnotexist", "coverage": "complete"},
                       {"retrieval_id": act["retrieval_id"]}]},
        )
    )  # fmt: skip
    bad, good = batch["results"]
    assert bad["ok"] is False and bad["error"]["code"] == "invalid_input", bad
    assert good["ok"] is True and good["data"]["retrieval_id"] == act["retrieval_id"], good
    scalar = await call(client, "slowave_feedback", {"retrieval_id": "ctx_doesnotexist"})
    error(scalar, "not_found")


# --------------------------------------------------------------------------- 9
EXCERPT_LIMIT = 1_024
ORION_TARGET = "The Orion metrics exporter listens on port 9464 for Prometheus scrapes."
ORION_PARTS = [
    ("ingest gateway", "Kafka", "platform"), ("scheduler", "etcd", "batch"),
    ("billing adapter", "PostgreSQL", "payments"), ("search indexer", "OpenSearch", "discovery"),
    ("thumbnail worker", "S3", "media"), ("session broker", "Redis", "identity"),
    ("audit trail", "ClickHouse", "security"), ("report builder", "DuckDB", "analytics"),
    ("mail relay", "SQLite", "messaging"), ("feature gate", "Consul", "growth"),
    ("pricing engine", "MongoDB", "commerce"), ("geo resolver", "MaxMind", "maps"),
    ("webhook fanout", "NATS", "integrations"), ("ledger writer", "FoundationDB", "finance"),
    ("quota keeper", "Cassandra", "infrastructure"), ("export bundler", "MinIO", "data"),
    ("translation cache", "Memcached", "localisation"), ("fraud scorer", "Feast", "risk"),
    ("inventory sync", "MySQL", "warehouse"), ("label printer", "CUPS", "shipping"),
    ("consent registry", "Vault", "privacy"), ("notification hub", "Firebase", "mobile"),
    ("catalog importer", "Parquet files", "merchandising"), ("support router", "Zendesk", "care"),
    ("ranking trainer", "MLflow", "relevance"), ("backup agent", "restic", "reliability"),
    ("coupon minter", "DynamoDB", "marketing"), ("tax calculator", "Avalara", "compliance"),
    ("image optimiser", "libvips", "frontend"), ("health prober", "Blackbox", "operations"),
    ("licence checker", "Postgres extensions", "legal"), ("chat bridge", "Matrix", "community"),
    ("dns updater", "Route 53", "networking"), ("secret rotator", "KMS", "security"),
    ("ticket merger", "Jira", "delivery"), ("survey collector", "Typeform", "research"),
    ("dunning mailer", "Stripe", "revenue"), ("sitemap writer", "GCS", "seo"),
]  # fmt: skip


def orion_text() -> str:
    """About 3,000 characters of distinct sentences; the one a question targets in the middle."""
    sentences = [
        f"The Orion {component} keeps its state in {store} and belongs to the {team} team."
        for component, store, team in ORION_PARTS
    ]
    sentences.insert(len(sentences) // 2, ORION_TARGET)
    return " ".join(sentences)


def sized(topic: str, n: int) -> str:
    """A memory of exactly n characters about one topic."""
    text = topic
    i = 0
    while len(text) < n:
        text += f" Detail {i} of the {topic.split()[1]} record is kept here for the audit."
        i += 1
    text = text[:n]
    return text if not text[-1].isspace() else text[:-1] + "."


def check_excerpt(item: dict[str, Any], original: str, needle: str) -> None:
    excerpt = (item.get("provenance") or {}).get("source_excerpt")
    assert excerpt is not None, item
    assert excerpt["version"] == 1 and excerpt["source_chars"] == len(original), excerpt
    spans = excerpt["source_spans"]
    assert spans, excerpt
    end_before = 0
    for start, end in spans:
        assert end_before <= start < end <= len(original), spans  # sorted, non-overlapping, in range
        assert end == len(original) or original[end].isspace() or original[end] in string.punctuation, (
            spans, original[end - 10 : end + 10])  # fmt: skip
        end_before = end
    assert sum(end - start for start, end in spans) <= EXCERPT_LIMIT, spans
    assert item["content"] == "\n".join(original[start:end] for start, end in spans)
    assert needle in item["content"], item["content"]


@fidelity("09_long_memories_as_source_spans")
async def source_spans(client: Client, scope: str) -> None:
    """Point 9: ≤1,024 characters verbatim; longer as contiguous source spans with source_excerpt."""
    harbor = sized("The Harbor registry mirror syncs container images from Docker Hub every night.", 1_000)
    nimbus = sized("The Nimbus billing export writes invoice CSV files to the finance bucket.", 1_024)
    orion = orion_text()
    assert len(harbor) == 1_000 and len(nimbus) == 1_024 and len(orion) > 2_900
    await seeded(client, scope, [harbor, nimbus, orion])
    act = await activate(client, scope, "Review the platform notes")
    session = act["session_id"]
    for original, question in (
        (harbor, "How often does the Harbor registry mirror sync container images?"),
        (nimbus, "Where does the Nimbus billing export write invoice files?"),
    ):
        found = await recall(client, scope, session, question, page_size=10)
        [item] = [m for m in found["memories"] if m["content"][:40] == original[:40]]
        assert item["content"] == original
        assert (item.get("provenance") or {}).get("source_excerpt") is None, item
    question = "Which port does the Orion metrics exporter listen on?"
    found = await recall(client, scope, session, question, page_size=10)
    [item] = [m for m in found["memories"] if "Orion" in m["content"]]
    check_excerpt(item, orion, ORION_TARGET)
    primed = await activate(client, scope, question)
    [item] = [m for m in primed["memories"] if "Orion" in m["content"]]
    check_excerpt(item, orion, ORION_TARGET)


# --------------------------------------------------------------------------- 10
KEYSTONE = [
    "The Atlas login service issues tokens that expire after 45 minutes.",
    "Atlas tokens are signed by the Keystone vault.",
    "The Keystone vault also stores the Atlas database password.",
    "Keystone vault rotates its signing keys every Sunday night.",
    "The cafeteria serves lasagna on Fridays.",
    # a scope of 65: a concept in 3 memories is specific (5 %), not a hub
    *(f"Locker {i} on the second floor is free again." for i in range(60)),
]
KEYSTONE_QUESTION = "Who signs the Atlas tokens?"


@fidelity("10_page_size_counts_associated_hits")
async def page_size_is_a_maximum(client: Client, scope: str) -> None:
    """Point 10: page_size is the maximum number of memories on a page, associated hits included."""
    await seeded(client, scope, KEYSTONE)
    pathways: set[str] = set()
    for page_size in (1, 2, 5):
        act = await activate(client, scope, KEYSTONE_QUESTION, page_size=page_size)
        session = act["session_id"]
        found = await recall(client, scope, session, KEYSTONE_QUESTION, page_size=page_size)
        for first in (act, found):
            pages = await all_pages(client, scope, session, first)
            seen = [m["memory_id"] for page in pages for m in page["memories"]]
            for page in pages:
                assert len(page["memories"]) <= page_size, (page_size, page["memories"])
                pathways.update(m["pathway"] for m in page["memories"])
            assert len(seen) == len(set(seen)) == first["relevant_total"], (page_size, seen)
    assert "associated" in pathways, "the scope should produce associated hits"


# --------------------------------------------------------------------------- 11
@fidelity("11_evidence_on_first_recall_page_only")
async def evidence_first_page(client: Client, scope: str) -> None:
    """Point 11: a continuation page has evidence == [] and evidence_truncated false."""
    await seeded(client, scope, AUDIT_NOTES[:12])
    act = await activate(client, scope, "Review the rules")
    first = await recall(client, scope, act["session_id"], AUDIT_QUESTION)
    assert first["evidence"] and first["more_available"] is True, first
    for page in (await all_pages(client, scope, act["session_id"], first))[1:]:
        assert page["memories"], page
        assert page["evidence"] == [] and page["evidence_truncated"] is False, page["evidence"]


# --------------------------------------------------------------------------- 12
@fidelity("12_accessible_field_kinds_are_sorted_pathways")
async def accessible_kinds(client: Client, scope: str) -> None:
    """Point 12: accessible_field is {} or {extra_candidates, kinds (sorted pathway labels), approx_extra_tokens}."""
    await seeded(client, scope + "-audit", AUDIT_NOTES[:12])
    await seeded(client, scope, KEYSTONE)
    for sub, question, page_size in (
        (scope + "-audit", AUDIT_QUESTION, 5),
        (scope, KEYSTONE_QUESTION, 1),
    ):
        act = await activate(client, sub, question, page_size=page_size)
        for first in (act, await recall(client, sub, act["session_id"], question, page_size=page_size)):
            pages = await all_pages(client, sub, act["session_id"], first)
            assert len(pages) > 1, first
            for n, page in enumerate(pages):
                field = page["accessible_field"]
                later = [m for p in pages[n + 1 :] for m in p["memories"]]
                if not page["more_available"]:
                    assert field == {} and later == [], page
                    continue
                assert set(field) == {"extra_candidates", "kinds", "approx_extra_tokens"}, field
                assert field["kinds"] == sorted({m["pathway"] for m in later}), (field, later)
                assert field["extra_candidates"] == len(later), (field, later)


# --------------------------------------------------------------------------- 13
@fidelity("13_recall_carries_session_id")
async def recall_session_id(client: Client, scope: str) -> None:
    """Point 13: recall responses (page 1 and continuations) carry the session's session_id."""
    await seeded(client, scope, AUDIT_NOTES[:12])
    act = await activate(client, scope, "Review the rules")
    first = await recall(client, scope, act["session_id"], AUDIT_QUESTION)
    pages = await all_pages(client, scope, act["session_id"], first)
    assert len(pages) > 1
    assert [page.get("session_id") for page in pages] == [act["session_id"]] * len(pages)


# --------------------------------------------------------------------------- 14
@fidelity("14_scope_whitespace_is_trimmed")
async def trimmed_scope(client: Client, scope: str) -> None:
    """Point 14: a scope with surrounding whitespace is trimmed, not rejected."""
    padded = f"  {scope}  "
    act = await activate(client, padded, "Record the cache settings")
    stored = await remember(
        client, padded, act["session_id"], "The edge cache keeps HTML pages for 60 seconds"
    )
    assert stored["scope"] == scope
    [batch] = await remember_many(client, padded, act["session_id"], ["The edge cache ignores query strings"])
    await settle(client, act)
    await commit(client, act["session_id"])
    question = "How long does the edge cache keep HTML pages, and does it ignore query strings?"
    plain = await activate(client, scope, question)
    spaced = await activate(client, padded, question)
    assert {stored["memory_id"], batch} <= {m["memory_id"] for m in plain["memories"]}, plain["memories"]
    assert {m["memory_id"] for m in spaced["memories"]} == {m["memory_id"] for m in plain["memories"]}
    found = await recall(client, padded, spaced["session_id"], "How long are HTML pages cached at the edge?")
    assert stored["memory_id"] in [m["memory_id"] for m in found["memories"]]


# --------------------------------------------------------------------------- 15
REAL_STEPS = [
    {
        "kind": "action",
        "summary": "Ran alembic upgrade head against the staging database",
        "status": "succeeded",
    },
    {"kind": "observation", "summary": "The orders table gained a discount column", "status": "succeeded"},
]
NARRATION = [
    {"kind": "action", "summary": "Activated the Slowave session.", "status": "succeeded"},
    {"kind": "action", "summary": "Submitted retrieval feedback.", "status": "succeeded"},
    {"kind": "action", "summary": "Called slowave_recall for deploy notes", "status": "succeeded"},
]


@fidelity("15_lifecycle_narration_filtered_from_episodes")
async def lifecycle_filtered(client: Client, scope: str) -> None:
    """Point 15: lifecycle narration is kept out of episodes and counted in trajectory_lifecycle_filtered."""
    act = await activate(client, scope, "Migrate the orders table")
    stored = await remember(
        client, scope, act["session_id"], "Migration 42 added a discount column to orders"
    )
    await settle(client, act)
    trajectory = [NARRATION[0], REAL_STEPS[0], NARRATION[1], NARRATION[2], REAL_STEPS[1]]
    done = await commit(client, act["session_id"], trajectory=trajectory)
    assert done["trajectory_lifecycle_filtered"] == 3, done
    later = await activate(client, scope, "Check the orders schema")
    found = await recall(
        client, scope, later["session_id"], "Which column did migration 42 add to orders?", evidence="full"
    )
    assert stored["memory_id"] in [m["memory_id"] for m in found["memories"]]
    [episode] = [e for e in found["evidence"] if e["source_kind"] == "episode"]
    for step in REAL_STEPS:
        assert step["summary"] in episode["content"], episode
    for step in NARRATION:
        assert step["summary"] not in episode["content"], episode


# --------------------------------------------------------------------------- 16 (a; b is standalone)
@fidelity("16a_committing_an_ended_session_updates_it")
async def recommit(client: Client, scope: str) -> None:
    """Point 16a: a first commit reports already_ended false; committing again updates the outcome."""
    await seeded(client, scope, ["Release notes are published on the status page"])
    act = await activate(client, scope, "Where are release notes published?")
    assert act["memories"]
    await settle(client, act)
    first = await commit(client, act["session_id"])
    assert first["operation"] == "closed" and first["already_ended"] is False, first
    again = await commit(client, act["session_id"], "failure")
    assert again["operation"] == "updated" and again["already_ended"] is True, again
    assert again["outcome"] == "failure"


# --------------------------------------------------------------------------- 18 (17 is standalone)
@fidelity("18a_scope_fragmentation_only_on_cold_start")
async def fragmentation(client: Client, scope: str) -> None:
    """Point 18a: scope_fragmentation is warned only while the variant scope is cold."""
    await seeded(client, f"{scope}-Shop-X", ["The Shop-X storefront runs on Next.js"])
    variant = f"{scope}_shop_x"
    cold = await activate(client, variant, "Work on the storefront")
    assert cold["memory_state"] == "cold_start"
    assert "scope_fragmentation" in [w["code"] for w in cold["warnings"]], cold["warnings"]
    await remember(client, variant, cold["session_id"], "The shop_x storefront deploys on Vercel")
    await settle(client, cold)
    await commit(client, cold["session_id"])
    warm = await activate(client, variant, "Work on the storefront")
    assert warm["memory_state"] == "available"
    assert "scope_fragmentation" not in [w["code"] for w in warm["warnings"]], warm["warnings"]


CONTINUITY_FORM = r"^cont_[A-Za-z0-9_-]{32,96}$"


@fidelity("18b_continuity_id_form")
async def continuity_form(client: Client, scope: str) -> None:
    """Point 18b: continuity ids match ^cont_[A-Za-z0-9_-]{32,96}$."""
    first = await activate(client, scope, "Start a line of work")
    second = await activate(client, scope, "Continue it", continuity_id=first["continuity_id"])
    assert re.fullmatch(CONTINUITY_FORM, first["continuity_id"]), first["continuity_id"]
    assert second["continuity_id"] == first["continuity_id"]


@fidelity("18c_tools_list_advertises_real_defaults")
async def real_defaults(client: Client, scope: str) -> None:
    """Point 18c: tools/list shows evidence default "references" and coverage default "partial"."""
    tools = {t.name: t.input_schema for t in (await client.list_tools()).tools}
    assert tools["slowave_recall"]["properties"]["evidence"].get("default") == "references"
    assert tools["slowave_feedback"]["properties"]["coverage"].get("default") == "partial"


@fidelity("18d_retrieval_policy_version_per_tool")
async def policy_versions(client: Client, scope: str) -> None:
    """Point 18d: retrieval_policy_version names the tool's policy; a continuation reports its retrieval's."""
    await seeded(client, scope, AUDIT_NOTES[:12])
    act = await activate(client, scope, AUDIT_QUESTION)
    assert act["retrieval_policy_version"].startswith("activate/"), act["retrieval_policy_version"]
    assert act["more_available"] is True
    continued = await recall_continue(client, scope, act["session_id"], act["continue_from"])
    assert continued["retrieval_policy_version"] == act["retrieval_policy_version"]
    found = await recall(client, scope, act["session_id"], AUDIT_QUESTION)
    assert found["retrieval_policy_version"].startswith("recall/"), found["retrieval_policy_version"]
    assert found["more_available"] is True
    after = await recall_continue(client, scope, act["session_id"], found["continue_from"])
    assert after["retrieval_policy_version"] == found["retrieval_policy_version"]


# --------------------------------------------------------------------------- keep-list
def bound(prop: dict[str, Any], key: str) -> Any:
    """A limit of a property, on the property itself or on one of its anyOf branches."""
    for branch in (prop, *prop.get("anyOf", [])):
        if key in branch:
            return branch[key]
    return None


@fidelity("19_keep_size_limits_published")
async def size_limits(client: Client, scope: str) -> None:
    """Keep-list: tools/list publishes the size limits (task, memories batch, scope)."""
    tools = {t.name: t.input_schema for t in (await client.list_tools()).tools}
    assert isinstance(bound(tools["slowave_activate"]["properties"]["task"], "maxLength"), int)
    assert isinstance(bound(tools["slowave_remember"]["properties"]["memories"], "maxItems"), int)
    for tool in ("slowave_activate", "slowave_remember", "slowave_recall"):
        assert isinstance(bound(tools[tool]["properties"]["scope"], "maxLength"), int), tool
