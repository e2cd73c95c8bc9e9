"""The agent interface and registry: names, checkpoint loaders, the entry point, decoding observations."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import president_env as pe
from president_env import agents
from president_env.agents import Agent, RandomAgent
from president_env.core import engine, registry
from president_env.core.observation import layout
from president_env.core.presets import PRESETS

HAS_TORCH = importlib.util.find_spec("torch") is not None


BASELINES = ("random", "heuristic-1", "heuristic-2", "heuristic-3", "mc-4", "mc-5") + tuple(agents.styles.STYLES)
SHIPPED = tuple(name for name in agents.SHIPPED_AGENTS if agents.shipped_checkpoint(name).is_file())
# The shipped learned agents, then the search over the first standard one.
INSTALLED = SHIPPED + tuple(f"search-{name}" for name in SHIPPED if name == "ppo-standard-4p")


@pytest.mark.parametrize(
    "name, preset",
    [(name, "party") for name in BASELINES]
    + [pytest.param("ppo-standard-4p", "standard", marks=pytest.mark.skipif(not HAS_TORCH, reason="needs torch"))],
)
def test_every_agent_name_makes_an_agent_with_both_methods(name, preset):
    rules = pe.load_preset(preset)
    game = pe.VecGame(rules, 8, seed=0)
    obs, mask = game.observe(), game.legal_mask()
    assert agents.names() == BASELINES + INSTALLED and "ppo-standard-4p" in INSTALLED
    agent = agents.make(name, rules, seed=0)
    assert agent.name == name and isinstance(agent, agents.Policy)
    actions = agent.act_batch(obs, mask)
    assert actions.shape == (8,) and mask[np.arange(8), actions].all()
    # act() is one row of act_batch(): fresh agents with one seed agree.
    single = agents.make(name, rules, seed=1).act({"observation": obs[0], "action_mask": mask[0].astype(np.int8)})
    assert single == agents.make(name, rules, seed=1).act_batch(obs[:1], mask[:1])[0]


def test_make_accepts_a_preset_name_and_defaults_to_the_standard_game():
    assert agents.make("heuristic-2").rules == pe.Rules()
    assert agents.make("heuristic-2", "party").rules == pe.load_preset("party")


def test_unknown_names_and_double_registration_are_clear_errors():
    with pytest.raises(ValueError, match="unknown agent 'heuristic-9'.*heuristic-3"):
        agents.make("heuristic-9")
    with pytest.raises(ValueError, match="already registered"):
        agents.register("random", lambda rules, seed=None: RandomAgent(rules, seed))


@pytest.fixture
def checkpoint_loaders(monkeypatch):
    """The process-wide checkpoint-loader registry, restored after the test: loaders a test adds go away."""
    registry.load_plugins()  # the entry-point loaders join once, before the copy
    monkeypatch.setattr(registry, "_CHECKPOINT_LOADERS", list(registry._CHECKPOINT_LOADERS))
    return registry._CHECKPOINT_LOADERS


def test_checkpoint_paths_go_through_registered_loaders(tmp_path, checkpoint_loaders):
    path = tmp_path / "always_first.ckpt"
    path.write_text("first-legal-action")

    class FirstLegal(Agent):
        name = "first-legal"

        def act_batch(self, observations, masks):
            return np.argmax(masks, axis=1)

    def loader(file, rules, seed):
        return FirstLegal(rules, seed) if open(file).read() == "first-legal-action" else None

    other = tmp_path / "other.ckpt"
    other.write_text("something else")
    with pytest.raises(ValueError, match="no checkpoint loader accepts"):
        agents.make(str(other))
    agents.register_checkpoint_loader(loader)
    assert checkpoint_loaders[-1] is loader
    assert agents.make(str(path)).name == "first-legal"
    env = pe.gym_env(opponents=str(path), seat=0)  # the Gym env uses the same registry
    assert all(o.name == "first-legal" for o in env.unwrapped.opponents)
    with pytest.raises(ValueError, match="no checkpoint loader accepts"):
        agents.make(str(other))


def test_decode_reads_back_the_state_the_observation_was_made_from():
    rules = pe.Rules(initial_roles="draw", manches=2, revolution=True)
    game = pe.VecGame(rules, 32, seed=1)
    rng = np.random.default_rng(1)
    for _ in range(40):
        game.step(engine.sample_legal(game.legal_mask(), rng))
    view = agents.decode(rules, game.observe())
    state, rows = game.state, np.arange(32)
    np.testing.assert_array_equal(view.hand, state.hands[rows, state.current])
    np.testing.assert_array_equal(view.held[:, 0], state.n_held[rows, state.current])
    np.testing.assert_array_equal(view.trick_rank, state.trick_rank)
    np.testing.assert_array_equal(view.trick_count, state.trick_count)
    np.testing.assert_array_equal(view.revolution, state.revolution)
    np.testing.assert_array_equal(view.exchange, state.phase == engine.PHASE_EXCHANGE)
    assert (view.to_act == 0).all()


def test_the_decoded_view_has_one_field_per_segment_of_the_observation_spec():
    rules = pe.Rules(n_players=5, jokers=2)
    spec = layout(rules)
    obs = pe.VecGame(rules, 3, seed=0).observe()
    view, named = agents.decode(rules, obs), spec.view(obs)
    assert set(spec.names) <= set(dir(view))
    for name in spec.names:
        np.testing.assert_array_equal(getattr(view, name), named[name])
    with pytest.raises(AttributeError, match="no observation segment 'hands'; segments: hand, played"):
        view.hands  # noqa: B018
    with pytest.raises(AttributeError, match="read-only"):
        view.hand = obs
    one = agents.decode(rules, obs[1])  # one observation reads as a batch of one
    assert one.batch_size == 1 and one.hand.shape == (1, rules.n_ranks)
    np.testing.assert_array_equal(view.partner, view.exchange_partner)


def test_random_agent_is_uniform_over_legal_actions_and_seeded():
    rules = pe.Rules()
    mask = np.zeros((4000, rules.num_actions), bool)
    mask[:, [0, 5, 9]] = True
    obs = np.zeros((4000, pe.VecGame(rules).obs_dim), np.float32)
    first = RandomAgent(rules, seed=3).act_batch(obs, mask)
    assert set(np.unique(first)) == {0, 5, 9}
    assert np.abs(np.bincount(first, minlength=10)[[0, 5, 9]] / 4000 - 1 / 3).max() < 0.03
    assert (RandomAgent(rules, seed=3).act_batch(obs, mask) == first).all()


# ---------------------------------------------------------------- one registry, filled through the entry point
@pytest.fixture
def fresh_registry(monkeypatch):
    """The registry as a new interpreter has it (``random`` only, plugins not loaded yet), restored afterwards."""
    monkeypatch.setattr(registry, "_FACTORIES", {"random": RandomAgent})
    monkeypatch.setattr(registry, "_OWN_RULES", set())
    monkeypatch.setattr(registry, "_INSTALLED", {})
    monkeypatch.setattr(registry, "_CHECKPOINT_LOADERS", [])
    monkeypatch.setattr(registry, "_PLUGINS_LOADED", False)


def test_the_agents_package_declares_its_entry_point():
    (entry,) = [e for e in importlib.metadata.entry_points(group=registry.PLUGIN_GROUP) if e.name == "agents"]
    assert entry.value == "president_env.agents:register_opponents" and entry.load() is agents.register_opponents


def test_the_registry_fills_from_the_entry_points_on_first_lookup_and_skips_a_broken_plugin(
    fresh_registry, monkeypatch
):
    group = registry.PLUGIN_GROUP
    plugins = [
        importlib.metadata.EntryPoint("broken", "no_such_module_xyz:register", group),
        importlib.metadata.EntryPoint("agents", "president_env.agents:register_opponents", group),
    ]
    monkeypatch.setattr(registry.importlib.metadata, "entry_points", lambda group: plugins)
    assert list(registry._FACTORIES) == ["random"]
    with pytest.warns(RuntimeWarning, match="agent plugin broken = no_such_module_xyz:register .*skipped"):
        assert registry.names() == BASELINES + INSTALLED
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # plugins load once
        assert registry.names() == BASELINES + INSTALLED
    agents.register_opponents()  # again: nothing changes
    assert registry.names() == BASELINES + INSTALLED and len(registry._CHECKPOINT_LOADERS) == 2


def test_a_registration_before_any_lookup_comes_after_the_plugins(fresh_registry):
    def factory(rules, seed=None):
        return RandomAgent(rules, seed)

    agents.register("early", factory)  # loads the plugins first: the order is the same every time
    assert agents.names() == BASELINES + INSTALLED + ("early",)
    agents.register("early", factory)  # the same factory again is no error
    with pytest.raises(ValueError, match="'heuristic-1' is already registered"):
        agents.register("heuristic-1", factory)
    agents.register("heuristic-1", factory, overwrite=True)
    assert type(agents.make("heuristic-1")) is RandomAgent
    with pytest.raises(ValueError, match="non-empty string"):
        agents.register("", factory)
    with pytest.raises(ValueError, match="factory must be callable"):
        agents.register("x", "not a factory")


def test_a_name_registered_in_the_agents_is_an_opponent_of_the_gym_env(fresh_registry):
    made = []

    def factory(rules, seed=None):
        made.append(rules)
        return RandomAgent(rules, seed)

    agents.register("test-random", factory)
    env = pe.gym_env(rules="party", opponents="test-random", seat=0)
    env.reset(seed=0)
    assert made == [pe.load_preset("party")] * 3
    assert all(type(o) is RandomAgent for o in env.unwrapped.opponents)


def test_the_environment_resolves_agent_names_without_importing_the_agents_until_asked():
    script = (
        "import sys\n"
        "import president_env as pe\n"
        "from president_env.core import registry\n"
        "assert 'president_env.agents' not in sys.modules, 'importing the env imported the agents'\n"
        "env = pe.gym_env(opponents='heuristic-3', seat=0)\n"
        "assert 'president_env.agents' in sys.modules and 'torch' not in sys.modules\n"
        "print(*[o.name for o in env.unwrapped.opponents], registry.make('mc-5', 'party').name)\n"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["heuristic-3"] * 3 + ["mc-5"]


def test_unlisted_shipped_agents_and_agents_that_play_their_own_rules(monkeypatch, tmp_path):
    monkeypatch.setattr(agents, "shipped_checkpoint", lambda name: tmp_path / f"{name}.pt")
    assert agents.names() == BASELINES  # no checkpoint installed: no learned agent listed, but the name explains
    with pytest.raises(ValueError, match="'ppo-standard-4p' is the packaged checkpoint .* missing"):
        pe.gym_env(opponents="ppo-standard-4p")
    for name in agents.SHIPPED_AGENTS:  # the message names the recipe that trains the agent, and it exists
        with pytest.raises(ValueError, match=r"president-train --config configs/train/") as caught:
            agents.make(name)
        recipe = re.search(r"configs/train/\S+\.yaml", str(caught.value)).group()
        assert (Path(__file__).parent.parent / recipe).is_file(), recipe


@pytest.mark.skipif(not HAS_TORCH or "ppo-standard-4p" not in INSTALLED, reason="needs torch and the checkpoint")
def test_a_shipped_learned_agent_plays_its_own_rules_and_refuses_others():
    assert agents.make("ppo-standard-4p").rules == pe.Rules(manches=1)  # no rules: the ones it was trained on
    message = (
        r"'ppo-standard-4p' was trained for the standard preset \(4 players\) and plays only those rules "
        r"\(any number of manches\); "
    )
    with pytest.raises(ValueError, match=message + r"the requested rules differ in n_players \(trained 4, requested 5"):
        agents.make("ppo-standard-4p", pe.Rules(n_players=5))
    with pytest.raises(ValueError, match=message + r".*revolution \(trained False, requested True\)"):
        pe.gym_env(rules=pe.Rules(revolution=True), opponents="ppo-standard-4p")


def test_random_agent_without_rules_checks_the_masks_only():
    mask = np.zeros((3, 7), bool)
    mask[:, 2] = True
    assert (RandomAgent(seed=0).act_batch(None, mask) == 2).all()
    assert RandomAgent(seed=0).act({"observation": None, "action_mask": mask[0].astype(np.int8)}) == 2
    with pytest.raises(ValueError, match="masks must have shape"):
        RandomAgent(seed=0).act_batch(None, mask[0])
    with pytest.raises(ValueError, match="row 1 of the mask has no legal action"):
        RandomAgent(seed=0).act_batch(None, np.array([[True], [False]]))


TABLE_RULES = {
    "ppo-standard-3p": pe.Rules(n_players=3),
    "ppo-standard-5p": pe.Rules(n_players=5),
    **{f"ppo-{preset}": pe.load_preset(preset) for preset in PRESETS},
    "ppo-standard-4p": pe.Rules(),
    "ppo-standard-4p-long": pe.Rules(),
}


@pytest.mark.skipif(not HAS_TORCH, reason="needs torch")
@pytest.mark.parametrize("name", [name for name in SHIPPED if name not in agents.UNIVERSAL_AGENTS])
def test_every_shipped_agent_plays_its_table_and_is_small(name):
    """Each per-table agent (the universal one: tests/test_ppo_universal.py)."""
    rules = TABLE_RULES[name]
    assert agents.shipped_checkpoint(name).stat().st_size < 5_000_000
    # Without rules, those it was trained on (one manche); given its table's match, that match.
    assert agents.make(name).rules == rules.replace(manches=1) and agents.make(name, rules).rules == rules
    other = pe.Rules(n_players=rules.n_players, revolution=not rules.revolution)
    with pytest.raises(ValueError, match=f"'{name}' was trained for .* plays only those rules"):
        agents.make(name, other)
    env = pe.gym_env(rules=rules, opponents=name, seat=0)
    _, info = env.reset(seed=1)
    terminated = False
    while not terminated:
        _, _, terminated, _, info = env.step(env.action_space.sample())
    assert 0 <= info["finish_position"] < rules.n_players and info["manche"] >= rules.manches - 1


@pytest.mark.skipif(not HAS_TORCH or "ppo-standard-4p" not in INSTALLED, reason="needs torch and the checkpoints")
def test_names_of_the_agents_that_can_play_given_rules(monkeypatch, fresh_registry):
    universal = tuple(name for name in INSTALLED if name in agents.UNIVERSAL_AGENTS)  # plays any table
    standard = BASELINES + ("ppo-standard-4p", "ppo-standard-4p-long") + universal + ("search-ppo-standard-4p",)
    assert agents.names(pe.Rules(manches=1)) == standard
    assert agents.names(pe.Rules(manches=4)) == standard  # a learned agent plays a match of any length
    assert agents.names(pe.load_preset("standard").replace(n_players=3)) == BASELINES + ("ppo-standard-3p",) + universal
    assert agents.names("quebec") == BASELINES + ("ppo-quebec",) + universal
    assert agents.names(pe.Rules(revolution=True)) == BASELINES + universal  # no per-table agent was trained for it
    assert agents.names() == BASELINES + INSTALLED  # without rules: every installed name, as before
    agents.register("mine", lambda rules, seed=None: RandomAgent(rules, seed))
    assert agents.names(pe.Rules(revolution=True)) == BASELINES + universal + ("mine",)  # others' play any rules
    # Each checkpoint's rules are read once: later listings load nothing.
    monkeypatch.setattr(agents.checkpoint, "load_checkpoint", lambda path: pytest.fail(f"loaded {path} again"))
    assert agents.names(pe.Rules(n_players=5)) == BASELINES + ("ppo-standard-5p",) + universal + ("mine",)
    with pytest.raises(ValueError, match="'nope' is neither a rules preset"):
        agents.names("nope")


def test_names_given_rules_leave_out_the_learned_agents_that_cannot_load(monkeypatch, tmp_path):
    monkeypatch.setattr(agents, "shipped_checkpoint", lambda name: tmp_path / f"{name}.pt")
    assert agents.names(pe.Rules()) == BASELINES  # no checkpoint installed
    monkeypatch.setattr(agents, "shipped_checkpoint", lambda name: Path(agents.__file__).parent / "checkpoints" / name)
    monkeypatch.setattr(agents.importlib.util, "find_spec", lambda name: None)  # no torch
    assert agents.names(pe.Rules()) == BASELINES


@pytest.mark.skipif(not HAS_TORCH or "ppo-standard-4p" not in INSTALLED, reason="needs torch and the checkpoint")
def test_a_shipped_learned_agent_plays_a_match_of_any_length():
    agent = agents.make("ppo-standard-4p", pe.Rules(manches=3), seed=0)
    assert agent.rules == pe.Rules(manches=3) and agent.name == "ppo-standard-4p"
    search = agents.make("search-ppo-standard-4p", pe.Rules(manches=3), seed=0)
    assert search.rules == pe.Rules(manches=3)
    env = pe.gym_env(rules=pe.Rules(manches=2), opponents="ppo-standard-4p", seat=0)
    env.reset(seed=0)


@pytest.mark.parametrize("seed", [-1, True, 1.5, "7"])
def test_make_names_a_bad_seed(seed):
    with pytest.raises(ValueError, match=r"^seed must be None, an integer >= 0 or a numpy SeedSequence, got "):
        agents.make("heuristic-1", seed=seed)
    agents.make("heuristic-1", seed=np.random.SeedSequence(3))  # what tournaments and the trainer hand in
    agents.make("heuristic-1", seed=np.int64(3))
