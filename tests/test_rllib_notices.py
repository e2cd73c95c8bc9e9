"""What building the RLlib adapter's module prints (the ``rllib`` extra; no Ray instance is started)."""

from __future__ import annotations

import logging

import pytest

pytest.importorskip("ray.rllib")

from ray.rllib.utils import deprecation_warning  # noqa: E402

import president_env as pe  # noqa: E402
from president_env.training.rllib_ppo import make_env, ppo_config  # noqa: E402

pytestmark = pytest.mark.rllib


class Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def test_building_the_module_logs_no_deprecation_warning_and_other_warnings_still_show():
    logger = logging.getLogger(deprecation_warning.__module__)  # RLlib's deprecation notices (Ray's own logger)
    seen = Collect()
    logger.addHandler(seen)
    # Another test of the same worker (a Ray start-up) may have raised this logger's level or disabled it: the
    # test is about the adapter's filter, so it sets both as a fresh process has them.
    level, disabled = logger.level, logger.disabled
    logger.setLevel(logging.WARNING)
    logger.disabled = False
    try:
        rules = pe.Rules(manches=1)
        config = ppo_config(rules, seed=0, hidden=(16,), num_envs_per_env_runner=1)
        config.get_multi_rl_module_spec(env=make_env({"rules": rules.to_dict()})).build()
        assert not [line for line in seen.lines if "DeprecationWarning" in line], seen.lines
        deprecation_warning(old="something_old", new="something_new", error=False)
        assert any("something_old" in line for line in seen.lines)  # only RLlib's notice about RLModuleConfig goes
    finally:
        logger.removeHandler(seen)
        logger.setLevel(level)
        logger.disabled = disabled
