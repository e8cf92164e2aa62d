"""Learning (learning/): quizzes, mastery per skill, homework tasks, the prompt's learning record,
and grading by the model (docs/learning.md)."""

from __future__ import annotations

from .env import env_float, env_int

# Quizzes the create_quiz tool may store per conversation.
QUIZ_MAX_PER_CONVERSATION = env_int("QUIZ_MAX_PER_CONVERSATION", 3)
# The learning record block of the prompt: its token budget, and how much of the record it reads
# (open tasks, skills by latest result, weakest skills, of the LEARNING_RECORD_SKILL_SCAN latest;
# then the conversation's files: every name, and their text in what the budget leaves). On a
# small window the block takes at most a quarter of what the prompt leaves.
LEARNING_RECORD_TOKEN_BUDGET = env_int("LEARNING_RECORD_TOKEN_BUDGET", 2500)
LEARNING_RECORD_MAX_TASKS = 10
LEARNING_RECORD_MAX_SKILLS = 5
LEARNING_RECORD_WEAKEST = 3
LEARNING_RECORD_SKILL_SCAN = 100
# A skill estimated at least this mastered is never listed among the weakest.
LEARNING_MASTERED_ESTIMATE = 0.95
# Bayesian knowledge tracing (learning.mastery, docs/learning.md): tuning constants, not deployment
# choices. p_init P(L0), p_learn T, p_slip S, p_guess G; the estimate decays halfway back to
# p_init every half_life_days (0: never); the trend spans the last trend_window results.
LEARNING_MASTERY = {
    "p_init": 0.3,
    "p_learn": 0.1,
    "p_slip": 0.1,
    "p_guess": 0.2,
    "half_life_days": 60.0,
    "trend_window": 5,
}
# Grading short-text answers with the summary model (learning.tasks): retries of transient errors,
# and the sweep that enqueues again attempts still being graded this long after submission.
GRADING_MAX_RETRIES = env_int("GRADING_MAX_RETRIES", 5)
GRADING_RETRY_BACKOFF_SECONDS = env_float("GRADING_RETRY_BACKOFF_SECONDS", 30.0)
GRADING_SWEEP_AFTER_MINUTES = env_int("GRADING_SWEEP_AFTER_MINUTES", 30)
# Reviews scheduled from quiz results (learning.reviews, docs/learning.md#reviews): FSRS's own
# model with its default weights, no fuzz (the same results always give the same dates). A tuning
# constant, not a deployment choice. desired_retention: a skill is due when its probability of
# recall falls to it; maximum_interval_days: the longest gap between two reviews (a school year).
LEARNING_REVIEWS = {
    "desired_retention": 0.9,
    "maximum_interval_days": 365,
}
# GET /students/{id}/reviews/ lists every due review and this many upcoming ones; the learning
# record of the prompt lists at most LEARNING_RECORD_MAX_REVIEWS due ones.
LEARNING_REVIEWS_UPCOMING = 5
LEARNING_RECORD_MAX_REVIEWS = 3
