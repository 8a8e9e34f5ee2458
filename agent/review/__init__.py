"""Reviewers grading answers: the queue and the grades (agent.review.services)."""
