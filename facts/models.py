"""Facts: short texts under folder paths, one memory per agent, every version kept.

A fact's public id is ``m_<pk>``. New facts get a random primary key of 15 digits (below
2**53, so exact as a JSON number too), never a global sequence, which would let a tenant
count every other tenant's writes; facts written before that keep their small ids.
``Fact`` holds the current version of each fact (and the search vector); ``FactVersion``
holds every version, the current one included, so that the history survives a
``replaces`` and idempotency keys are unique in the database.

``scope`` separates the agent's real memory (``""``) from an eval's temporary memory (the
eval root run's id). ``owner_id`` is the end user whose folder (``users/<them>/``) holds the
fact, or null outside users' folders.

Foreign keys are ``DO_NOTHING`` in Django and ``ON DELETE CASCADE`` in the database
(migration 0002): deleting an agent or a workspace with 100,000 facts must not load them.
They get no index of their own: the composite indexes lead with them where a query needs
it, and fewer indexes keep writes fast.
"""

from __future__ import annotations

import secrets

from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from django.db.models import Q

from memoryhub.models import Agent, Workspace

FACT_ID_PREFIX = "m_"
# New ids: 15 digits, far above what the old identity sequence ever reached.
NEW_ID_MIN, NEW_ID_SPAN = 10**14, 9 * 10**14


def new_fact_id() -> int:
    """A random primary key for a new fact (a collision is retried: facts.services.writing)."""
    return NEW_ID_MIN + secrets.randbelow(NEW_ID_SPAN)


class NewFactId(models.Func):
    """The same in the database (``facts_new_id()``, migration 0008), for rows inserted in
    SQL: bulk loads, seeding, the benchmarks."""

    function = "facts_new_id"
    output_field = models.BigIntegerField()


class WrittenBy(models.TextChoices):
    CODE = "code"
    MODEL = "model"
    PERSON = "person"  # a correction made by staff in the panel (never over the API)


class Fact(models.Model):
    id = models.BigIntegerField(primary_key=True, default=new_fact_id, db_default=NewFactId())
    workspace = models.ForeignKey(
        Workspace, on_delete=models.DO_NOTHING, related_name="+", db_index=False
    )
    agent = models.ForeignKey(Agent, on_delete=models.DO_NOTHING, related_name="+", db_index=False)
    scope = models.CharField(max_length=48, default="", blank=True)
    owner_id = models.CharField(max_length=48, null=True, blank=True)
    path = models.TextField()
    text = models.TextField()
    tags = ArrayField(models.CharField(max_length=50), default=list)
    confidence = models.FloatField(default=1.0)
    version = models.PositiveIntegerField(default=1)
    run_id = models.CharField(max_length=48)  # "" for a person's correction
    written_by = models.CharField(max_length=8, choices=WrittenBy.choices)
    # Who corrected it, for written_by=person: the staff principal ("user:<username>").
    author = models.CharField(max_length=160, blank=True, default="", db_default="")
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    # The text with case (Turkish and English) and accents folded (facts.search.fold); the
    # vector is PostgreSQL's, so it can never drift from the folded text.
    search_text = models.TextField()
    search_vector = models.GeneratedField(
        expression=SearchVector("search_text", config="simple"),
        output_field=SearchVectorField(),
        db_persist=True,
    )
    # Set by a trigger (migration 0012): the counter shard and change number of the
    # transaction that last wrote the row, which the in-process index reads (facts.postings).
    change_shard = models.SmallIntegerField(null=True, editable=False)
    change_no = models.BigIntegerField(null=True, editable=False)

    class Meta:
        indexes = [
            GinIndex(fields=["search_vector"], name="fact_search_gin"),
            models.Index(fields=["agent", "scope", "-updated_at", "-id"], name="fact_agent_newest"),
            # A run's newest-first search reads the shared facts and its own folder as two
            # ranges of this, never through other users' folders (facts.topk).
            models.Index(
                fields=["agent", "scope", "owner_id", "-updated_at", "-id"],
                name="fact_owner_newest",
            ),
            models.Index(
                fields=["owner_id"], name="fact_owner", condition=Q(owner_id__isnull=False)
            ),
            # Partial: no other query can use it, so it never changes their plans.
            models.Index(
                fields=["agent", "scope", "change_shard", "change_no"],
                name="fact_changes",
                condition=Q(change_no__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return self.public_id

    @property
    def public_id(self) -> str:
        return f"{FACT_ID_PREFIX}{self.pk}"


class FactVersion(models.Model):
    # A global sequence, but internal: answers name a version by its fact's id and number.
    id = models.BigAutoField(primary_key=True)
    workspace = models.ForeignKey(
        Workspace, on_delete=models.DO_NOTHING, related_name="+", db_index=False
    )
    agent = models.ForeignKey(Agent, on_delete=models.DO_NOTHING, related_name="+", db_index=False)
    fact = models.ForeignKey(
        Fact, on_delete=models.DO_NOTHING, related_name="versions", db_index=False
    )
    version = models.PositiveIntegerField()
    path = models.TextField()
    text = models.TextField()
    tags = ArrayField(models.CharField(max_length=50), default=list)
    confidence = models.FloatField()
    run_id = models.CharField(max_length=48)
    written_by = models.CharField(max_length=8, choices=WrittenBy.choices)
    author = models.CharField(
        max_length=160, blank=True, default="", db_default=""
    )  # see Fact.author
    # The idempotency key of the write that made this version (unique per run).
    key = models.CharField(max_length=200, null=True, blank=True)
    created_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["fact", "version"], name="fact_version_unique"),
            models.UniqueConstraint(
                fields=["run_id", "key"],
                condition=Q(key__isnull=False),
                name="fact_key_unique_per_run",
            ),
        ]

    def __str__(self) -> str:
        return f"{FACT_ID_PREFIX}{self.fact_id} v{self.version}"


class FactQuota(models.Model):
    """How many facts one memory (an agent's, or an eval's) holds: the sum of its shards.

    A writing transaction holds one shard row until it commits (``facts.shards``): writers of
    one memory take different rows and do not queue, and the limit stays exact.
    """

    workspace = models.ForeignKey(
        Workspace, on_delete=models.DO_NOTHING, related_name="+", db_index=False
    )
    agent = models.ForeignKey(Agent, on_delete=models.DO_NOTHING, related_name="+", db_index=False)
    scope = models.CharField(max_length=48, default="", blank=True)
    shard = models.SmallIntegerField(default=0)
    count = models.IntegerField(default=0)
    # Bumped once per transaction writing facts in this shard (migration 0012): the
    # in-process index (facts.postings) stays exact by it.
    changes = models.BigIntegerField(default=0, db_default=0, editable=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["agent", "scope", "shard"], name="fact_quota_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.agent_id}/{self.scope or 'real'}#{self.shard}: {self.count}"


class FactTerm(models.Model):
    """How many facts of one memory hold a lexeme: the statistics the ranking weighs by.

    Kept by statement-level triggers on ``facts_fact`` (migration 0004) in the writing
    transaction, so every path that writes or deletes facts (bulk SQL and cascades too)
    keeps them exact. The empty term counts the memory's facts. ``term`` is in the "C"
    collation so that a query word's prefix is one range of the primary key. ``owner`` is
    "" for facts outside users' folders, else the end user's id: a run's ranking counts only
    the facts it may see (migration 0006). Each memory's rows are split in shards like its
    counter (migration 0011): a statistic is the sum over ``shard``.
    """

    pk = models.CompositePrimaryKey("agent", "scope", "term", "owner", "shard")
    agent = models.ForeignKey(
        Agent, on_delete=models.DO_NOTHING, related_name="+", db_index=False, db_constraint=False
    )
    scope = models.CharField(max_length=48, default="", blank=True)
    owner = models.CharField(max_length=48, default="", blank=True)
    term = models.TextField(db_collation="C")
    shard = models.SmallIntegerField(default=0)
    facts = models.IntegerField()

    def __str__(self) -> str:
        return f"{self.agent_id}/{self.scope or 'real'}/{self.term}#{self.shard}: {self.facts}"
