"""The review queue: which finished runs a reviewer is offered, and recording a grade (Review rows).

Benchmark runs come first, then a sample of live runs; grades feed the benchmark report's
accuracy and the reviewers' agreement (agent.benchmark.report.cohen_kappa).
"""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction

from agent.models import Review, Run
from knowledge.models import Collection, Role
from knowledge.selectors import collection_role, role_at_least

# Share of live (non-benchmark) runs offered for review, chosen by a hash of the run id so
# every reviewer is offered the same sample: overlapping grades are what kappa needs.
LIVE_SAMPLE_PERCENT = getattr(settings, "REVIEW_LIVE_SAMPLE_PERCENT", 20)


def _can_review(user: AbstractBaseUser, collection: Collection) -> bool:
    return role_at_least(collection_role(user=user, collection=collection), Role.REVIEWER)


def _shuffle_key(user: AbstractBaseUser, run_id: int) -> str:
    return hashlib.sha256(f"{user.pk}:{run_id}".encode()).hexdigest()


def _in_live_sample(run_id: int) -> bool:
    return int(hashlib.sha256(f"live:{run_id}".encode()).hexdigest()[:8], 16) % 100 < LIVE_SAMPLE_PERCENT


def review_queue(*, user: AbstractBaseUser, collection: Collection, blind: bool = True) -> list[Run]:
    """Runs awaiting this reviewer's grade: benchmark runs first, then sampled live runs.

    Only finished (done) runs the user has not graded yet. Blind mode shuffles each part
    by a hash of (reviewer, run), so the order is stable for one reviewer, differs
    between reviewers, and gives no hint of the configuration. Not blind: oldest first.
    """
    if not _can_review(user, collection):
        return []
    pending = (
        Run.objects.filter(collection=collection, status=Run.Status.DONE)
        .exclude(reviews__reviewer=user)
        .values_list("pk", "benchmark_run_id")
    )
    bench = [pk for pk, br in pending if br is not None]
    live = [pk for pk, br in pending if br is None and _in_live_sample(pk)]
    if blind:
        bench.sort(key=lambda pk: _shuffle_key(user, pk))
        live.sort(key=lambda pk: _shuffle_key(user, pk))
    else:
        bench.sort()
        live.sort()
    order = bench + live
    by_id = Run.objects.in_bulk(order)
    return [by_id[pk] for pk in order]


@transaction.atomic
def review_create(
    *,
    run: Run,
    reviewer: AbstractBaseUser,
    grade: str,
    citations_support: bool | None = None,
    refusal_appropriate: bool | None = None,
    note: str = "",
) -> Review:
    """Record (or correct) a reviewer's grade of a finished run. Needs the reviewer role or above."""
    if not _can_review(reviewer, run.collection):
        raise PermissionDenied("Only reviewers of this collection can grade its answers.")
    if run.status != Run.Status.DONE:
        raise ValidationError("Only a finished answer can be reviewed.")
    if grade not in Review.Grade.values:
        raise ValidationError("Choose a grade: correct, partially correct or incorrect.")
    review = Review.objects.filter(run=run, reviewer=reviewer).first() or Review(run=run, reviewer=reviewer)
    review.grade = grade
    review.citations_support = citations_support
    review.refusal_appropriate = refusal_appropriate
    review.note = note.strip()
    review.full_clean()
    review.save()
    return review
