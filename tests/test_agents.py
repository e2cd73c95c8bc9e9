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


STYLES = (*agents.styles.STYLES, agents.styles.DRAWN_STYLE)
BASELINES = ("random", "heuristic-1", "heuristic-2", "heuristic-3", "mc-4", "mc-5", *STYLES)
INSTALLED = tuple(name for name in agents.SHIPPED_AGENTS if agents.shipped_checkpoint(name).is_file()) + tuple(
    name for name, policy in agents.SEARCH_AGENTS.items() if agents.shipped_checkpoint(policy).is_file()
)


@pytest.mark.parametrize(
    "name, preset",
    [(name, "party") for name in BASELINES]
    + [pytest.param("ppo-universal", "standard", marks=pytest.mark.skipif(not HAS_TORCH, reason="needs torch"))],
)
def test_every_agent_name_makes_an_agent_with_both_methods(name, preset):
    rules = pe.load_preset(preset)
    game = pe.VecGame(rules, 8, seed=0)
    obs, mask = game.observe(), game.legal_mask()
    assert agents.names() == BASELINES + INSTALLED and "ppo-universal" in INSTALLED
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


def test_an_unlisted_shipped_agent_says_what_is_missing(monkeypatch, tmp_path):
    monkeypatch.setattr(agents, "shipped_checkpoint", lambda name: tmp_path / f"{name}.pt")
    assert agents.names() == BASELINES  # no checkpoint installed: no learned agent listed, but the name explains
    with pytest.raises(ValueError, match="'ppo-universal' is the packaged checkpoint .* missing"):
        pe.gym_env(opponents="ppo-universal")
    with pytest.raises(ValueError, match="'ppo-quebec' plays with the packaged checkpoint .* missing"):
        with pytest.warns(agents.RetiredAgentWarning):
            agents.make("ppo-quebec")
    for name in agents.SHIPPED_AGENTS:  # the message names the recipe that trains the agent, and it exists
        with pytest.raises(ValueError, match=r"president-train --config configs/train/") as caught:
            agents.make(name)
        recipe = re.search(r"configs/train/\S+\.yaml", str(caught.value)).group()
        assert (Path(__file__).parent.parent / recipe).is_file(), recipe


def test_random_agent_without_rules_checks_the_masks_only():
    mask = np.zeros((3, 7), bool)
    mask[:, 2] = True
    assert (RandomAgent(seed=0).act_batch(None, mask) == 2).all()
    assert RandomAgent(seed=0).act({"observation": None, "action_mask": mask[0].astype(np.int8)}) == 2
    with pytest.raises(ValueError, match="masks must have shape"):
        RandomAgent(seed=0).act_batch(None, mask[0])
    with pytest.raises(ValueError, match="row 1 of the mask has no legal action"):
        RandomAgent(seed=0).act_batch(None, np.array([[True], [False]]))


RETIRED_TABLES = {
    "ppo-standard-4p": pe.Rules(),
    "ppo-standard-4p-long": pe.Rules(),
    "search-ppo-standard-4p": pe.Rules(),
    "ppo-standard-3p": pe.Rules(n_players=3),
    "ppo-standard-5p": pe.Rules(n_players=5),
    **{f"ppo-{preset}": pe.load_preset(preset) for preset in PRESETS if preset != "standard"},
}
NEEDS_UNIVERSAL = pytest.mark.skipif(
    not HAS_TORCH or "ppo-universal" not in INSTALLED, reason="needs torch and ppo-universal"
)


def test_the_retired_names_are_the_per_table_agents_api_md_named():
    assert agents.RETIRED_AGENTS.keys() == RETIRED_TABLES.keys()
    assert not set(agents.RETIRED_AGENTS) & set(agents.names())  # accepted, never offered
    assert not set(agents.RETIRED_AGENTS) & set(agents.SHIPPED_AGENTS)
    assert agents.REPLACEMENT_AGENT in agents.SHIPPED_AGENTS
    for name in agents.RETIRED_AGENTS:
        assert registry.check_name(name) == name  # the one name check still accepts it (envs, CLIs, configs)
    with pytest.warns(agents.RetiredAgentWarning, match="'ppo-party' was retired"):
        assert agents.weights_file("ppo-party") == agents.shipped_checkpoint("ppo-universal")  # init.weights, probes


@NEEDS_UNIVERSAL
@pytest.mark.parametrize("name", list(RETIRED_TABLES))
def test_a_retired_name_makes_ppo_universal_at_its_table_with_a_deprecation_warning(name):
    message = rf"^agent '{name}' was retired: ppo-universal replaces it and plays in its place; name ppo-universal"
    with pytest.warns(DeprecationWarning, match=message) as caught:
        agent = agents.make(name, seed=0)  # no rules: the table it was trained for
    assert len(caught) == 1 and caught[0].category is agents.RetiredAgentWarning
    assert caught[0].filename == __file__  # the warning points at the caller of make
    assert agent.name == "ppo-universal" and agent.rules == RETIRED_TABLES[name]
    with pytest.warns(agents.RetiredAgentWarning):
        other = agents.make(name, pe.Rules(n_players=6, revolution=True), seed=0)  # rules given: those rules
    assert other.rules == pe.Rules(n_players=6, revolution=True)


@NEEDS_UNIVERSAL
def test_a_retired_name_plays_the_moves_of_ppo_universal_on_a_fixed_deal():
    rules = pe.load_preset("quebec")
    game = pe.VecGame(rules, 16, seed=3)
    obs, mask = game.observe(), game.legal_mask()
    with pytest.warns(agents.RetiredAgentWarning):
        retired = agents.make("ppo-quebec", rules, seed=5)
    expected = agents.make("ppo-universal", rules, seed=5).act_batch(obs, mask)
    np.testing.assert_array_equal(retired.act_batch(obs, mask), expected)
    # The env resolves an opponent by a retired name to the same agent.
    with pytest.warns(agents.RetiredAgentWarning):
        env = pe.gym_env(rules=rules, opponents="ppo-quebec", seat=0)
    assert {opponent.name for opponent in env.unwrapped.opponents} == {"ppo-universal"}


@NEEDS_UNIVERSAL
def test_names_of_the_agents_that_can_play_given_rules(fresh_registry):
    assert agents.names(pe.Rules(manches=1)) == BASELINES + INSTALLED
    assert agents.names("quebec") == BASELINES + INSTALLED  # the retired per-table agents are listed nowhere
    assert agents.names(pe.Rules(revolution=True, n_players=7)) == BASELINES + INSTALLED
    assert agents.names() == BASELINES + INSTALLED  # without rules: every installed name
    agents.register("mine", lambda rules, seed=None: RandomAgent(rules, seed))
    assert agents.names(pe.Rules(revolution=True)) == BASELINES + INSTALLED + ("mine",)  # others' play any rules
    with pytest.raises(ValueError, match="'nope' is neither a rules preset"):
        agents.names("nope")


def test_names_given_rules_leave_out_the_learned_agents_that_cannot_load(monkeypatch, tmp_path):
    monkeypatch.setattr(agents, "shipped_checkpoint", lambda name: tmp_path / f"{name}.pt")
    assert agents.names(pe.Rules()) == BASELINES  # no checkpoint installed
    monkeypatch.setattr(agents, "shipped_checkpoint", lambda name: Path(agents.__file__).parent / "checkpoints" / name)
    monkeypatch.setattr(agents.importlib.util, "find_spec", lambda name: None)  # no torch
    assert agents.names(pe.Rules()) == BASELINES


@pytest.mark.parametrize("seed", [-1, True, 1.5, "7"])
def test_make_names_a_bad_seed(seed):
    with pytest.raises(ValueError, match=r"^seed must be None, an integer >= 0 or a numpy SeedSequence, got "):
        agents.make("heuristic-1", seed=seed)
    agents.make("heuristic-1", seed=np.random.SeedSequence(3))  # what tournaments and the trainer hand in
    agents.make("heuristic-1", seed=np.int64(3))
