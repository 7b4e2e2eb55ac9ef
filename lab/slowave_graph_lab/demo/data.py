# ruff: noqa: E501  (tables of claims and tasks read best one entry per line)
"""The demo dataset: the memory of a software project ("Harbor", a web shop) and the agent tasks
that build and use it. Pure data; `slowave_graph_lab.demo.seed` plays it through the services.

Claims are grouped by topic so the association graph learned from co-use has communities; a few
tasks cross topics (a release touches CI and payments, a key rotation touches auth and deploys) so
some memories bridge them. Four claims are later superseded by a replacement, one of them after it
harmed two tasks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

TOPICS = ("deploy", "database", "auth", "frontend", "payments", "team")


@dataclass(frozen=True)
class Claim:
    content: str
    type: str
    topic: str


@dataclass(frozen=True)
class ProcedureSpec:
    key: str  # deduplication_key: a newer procedure with the same key replaces the older one
    summary: str
    steps: tuple[str, ...]
    caveats: tuple[str, ...] = ()


@dataclass(frozen=True)
class Task:
    """One kind of task an agent does on the project.

    ``uses`` are the claims the agent relies on when they are shown (a superseded claim resolves to
    its replacement); ``harms`` are claims that mislead it (used, effect harmed, and the task fails);
    ``remembers`` are claims it learns (stored the first time only); ``retires`` maps a claim the
    task finds outdated to the claim that replaces it (stale/superseded feedback when it is shown).
    """

    name: str
    topic: str
    variants: tuple[str, ...]  # task texts; the schedule picks one
    goal: str
    queries: tuple[str, ...] = ()
    uses: tuple[str, ...] = ()
    harms: tuple[str, ...] = ()
    remembers: tuple[str, ...] = ()
    retires: dict[str, str] = field(default_factory=dict)
    procedure: ProcedureSpec | None = None
    fail_rate: float = 0.0
    success: str = "Done as planned."
    failure: str = "Did not work out."


CLAIMS: dict[str, Claim] = {
    # deploy
    "ci_jenkins": Claim("Harbor's CI runs on Jenkins; the pipeline is defined in ci/Jenkinsfile", "fact", "deploy"),
    "ci_actions": Claim("Harbor's CI moved from Jenkins to GitHub Actions; the workflows live in .github/workflows", "fact", "deploy"),
    "deploy_argo": Claim("Harbor deploys go through Argo CD: a merge to main rolls out to staging, a release tag to production", "fact", "deploy"),
    "deploy_freeze": Claim("Harbor production deploys are frozen on Fridays after 14:00 UTC", "constraint", "deploy"),
    "deploy_canary": Claim("New Harbor releases run as a 10% canary for 30 minutes before the full rollout", "instruction", "deploy"),
    "deploy_rollback": Claim("To roll back Harbor, revert the image tag in the harbor-deploy repository; Argo CD syncs within two minutes", "instruction", "deploy"),
    "deploy_cluster": Claim("Harbor runs on the prod-eu Kubernetes cluster in the namespace harbor", "fact", "deploy"),
    "deploy_secrets": Claim("Harbor secrets live in Vault under secret/harbor and are injected by the Vault agent sidecar", "fact", "deploy"),
    # database
    "db_pg14": Claim("Harbor's main database is PostgreSQL 14 on Amazon RDS", "fact", "database"),
    "db_pg16": Claim("Harbor's main database was upgraded to PostgreSQL 16 on Amazon RDS", "fact", "database"),
    "db_alembic": Claim("Harbor database migrations use Alembic; run make migrate against staging before production", "instruction", "database"),
    "db_lock": Claim("Adding a column with a default to Harbor's orders table locks it for minutes; add it nullable and backfill in batches", "lesson", "database"),
    "db_index": Claim("Create indexes on large Harbor tables with CREATE INDEX CONCURRENTLY, outside a transaction", "instruction", "database"),
    "db_replica": Claim("Harbor reporting queries must run on the read replica harbor-ro, never on the primary", "constraint", "database"),
    "db_backup": Claim("Harbor database snapshots are taken nightly at 02:00 UTC and kept for 14 days", "fact", "database"),
    "db_pgbouncer": Claim("Harbor connects through PgBouncer in transaction mode, so session-level advisory locks do not work", "warning", "database"),
    # auth
    "auth_tokens": Claim("Harbor access tokens expire after 15 minutes and refresh tokens after 30 days", "fact", "auth"),
    "auth_keycloak": Claim("Harbor login uses OAuth 2.0 with Keycloak as the identity provider", "fact", "auth"),
    "auth_skew": Claim("Unexpected Harbor logouts are usually clock skew between the API pods; check NTP first", "lesson", "auth"),
    "auth_roles": Claim("Harbor roles are admin, merchant and support; permissions are checked in harbor/auth/policy.py", "fact", "auth"),
    "auth_keys": Claim("Harbor's JWT signing keys rotate every 90 days and the old key stays valid for one day", "instruction", "auth"),
    "auth_sessions": Claim("Harbor keeps web sessions in Redis with a 12-hour TTL", "fact", "auth"),
    # frontend
    "fe_stack": Claim("The Harbor web frontend is React with TypeScript, built with Vite", "fact", "frontend"),
    "fe_design": Claim("Harbor UI components come from the internal design system @harbor/ui; do not add CSS frameworks", "constraint", "frontend"),
    "fe_a11y": Claim("Every new Harbor form needs labels and keyboard navigation; axe accessibility checks run in CI", "instruction", "frontend"),
    "fe_i18n": Claim("Harbor UI strings go through i18next; English and German translations are required before release", "constraint", "frontend"),
    "fe_flaky": Claim("The Harbor checkout end-to-end test is flaky when the payment sandbox is slow; retry it once before debugging", "lesson", "frontend"),
    "fe_flags": Claim("New Harbor UI features ship behind a LaunchDarkly feature flag", "decision", "frontend"),
    # payments
    "pay_stripe": Claim("Harbor payments go through Stripe; webhooks arrive at /api/webhooks/stripe", "fact", "payments"),
    "pay_idempotent": Claim("Harbor's Stripe webhook handlers must be idempotent: use the Stripe event id as the idempotency key", "instruction", "payments"),
    "pay_cents": Claim("Harbor stores money as integer cents together with an ISO 4217 currency code", "decision", "payments"),
    "pay_restart": Claim("Restarting the payments worker clears refunds that are stuck in pending in Harbor", "lesson", "payments"),
    "pay_dlq": Claim("Harbor refunds stuck in pending sit in the refund queue's dead-letter backlog; replay it with harbor refunds replay", "lesson", "payments"),
    "pay_sandbox": Claim("Harbor's staging environment uses the Stripe test-mode sandbox with test cards only", "fact", "payments"),
    # team: people, preferences, process
    "team_maria": Claim("Maria reviews Harbor backend changes and prefers pull requests under 400 lines", "preference", "team"),
    "team_jonas": Claim("Jonas owns the Harbor frontend and wants screenshots in every UI pull request", "preference", "team"),
    "team_regression": Claim("Every Harbor bug fix needs a regression test; Maria rejects fixes without one", "preference", "team"),
    "team_changelog": Claim("Every Harbor release needs a CHANGELOG.md entry written for merchants, not developers", "instruction", "team"),
    "team_oncall_weekly": Claim("The Harbor on-call rotation is weekly and hands over on Mondays at 10:00", "fact", "team"),
    "team_oncall_biweekly": Claim("The Harbor on-call rotation changed to two weeks, handed over on Wednesdays at 10:00", "fact", "team"),
    "team_commits": Claim("Harbor commit messages follow Conventional Commits (feat:, fix:, chore:)", "instruction", "team"),
    "team_python": Claim("Decision: Harbor backend code targets Python 3.12 and is formatted with ruff", "decision", "team"),
    "team_adr": Claim("Harbor records architecture decisions as ADRs in docs/adr", "decision", "team"),
}  # fmt: skip


def _onboarding(topic: str, text: str, query: str, keys: tuple[str, ...], uses: tuple[str, ...]) -> Task:
    return Task(
        name=f"onboard_{topic}",
        topic=topic,
        variants=(text,),
        goal=f"Write down what a newcomer must know about Harbor's {topic} setup",
        queries=(query,),
        remembers=keys,
        uses=uses,
        success="Collected the essentials and stored them as memories.",
    )


# The first tasks: an agent learns the project area by area.
ONBOARDING: tuple[Task, ...] = (
    _onboarding("deploy", "Find out how Harbor is built and deployed", "How does a Harbor release get to production?",
                ("ci_jenkins", "deploy_argo", "deploy_freeze", "deploy_canary", "deploy_rollback", "deploy_cluster", "deploy_secrets"),
                ("deploy_argo", "deploy_canary", "deploy_freeze")),
    _onboarding("database", "Learn how Harbor's database is run and migrated", "How are Harbor database schema migrations run?",
                ("db_pg14", "db_alembic", "db_lock", "db_index", "db_replica", "db_backup", "db_pgbouncer"),
                ("db_alembic", "db_lock", "db_pg14")),
    _onboarding("auth", "Understand Harbor's login and permission model", "How does login and token expiry work in Harbor?",
                ("auth_tokens", "auth_keycloak", "auth_skew", "auth_roles", "auth_keys", "auth_sessions"),
                ("auth_tokens", "auth_keycloak", "auth_sessions")),
    _onboarding("frontend", "Get to know the Harbor web frontend conventions", "What are the conventions for building Harbor UI forms?",
                ("fe_stack", "fe_design", "fe_a11y", "fe_i18n", "fe_flags"),
                ("fe_design", "fe_a11y", "fe_i18n")),
    _onboarding("payments", "Learn how Harbor takes payments and refunds", "How do Stripe payments and webhooks work in Harbor?",
                ("pay_stripe", "pay_idempotent", "pay_cents", "pay_restart", "pay_sandbox"),
                ("pay_stripe", "pay_idempotent")),
    _onboarding("team", "Learn the Harbor team's working agreements", "How does the Harbor team review and ship code? What does Maria expect from a bug fix?",
                ("team_maria", "team_jonas", "team_regression", "team_changelog", "team_oncall_weekly", "team_commits", "team_python", "team_adr"),
                ("team_maria", "team_regression", "team_commits")),
)  # fmt: skip

RELEASE = ProcedureSpec(
    "release",
    "Ship a Harbor release: changelog, tag, canary, watch, full rollout",
    ("Write the merchant-facing CHANGELOG.md entry", "Check that it is not Friday afternoon (deploy freeze)",
     "Tag the release so Argo CD deploys it as a 10% canary", "Watch error rates for 30 minutes, then promote"),
    ("Roll back by reverting the image tag in harbor-deploy, not by re-tagging",),
)  # fmt: skip
ROLLBACK = ProcedureSpec(
    "rollback",
    "Roll back a bad Harbor release through the deploy repository",
    ("Revert the image tag in harbor-deploy", "Wait for the Argo CD sync (about two minutes)",
     "Confirm the pods in namespace harbor run the previous image"),
)  # fmt: skip
MIGRATION = ProcedureSpec(
    "migration",
    "Change Harbor's schema safely with Alembic",
    ("Write the Alembic migration; add new columns nullable", "Run make migrate against staging",
     "Backfill in batches", "Run the migration in production outside peak hours"),
    ("Never add a column with a default to the orders table in one step",),
)  # fmt: skip
LOGOUT = ProcedureSpec(
    "logout-triage",
    "Triage unexpected Harbor logouts",
    ("Compare logout times with token issue times (15-minute access tokens)",
     "Check clock skew and NTP on the API pods", "Check the Redis session TTL"),
)  # fmt: skip
REFUND_RESTART = ProcedureSpec(
    "refund-triage",
    "Unstick pending Harbor refunds by restarting the payments worker",
    ("Restart the payments worker deployment", "Check whether the refunds moved to succeeded"),
)  # fmt: skip
REFUND_REPLAY = ProcedureSpec(
    "refund-triage",
    "Unstick pending Harbor refunds by replaying the refund dead-letter queue",
    ("Inspect the refund dead-letter backlog", "Run harbor refunds replay", "Confirm in Stripe that the refunds succeeded"),
    ("Restarting the payments worker does not help: it only drops in-flight work",),
)  # fmt: skip
FLAKY = ProcedureSpec(
    "flaky-e2e",
    "Handle a failing Harbor checkout end-to-end test",
    ("Check the Stripe sandbox status", "Re-run the test once", "Only then bisect the change"),
)  # fmt: skip

# Routine work, drawn repeatedly by the schedule.
ROUTINE: tuple[Task, ...] = (
    Task("release", "deploy",
         ("Ship Harbor release 2.{n} to production", "Deploy the Harbor 2.{n} release with the new checkout"),
         "Release Harbor safely to all merchants",
         ("What are the steps and rules for deploying a Harbor release to production? Where does Harbor's CI run?",),
         uses=("deploy_argo", "deploy_canary", "deploy_freeze", "team_changelog", "ci_jenkins"),
         procedure=RELEASE, fail_rate=0.15,
         success="Release rolled out after a clean canary.", failure="Canary error rate spiked; the rollout was stopped."),
    Task("rollback", "deploy",
         ("Roll back the broken Harbor 2.{n} release", "Harbor 2.{n} breaks checkout: revert it"),
         "Restore the previous Harbor release",
         ("How do I roll back a Harbor release on Kubernetes?",),
         uses=("deploy_rollback", "deploy_argo", "deploy_cluster"), procedure=ROLLBACK,
         success="Rolled back within five minutes."),
    Task("migration", "database",
         ("Add a loyalty_points column to Harbor's orders table", "Add a gift_note column to the orders table"),
         "Ship the schema change without downtime",
         ("How do I add a column to a large Harbor table with an Alembic migration without locking it? Who reviews Harbor backend changes?",),
         uses=("db_alembic", "db_lock", "db_pg14", "team_maria"), procedure=MIGRATION, fail_rate=0.25,
         success="Migration ran online; backfill finished.", failure="The migration locked orders for four minutes; rolled back."),
    Task("slow_query", "database",
         ("The merchant search page of Harbor is slow", "Speed up Harbor's order history query"),
         "Make the query fast without hurting the primary",
         ("How should indexes be created on large Harbor tables, and where do heavy queries run? What limits does PgBouncer put on Harbor's database sessions?",),
         uses=("db_index", "db_replica", "db_pgbouncer")),
    Task("report", "database",
         ("Build the monthly revenue report for finance", "Export refunds per merchant for the auditors"),
         "Produce correct numbers without loading the primary",
         ("Where should Harbor reporting queries run and how are money amounts stored?",),
         uses=("db_replica", "pay_cents", "db_backup")),
    Task("logout", "auth",
         ("Users get logged out of Harbor at random", "Merchants are signed out of the Harbor dashboard every few minutes"),
         "Find and fix the cause of the logouts",
         ("Why are Harbor users logged out unexpectedly?",),
         uses=("auth_skew", "auth_tokens", "auth_sessions"), procedure=LOGOUT,
         success="NTP was off on one API pod; fixed and verified."),
    Task("permissions", "auth",
         ("Let support agents view refunds but not issue them",),
         "Add the permission without widening any role",
         ("Where are Harbor roles and permissions checked? What does Maria expect from a Harbor backend change or bug fix?",),
         uses=("auth_roles", "team_regression", "team_maria")),
    Task("key_rotation", "auth",
         ("Rotate Harbor's JWT signing keys",),
         "Rotate the keys without logging anyone out",
         ("How are Harbor JWT signing keys rotated and where are the secrets stored? How do Harbor deploys roll out?",),
         uses=("auth_keys", "deploy_secrets", "deploy_argo")),
    Task("form", "frontend",
         ("Add an address form to the Harbor checkout", "Build the merchant payout settings page"),
         "Ship the new UI behind a flag, accessible and translated",
         ("What are the rules for new Harbor UI forms? Who owns the Harbor frontend and what is it built with?",),
         uses=("fe_design", "fe_a11y", "fe_i18n", "fe_flags", "team_jonas", "fe_stack")),
    Task("flaky_e2e", "frontend",
         ("The Harbor checkout end-to-end test fails in CI", "CI is red: checkout e2e timed out"),
         "Get CI green again",
         ("Why does Harbor's checkout end-to-end test fail intermittently in CI? Which Stripe sandbox does Harbor staging use, and where does CI run?",),
         uses=("fe_flaky", "pay_sandbox", "ci_jenkins"), remembers=("fe_flaky",), procedure=FLAKY),
    Task("webhooks", "payments",
         ("Stripe webhooks are processed twice in Harbor", "Some Harbor orders are charged twice after a webhook retry"),
         "Make webhook handling exactly-once",
         ("How must Harbor's Stripe webhook handlers deal with retries? What must a Harbor bug fix include?",),
         uses=("pay_idempotent", "pay_stripe", "team_regression")),
    Task("refunds", "payments",
         ("Merchants report refunds stuck in pending", "A batch of Harbor refunds has been pending since yesterday"),
         "Get the stuck refunds through",
         ("How do I fix Harbor refunds that are stuck in pending? On which Kubernetes cluster does Harbor run?",),
         uses=("pay_restart", "deploy_cluster"), harms=("pay_restart",), procedure=REFUND_RESTART,
         success="Refunds went through.", failure="Restarting the worker changed nothing; refunds still pending."),
    Task("invoice_bug", "payments",
         ("Fix the rounding error in Harbor invoice totals",),
         "Invoices add up to the cent",
         ("How are money amounts stored in Harbor and what does a bug fix need before review? Which commit message style and Python version does Harbor use?",),
         uses=("pay_cents", "team_regression", "team_commits", "team_python")),
    Task("oncall", "team",
         ("Hand over the Harbor on-call shift", "Prepare the on-call handover notes"),
         "Hand over on time with open incidents listed",
         ("When does the Harbor on-call handover happen?",),
         uses=("team_oncall_weekly",)),
    Task("adr", "team",
         ("Write up the decision to move search to OpenSearch",),
         "Record the decision where the team expects it",
         ("Where does the Harbor team record architecture decisions?",),
         uses=("team_adr", "team_python")),
)  # fmt: skip

# One-off events in the project's history: each retires an outdated claim.
EVENTS: tuple[Task, ...] = (
    Task("ci_migration", "deploy", ("Move Harbor CI from Jenkins to GitHub Actions",),
         "Run every pipeline on GitHub Actions",
         ("Where is Harbor's CI pipeline defined? Where are Harbor's secrets stored?",),
         uses=("deploy_secrets",), remembers=("ci_actions",), retires={"ci_jenkins": "ci_actions"},
         success="All pipelines run on GitHub Actions; Jenkins is switched off."),
    Task("pg_upgrade", "database", ("Upgrade Harbor's database to PostgreSQL 16",),
         "Upgrade with under a minute of downtime",
         ("Which PostgreSQL version does Harbor run, and how is it backed up?",),
         uses=("db_backup", "db_alembic"), remembers=("db_pg16",), retires={"db_pg14": "db_pg16"},
         success="Upgraded over the weekend after a fresh snapshot."),
    Task("refund_root_cause", "payments", ("Find the real cause of Harbor refunds stuck in pending",),
         "Fix stuck refunds for good",
         ("How do I fix Harbor refunds that are stuck in pending?",),
         uses=("pay_stripe",), remembers=("pay_dlq",), retires={"pay_restart": "pay_dlq"},
         procedure=REFUND_REPLAY, success="Replayed the dead-letter backlog; all refunds succeeded."),
    Task("oncall_change", "team", ("Update the Harbor on-call schedule to two-week shifts",),
         "Everyone knows the new rotation",
         ("When does the Harbor on-call handover happen?",),
         remembers=("team_oncall_biweekly",), retires={"team_oncall_weekly": "team_oncall_biweekly"},
         success="New rotation published."),
)  # fmt: skip

# Replacement claims are learned by the events, not during onboarding.
REPLACEMENTS = frozenset(new for event in EVENTS for new in event.retires.values())
