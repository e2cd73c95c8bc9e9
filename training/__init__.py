"""Everything above the agents: masked PPO self-play (``ppo``, ``ppo_selfplay``), duplicate-deal
tournaments and the ladder (``evaluate``, ``ladder``), the terminal game (``play``), and their
command-line entry points ``president-train``, ``president-eval`` and ``president-play``."""
