"""Evaluation: duplicate-deal tournaments and their statistics (``tournament``, the ``president-eval`` command),
two agents compared on the same deals (``paired``), the rule-set suite (``suite``), the ladder of baselines
(``ladder``), sample games saved as replays (``replays``) and the Ray helpers that spread a tournament, or the
trainer's rollouts, over a cluster (``distributed``)."""
