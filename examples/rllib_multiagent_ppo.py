"""RLlib multi-agent PPO self-play on Président, then a duplicate-deal evaluation against the baselines.

    pip install -e ".[rllib]"
    python examples/rllib_multiagent_ppo.py --iterations 20 --num-cpus 2
    python examples/rllib_multiagent_ppo.py --address auto --num-env-runners 8   # on a running Ray cluster

Every player maps to one shared, action-masked policy (``--per-seat``: one policy per seat). See
:mod:`president_env.training.rllib_ppo` for the env wrapper, the masked RLModule and the config.

``--single-agent-vector``: RLlib's single-agent PPO on the batched Gymnasium vector env instead, one
learner seat per game against ``--opponents``. RLlib's env runner builds it itself through
``gymnasium.make_vec(..., vectorization_mode="vector_entry_point")`` (``gym_env_vectorize_mode``), so
``--num-envs-per-env-runner`` games step in one engine batch. RLlib's default module does not mask
(masking needs a dict observation with the mask inside, which the vector env does not give), so the
env replaces the policy's illegal actions by random legal ones (``illegal_action="random"``): a
throughput demonstration, not the recommended way to learn; the masked path is the multi-agent one.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence

import ray
import torch

from president_env.core.presets import resolve_rules
from president_env.evaluation.report import versus_markdown
from president_env.evaluation.tournament import evaluate_against
from president_env.training.rllib_ppo import RLlibAgent, policy_ids, ppo_config


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--address", default=None, help="Ray cluster address ('auto'); default: a local instance")
    parser.add_argument("--num-cpus", type=int, default=2, help="CPUs of the local instance")
    parser.add_argument("--rules", default="standard", help="preset name or YAML path")
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--train-batch-size", type=int, default=4000, help="env steps (decisions) per iteration")
    parser.add_argument("--num-env-runners", type=int, default=0, help="remote EnvRunners (0: sample in the driver)")
    parser.add_argument("--num-envs-per-env-runner", type=int, default=8)
    parser.add_argument("--per-seat", action="store_true", help="one policy per seat instead of self-play")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--eval-deals", type=int, default=100, help="duplicate deal groups per opponent")
    parser.add_argument(
        "--single-agent-vector", action="store_true", help="single-agent PPO on the Gymnasium vector env (unmasked)"
    )
    parser.add_argument("--opponents", default="heuristic-2", help="opponents of --single-agent-vector")
    args = parser.parse_args(argv)

    # Batch-of-8 forward passes in the driver: torch's intra-op thread pool costs far more than it saves.
    torch.set_num_threads(1)
    ray.init(address=args.address, num_cpus=None if args.address else args.num_cpus, include_dashboard=False)
    rules = resolve_rules(args.rules)
    if args.single_agent_vector:
        return single_agent_vector(args, rules)
    config = ppo_config(
        rules,
        shared_policy=not args.per_seat,
        train_batch_size=args.train_batch_size,
        num_env_runners=args.num_env_runners,
        num_envs_per_env_runner=args.num_envs_per_env_runner,
        seed=args.seed,
    )
    algo = config.build_algo()
    module_id = policy_ids(rules, not args.per_seat)[0]
    start = time.perf_counter()
    print("iter  env steps  episodes  mean len  entropy  policy loss  vf loss  steps/s  time (s)")
    for _ in range(args.iterations):
        result = algo.train()
        runners, learner = result["env_runners"], result["learners"][module_id]
        steps = runners["num_env_steps_sampled"]
        print(
            f"{result['training_iteration']:4d} {steps:10d} {runners['num_episodes']:9d} "
            f"{runners['episode_len_mean']:9.1f} {learner['entropy']:8.3f} {learner['policy_loss']:12.4f} "
            f"{learner['vf_loss']:8.4f} {steps / result['time_this_iter_s']:8.0f} {time.perf_counter() - start:9.1f}"
        )

    # Zero-sum self-play returns are 0 by construction: the baselines tell whether the policy improved.
    agent = RLlibAgent.from_algorithm(algo, rules, module_id=module_id)
    results = evaluate_against(agent, ["heuristic-3", "random"], rules, n_deals=args.eval_deals, progress=False)
    print(versus_markdown(results))
    algo.stop()
    ray.shutdown()
    return 0


def single_agent_vector(args: argparse.Namespace, rules) -> int:
    """RLlib's single-agent PPO on ``president_env/President-v0``'s vector entry point (see the module docstring)."""
    from ray.rllib.algorithms.ppo import PPOConfig

    config = (
        PPOConfig()
        .environment("president_env/President-v0", env_config={"rules": rules, "opponents": args.opponents})
        .env_runners(
            num_env_runners=args.num_env_runners,
            num_envs_per_env_runner=args.num_envs_per_env_runner,
            gym_env_vectorize_mode="vector_entry_point",
        )
        .training(train_batch_size=args.train_batch_size, minibatch_size=min(512, args.train_batch_size))
        .debugging(seed=args.seed)
    )
    algo = config.build_algo()
    start = time.perf_counter()
    print("iter  env steps  episodes  return mean  steps/s  time (s)")
    for _ in range(args.iterations):
        result = algo.train()
        runners = result["env_runners"]
        steps = runners["num_env_steps_sampled"]
        print(
            f"{result['training_iteration']:4d} {steps:10d} {runners.get('num_episodes', 0):9d} "
            f"{runners.get('episode_return_mean', float('nan')):12.3f} {steps / result['time_this_iter_s']:8.0f} "
            f"{time.perf_counter() - start:9.1f}"
        )
    algo.stop()
    ray.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
