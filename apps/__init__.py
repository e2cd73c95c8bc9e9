"""Applications built on the environment and the agents: the browser table (``president_env.apps.web``)."""
