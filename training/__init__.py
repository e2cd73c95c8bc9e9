"""Training code (algorithms, opponent pool, evaluation, command-line entry points): added by a later issue."""
