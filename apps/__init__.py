"""Applications built on the environment and the agents: the terminal game (``president_env.apps.terminal``,
``president-play``, with its screen and keyboard in ``terminal_ui``) and the browser table
(``president_env.apps.web``, ``president-web``)."""
