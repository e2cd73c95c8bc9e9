"""The test oracle: an independent one-game implementation of docs/RULES.md (``oracle.reference``).

Outside the installed package; the differential and scripted tests hold the engine against it.
"""
