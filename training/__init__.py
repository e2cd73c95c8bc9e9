"""Training: masked PPO self-play on the batched engine (``ppo``, ``ppo_selfplay``, the ``president-train``
command), its config, rollouts, bookkeeping and learning curves (``curves``), the probe and RLlib's PPO.
It evaluates with :mod:`president_env.evaluation`; the terminal game lives in :mod:`president_env.apps`."""
