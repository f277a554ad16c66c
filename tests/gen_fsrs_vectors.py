"""Generate FSRS test vectors from the reference `fsrs` Python package.

The browser scheduler (docs/assets/js/fsrs.js) is checked against these vectors by
tests/js/fsrs.test.js; tests/test_fsrs_vectors.py regenerates them and compares, so a
change of the reference package shows up as a failing test rather than silent drift.

Each sequence is a list of reviews (time since the previous review, rating); the first
review happens at the card's creation. For every review the vector records the state,
learning step, stability, difficulty, retrievability before the review, and the next
interval. Fuzzing is off, so every value is deterministic.

Usage: python tests/gen_fsrs_vectors.py [OUT.json]   (default tests/vectors/fsrs.json)
"""

from __future__ import annotations

import json
import random
import sys
from datetime import datetime, timedelta, timezone
from importlib.metadata import version
from pathlib import Path

import fsrs
from fsrs import Card, Rating, Scheduler

DEFAULT_OUT = Path(__file__).resolve().parent / "vectors" / "fsrs.json"
START = datetime(2025, 1, 6, 9, 0, tzinfo=timezone.utc)
MIN = 60
HOUR = 3600
DAY = 86400

# (name, scheduler options, [(seconds since previous review, rating), ...])
HAND_WRITTEN: list[tuple[str, dict, list[tuple[int, int]]]] = [
    ("new-good-through-steps", {}, [(0, 3), (MIN, 3), (10 * MIN, 3), (3 * DAY, 3), (9 * DAY, 3)]),
    ("new-easy", {}, [(0, 4), (15 * DAY, 4), (60 * DAY, 4)]),
    ("new-again-then-good", {}, [(0, 1), (MIN, 1), (MIN, 3), (10 * MIN, 3), (2 * DAY, 3)]),
    ("new-hard-first-step", {}, [(0, 2), (5 * MIN + 30, 2), (10 * MIN, 3), (DAY, 2)]),
    ("lapse-and-relearn", {}, [(0, 3), (MIN, 3), (10 * MIN, 3), (2 * DAY, 3), (8 * DAY, 1),
                               (10 * MIN, 3), (DAY, 3), (5 * DAY, 3)]),
    ("relearn-again-hard", {}, [(0, 4), (20 * DAY, 1), (10 * MIN, 1), (10 * MIN, 2),
                                (15 * MIN, 3), (4 * DAY, 4)]),
    ("same-day-review", {}, [(0, 4), (2 * HOUR, 3), (3 * HOUR, 1), (HOUR, 4), (DAY, 3)]),
    ("overdue-long-gap", {}, [(0, 3), (MIN, 3), (10 * MIN, 3), (400 * DAY, 3), (30 * DAY, 2)]),
    ("early-review", {}, [(0, 4), (DAY, 3), (DAY, 3), (DAY, 4)]),
    ("all-again-difficulty-ceiling", {}, [(0, 1)] + [(MIN, 1)] * 12),
    ("all-easy-difficulty-floor", {}, [(0, 4)] + [(d * DAY, 4) for d in (10, 40, 120, 365, 900)]),
    ("retention-0.8", {"desired_retention": 0.8},
     [(0, 3), (MIN, 3), (10 * MIN, 3), (3 * DAY, 3), (12 * DAY, 2)]),
    ("retention-0.97-max-60", {"desired_retention": 0.97, "maximum_interval": 60},
     [(0, 4), (10 * DAY, 4), (40 * DAY, 4), (60 * DAY, 4)]),
    ("one-learning-step", {"learning_steps": [10 * MIN], "relearning_steps": []},
     [(0, 2), (15 * MIN, 3), (3 * DAY, 1), (2 * DAY, 3)]),
    ("no-learning-steps", {"learning_steps": [], "relearning_steps": [5 * MIN, HOUR]},
     [(0, 3), (4 * DAY, 1), (5 * MIN, 2), (HOUR, 3), (2 * DAY, 3)]),
]


def _scheduler(options: dict) -> Scheduler:
    kwargs = {"enable_fuzzing": False}
    if "desired_retention" in options:
        kwargs["desired_retention"] = options["desired_retention"]
    if "maximum_interval" in options:
        kwargs["maximum_interval"] = options["maximum_interval"]
    if "learning_steps" in options:
        kwargs["learning_steps"] = [timedelta(seconds=s) for s in options["learning_steps"]]
    if "relearning_steps" in options:
        kwargs["relearning_steps"] = [timedelta(seconds=s) for s in options["relearning_steps"]]
    return Scheduler(**kwargs)


def _random_sequences(count: int, seed: int = 20250106) -> list[tuple[str, dict, list]]:
    rng = random.Random(seed)
    gaps = [0, MIN, 10 * MIN, 2 * HOUR, DAY, 2 * DAY, 5 * DAY, 13 * DAY, 33 * DAY, 101 * DAY]
    out = []
    for i in range(count):
        n = rng.randint(4, 14)
        steps = [(0, rng.choice([1, 2, 3, 4]))]
        for _ in range(n - 1):
            steps.append((rng.choice(gaps[1:]), rng.choices([1, 2, 3, 4], [2, 2, 5, 1])[0]))
        out.append((f"random-{i:02d}", {}, steps))
    return out


def run_sequence(options: dict, reviews: list[tuple[int, int]]) -> list[dict]:
    scheduler = _scheduler(options)
    card = Card(card_id=1, due=START)
    now = START
    rows = []
    for elapsed, rating in reviews:
        now = now + timedelta(seconds=elapsed)
        retrievability = scheduler.get_card_retrievability(card, current_datetime=now)
        card, _ = scheduler.review_card(card, Rating(rating), review_datetime=now)
        interval = (card.due - now).total_seconds()
        rows.append({
            "elapsed_seconds": elapsed,
            "elapsed_days": elapsed / DAY,
            "rating": rating,
            "retrievability": retrievability,
            "state": int(card.state),
            "step": card.step,
            "stability": card.stability,
            "difficulty": card.difficulty,
            "interval_seconds": interval,
            "interval_days": interval / DAY,
        })
    return rows


def generate() -> dict:
    default = Scheduler(enable_fuzzing=False)
    sequences = []
    for name, options, reviews in HAND_WRITTEN + _random_sequences(24):
        sequences.append({
            "name": name,
            "scheduler": {
                "desired_retention": options.get("desired_retention", default.desired_retention),
                "maximum_interval": options.get("maximum_interval", default.maximum_interval),
                "learning_steps_seconds": options.get(
                    "learning_steps", [int(s.total_seconds()) for s in default.learning_steps]),
                "relearning_steps_seconds": options.get(
                    "relearning_steps", [int(s.total_seconds()) for s in default.relearning_steps]),
            },
            "reviews": run_sequence(options, reviews),
        })
    return {
        "generator": "tests/gen_fsrs_vectors.py",
        "reference": f"fsrs {version('fsrs')} (Python)",
        "algorithm": "FSRS-6",
        "parameters": list(fsrs.scheduler.DEFAULT_PARAMETERS),
        "fuzzing": False,
        "sequences": sequences,
    }


def dumps(data: dict) -> str:
    return json.dumps(data, indent=1, sort_keys=True) + "\n"


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else DEFAULT_OUT
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(dumps(generate()), encoding="utf-8")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
