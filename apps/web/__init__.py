"""president-web: Président in the browser (play, watch, replay)."""
