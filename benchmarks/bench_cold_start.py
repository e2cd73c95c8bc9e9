"""The first ``pe.env().reset()`` + step in a fresh process, with a cold and with a warm Numba cache.

    python benchmarks/bench_cold_start.py [--warm-runs 3]

Each run is a new Python process (``python -c``) that imports ``president_env``, then times ``pe.env()``,
``reset(seed=0)``, ``last()`` and one ``step`` of the first legal action: the kernels that path needs are compiled
(cold: ``NUMBA_CACHE_DIR`` is a new empty folder) or loaded from the disk cache (warm: the same folder again).
Prints the import and the first-step seconds of the cold run and of each warm run (wall clock). The cache lives
where ``NUMBA_CACHE_DIR`` says; without it, in ``__pycache__`` beside the package's sources, or where those are
read-only in the user's cache folder (``~/.cache/numba``, ``$XDG_CACHE_HOME/numba``): docs/speed.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

PROBE = """
import json, time
start = time.perf_counter()
import numpy as np
import president_env as pe
imported = time.perf_counter()
env = pe.env()
env.reset(seed=0)
observation, *_ = env.last()
env.step(int(np.flatnonzero(observation["action_mask"])[0]))
print(json.dumps({"import_s": imported - start, "first_step_s": time.perf_counter() - imported}))
"""


def measure(cache_dir: str) -> dict[str, float]:
    """One fresh process's import and first-step seconds, with its Numba cache in ``cache_dir``."""
    env = {**os.environ, "NUMBA_CACHE_DIR": cache_dir}
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        raise SystemExit(f"bench_cold_start: the probe failed: {done.stderr.strip().splitlines()[-1]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--warm-runs", type=int, default=3, help="fresh processes on the warm cache (default 3)")
    args = parser.parse_args(argv)
    if args.warm_runs < 1:
        parser.error("--warm-runs must be at least 1")
    with tempfile.TemporaryDirectory(prefix="numba-cache-") as cache_dir:
        runs = [("cold", measure(cache_dir))] + [(f"warm {k + 1}", measure(cache_dir)) for k in range(args.warm_runs)]
    print("fresh process: import president_env, then pe.env() + reset + last() + one step (wall-clock seconds)")
    for name, run in runs:
        print(f"  {name:<7} import {run['import_s']:6.2f}   first reset + step {run['first_step_s']:6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
