"""Baseline agents (random, heuristic, Monte-Carlo, learned policies): added by a later issue."""
