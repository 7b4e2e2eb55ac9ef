"""Services: the five tools' behaviour over the graph repository. No MCP types here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from slowave_graph.embedding.embedder import Embedder
from slowave_graph.graph.repository import GraphRepository
from slowave_graph.services.activation import ActivationService
from slowave_graph.services.commit import CommitService
from slowave_graph.services.context import utcnow
from slowave_graph.services.feedback import FeedbackService
from slowave_graph.services.generalisation import Generaliser
from slowave_graph.services.ranking import DEFAULT_POLICY, RankingPolicy
from slowave_graph.services.recall import RecallService
from slowave_graph.services.remember import RememberService
from slowave_graph.services.retrieval import Retriever


@dataclass(frozen=True)
class Services:
    activation: ActivationService
    remember: RememberService
    recall: RecallService
    feedback: FeedbackService
    commit: CommitService
    generaliser: Generaliser

    @classmethod
    def build(
        cls,
        repo: GraphRepository,
        embedder: Embedder,
        policy: RankingPolicy = DEFAULT_POLICY,
        clock: Callable[[], datetime] = utcnow,
        consolidate: bool = True,
        generalise: bool = False,
    ) -> Services:
        """``consolidate``: find near-duplicates and updates when memories are stored, fold and
        pair them in retrieval (SLOWAVE_CONSOLIDATION). ``generalise``: lessons validated in
        several scopes travel to others (SLOWAVE_GENERALISATION, which the app passes; off here)."""
        generaliser = Generaliser(repo.db, embedder, enabled=generalise)
        retriever = Retriever(repo, embedder, policy, clock, consolidate, generalise)
        return cls(
            activation=ActivationService(retriever),
            remember=RememberService(repo, embedder, clock, consolidate),
            recall=RecallService(retriever),
            feedback=FeedbackService(repo, clock, generaliser),
            commit=CommitService(repo, embedder, clock),
            generaliser=generaliser,
        )
