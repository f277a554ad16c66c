/*
 * FSRS-6 scheduler for the recall cards, written from the published formulas
 * (open-spaced-repetition, "The Algorithm" / py-fsrs 6). Pure: no DOM, no clock.
 * Times are epoch milliseconds. Verified against the Python `fsrs` package on
 * shared vectors (tests/vectors/fsrs.json, tests/js/fsrs.test.js).
 */
(function (root) {
  "use strict";

  var DAY_MS = 86400000;
  var MINUTE_MS = 60000;

  var DEFAULT_PARAMETERS = [
    0.212, 1.2931, 2.3065, 8.2956, 6.4133, 0.8334, 3.0194, 0.001, 1.8722,
    0.1666, 0.796, 1.4835, 0.0614, 0.2629, 1.6483, 0.6014, 1.8729, 0.5425,
    0.0912, 0.0658, 0.1542
  ];
  var STABILITY_MIN = 0.001;
  var MIN_DIFFICULTY = 1.0;
  var MAX_DIFFICULTY = 10.0;

  var Rating = { Again: 1, Hard: 2, Good: 3, Easy: 4 };
  var State = { Learning: 1, Review: 2, Relearning: 3 };

  // Python's round(): halves go to the even neighbour.
  function roundHalfEven(x) {
    var f = Math.floor(x);
    var diff = x - f;
    if (diff > 0.5) return f + 1;
    if (diff < 0.5) return f;
    return f % 2 === 0 ? f : f + 1;
  }

  function clampDifficulty(d) {
    return Math.min(Math.max(d, MIN_DIFFICULTY), MAX_DIFFICULTY);
  }

  function clampStability(s) {
    return Math.max(s, STABILITY_MIN);
  }

  function expE(x) {
    // math.e ** x, as the reference computes it
    return Math.pow(Math.E, x);
  }

  function Scheduler(options) {
    var o = options || {};
    this.w = (o.parameters || DEFAULT_PARAMETERS).slice();
    if (this.w.length !== 21) {
      throw new Error("FSRS-6 expects 21 parameters, got " + this.w.length);
    }
    this.desiredRetention = o.desiredRetention != null ? o.desiredRetention : 0.9;
    this.learningSteps = (o.learningStepsMs || [1 * MINUTE_MS, 10 * MINUTE_MS]).slice();
    this.relearningSteps = (o.relearningStepsMs || [10 * MINUTE_MS]).slice();
    this.maximumInterval = o.maximumInterval != null ? o.maximumInterval : 36500;
    this.decay = -this.w[20];
    this.factor = Math.pow(0.9, 1 / this.decay) - 1;
  }

  Scheduler.prototype.newCard = function (nowMs) {
    return {
      state: State.Learning,
      step: 0,
      stability: null,
      difficulty: null,
      due: nowMs,
      lastReview: null
    };
  };

  Scheduler.prototype.retrievability = function (card, nowMs) {
    if (card.lastReview == null || card.stability == null) return 0;
    var elapsedDays = Math.max(0, Math.floor((nowMs - card.lastReview) / DAY_MS));
    return Math.pow(1 + this.factor * elapsedDays / card.stability, this.decay);
  };

  Scheduler.prototype.initialStability = function (rating) {
    return clampStability(this.w[rating - 1]);
  };

  Scheduler.prototype.initialDifficulty = function (rating, clamp) {
    var d = this.w[4] - expE(this.w[5] * (rating - 1)) + 1;
    return clamp ? clampDifficulty(d) : d;
  };

  Scheduler.prototype.nextIntervalDays = function (stability) {
    var ivl = (stability / this.factor) *
      (Math.pow(this.desiredRetention, 1 / this.decay) - 1);
    ivl = roundHalfEven(ivl);
    ivl = Math.max(ivl, 1);
    return Math.min(ivl, this.maximumInterval);
  };

  Scheduler.prototype.shortTermStability = function (stability, rating) {
    var w = this.w;
    var inc = expE(w[17] * (rating - 3 + w[18])) * Math.pow(stability, -w[19]);
    if (rating >= Rating.Hard) inc = Math.max(inc, 1.0);
    return clampStability(stability * inc);
  };

  Scheduler.prototype.nextDifficulty = function (difficulty, rating) {
    var w = this.w;
    var target = this.initialDifficulty(Rating.Easy, false);
    var delta = -(w[6] * (rating - 3));
    var damped = difficulty + (10.0 - difficulty) * delta / 9.0;
    return clampDifficulty(w[7] * target + (1 - w[7]) * damped);
  };

  Scheduler.prototype.nextStability = function (d, s, r, rating) {
    var w = this.w;
    var next;
    if (rating === Rating.Again) {
      var longTerm = w[11] * Math.pow(d, -w[12]) * (Math.pow(s + 1, w[13]) - 1) *
        expE((1 - r) * w[14]);
      var shortTerm = s / expE(w[17] * w[18]);
      next = Math.min(longTerm, shortTerm);
    } else {
      var hardPenalty = rating === Rating.Hard ? w[15] : 1;
      var easyBonus = rating === Rating.Easy ? w[16] : 1;
      next = s * (1 + expE(w[8]) * (11 - d) * Math.pow(s, -w[9]) *
        (expE((1 - r) * w[10]) - 1) * hardPenalty * easyBonus);
    }
    return clampStability(next);
  };

  // Learning-step scheduling shared by the Learning and Relearning states.
  Scheduler.prototype._stepInterval = function (card, rating, steps) {
    if (steps.length === 0 ||
        (card.step >= steps.length && rating !== Rating.Again)) {
      card.state = State.Review;
      card.step = null;
      return this.nextIntervalDays(card.stability) * DAY_MS;
    }
    if (rating === Rating.Again) {
      card.step = 0;
      return steps[0];
    }
    if (rating === Rating.Hard) {
      if (card.step === 0 && steps.length === 1) return steps[0] * 1.5;
      if (card.step === 0 && steps.length >= 2) return (steps[0] + steps[1]) / 2.0;
      return steps[card.step];
    }
    if (rating === Rating.Good) {
      if (card.step + 1 === steps.length) {
        card.state = State.Review;
        card.step = null;
        return this.nextIntervalDays(card.stability) * DAY_MS;
      }
      card.step += 1;
      return steps[card.step];
    }
    // Easy
    card.state = State.Review;
    card.step = null;
    return this.nextIntervalDays(card.stability) * DAY_MS;
  };

  /** Review `card` with `rating` (1..4) at `nowMs`; returns a new card object. */
  Scheduler.prototype.review = function (card, rating, nowMs) {
    if (!(rating >= 1 && rating <= 4) || Math.floor(rating) !== rating) {
      throw new Error("rating must be 1, 2, 3 or 4");
    }
    var c = {
      state: card.state,
      step: card.step,
      stability: card.stability,
      difficulty: card.difficulty,
      due: card.due,
      lastReview: card.lastReview
    };
    var daysSince = c.lastReview != null ? Math.floor((nowMs - c.lastReview) / DAY_MS) : null;
    var sameDay = daysSince !== null && daysSince < 1;
    var interval;

    if (c.state === State.Learning || c.state === State.Relearning) {
      if (c.state === State.Learning && (c.stability == null || c.difficulty == null)) {
        c.stability = this.initialStability(rating);
        c.difficulty = this.initialDifficulty(rating, true);
      } else if (sameDay) {
        c.stability = this.shortTermStability(c.stability, rating);
        c.difficulty = this.nextDifficulty(c.difficulty, rating);
      } else {
        c.stability = this.nextStability(c.difficulty, c.stability,
          this.retrievability(c, nowMs), rating);
        c.difficulty = this.nextDifficulty(c.difficulty, rating);
      }
      var steps = c.state === State.Learning ? this.learningSteps : this.relearningSteps;
      interval = this._stepInterval(c, rating, steps);
    } else if (c.state === State.Review) {
      if (sameDay) {
        c.stability = this.shortTermStability(c.stability, rating);
      } else {
        c.stability = this.nextStability(c.difficulty, c.stability,
          this.retrievability(c, nowMs), rating);
      }
      c.difficulty = this.nextDifficulty(c.difficulty, rating);
      if (rating === Rating.Again && this.relearningSteps.length > 0) {
        c.state = State.Relearning;
        c.step = 0;
        interval = this.relearningSteps[0];
      } else {
        interval = this.nextIntervalDays(c.stability) * DAY_MS;
      }
    } else {
      throw new Error("unknown card state " + c.state);
    }
    c.due = nowMs + interval;
    c.lastReview = nowMs;
    return c;
  };

  var api = {
    Scheduler: Scheduler,
    Rating: Rating,
    State: State,
    DEFAULT_PARAMETERS: DEFAULT_PARAMETERS,
    DAY_MS: DAY_MS,
    roundHalfEven: roundHalfEven
  };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  else root.TutorFSRS = api;
})(typeof window !== "undefined" ? window : this);
