"""The best response on single manches (no roles, no exchange) against the same copies, same seed."""

import json
from pathlib import Path

from president_env.core.presets import resolve_rules
from president_env.evaluation.report import write_outputs
from president_env.evaluation.tournament import evaluate

out = Path("docs/results/probe/ppo-standard-4p-long")
rules = resolve_rules(out / "rules.yaml").replace(manches=1)
policy = "results/probe/ppo-standard-4p-long/run/policy.pt"  # the best response's weights live outside docs/
result = evaluate([policy] + ["ppo-standard-4p-long"] * 3, rules, n_deals=200, seed=5150, progress=False)
write_outputs(result, out / "single_manche")
a = result.agents[policy].advantage
print(json.dumps({"single_manche_advantage": a.mean, "ci95": a.ci}))
