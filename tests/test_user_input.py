"""Everything a user types, made safe: YAML files and values, config overrides, CLI arguments, moves.

Each input either works or is refused with one short ``ValueError`` (exit code 2 for a command) that
names what is wrong; none hangs, eats memory or ends in a traceback. Hypothesis covers whole classes
of input (random YAML documents and mutations of the shipped files, random overrides, random lines).
"""

from __future__ import annotations

import importlib.util
import io
import math
import warnings

import pytest
import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from president_env.core.presets import PRESETS, preset_path
from president_env.core.rules import RULE_CHOICES, RULE_FIELDS, Rules
from president_env.core.user_input import (
    MAX_YAML_CHARS,
    MAX_YAML_DEPTH,
    MAX_YAML_VALUES,
    RetiredAgentWarning,
    check_writable_dir,
    load_yaml,
    one_line_warnings,
    read_text,
    short_repr,
)

SHORT = 400  # characters: the longest message any bad input may produce
HAS_PYDANTIC = importlib.util.find_spec("pydantic") is not None  # training configs need it (the train extra)
needs_pydantic = pytest.mark.skipif(not HAS_PYDANTIC, reason="training configs need pydantic (the train extra)")


def billion_laughs(key: str, levels: int = 9) -> str:
    """A ~500-byte YAML document whose value under ``key`` expands to 9**levels scalars."""
    lines = [f"{key}: [&a0 [1, 1, 1, 1, 1, 1, 1, 1, 1]"]
    for level in range(1, levels):
        lines.append(f"  , &a{level} [" + ", ".join([f"*a{level - 1}"] * 9) + "]")
    return "\n".join(lines) + "]\n"


def refused(call, *args, **kwargs) -> str:
    """The message of the ``ValueError`` that ``call`` raises; fails if it returns or the message is long."""
    with pytest.raises(ValueError) as info:
        call(*args, **kwargs)
    message = str(info.value)
    assert len(message) < SHORT, f"message of {len(message)} characters"
    return message


# ---------------------------------------------------------------- load_yaml, read_text, short_repr
def test_alias_bomb_is_refused_before_it_is_expanded():
    text = billion_laughs("exchange")
    assert len(text) < 600
    assert f"more than {MAX_YAML_VALUES} values" in refused(load_yaml, text, "rules file x")


@pytest.mark.parametrize(
    "text, message",
    [
        ("&a [*a]", "alias of no complete value (undefined or recursive)"),
        ("[" * (MAX_YAML_DEPTH + 1) + "]" * (MAX_YAML_DEPTH + 1), "nested too deeply"),
        ("[" * 5000, "nested too deeply"),  # deeper than Python's recursion limit
        ("a: " + "1" * 5000, "an integer of more than 4300 digits"),
        ("a: 2001-02-30", "cannot be read: day is out of range"),
        ("{[1]: 2}", "not valid YAML"),
        ("a: 1\n---\nb: 2\n", "not valid YAML"),
        ("!!python/object/apply:os.system ['true']", "not valid YAML"),
        ("a: " + "x" * MAX_YAML_CHARS, f"at most {MAX_YAML_CHARS} are read"),
    ],
    ids=lambda value: value[:20],
)
def test_hostile_yaml_is_a_short_value_error(text, message):
    assert message in refused(load_yaml, text, "rules file x")


def test_yaml_within_the_bounds_loads_as_safe_load_does():
    text = "a: &x [1, 2]\nb: *x\nc: {d: null, e: 2.5, f: yes}\n"
    assert load_yaml(text, "x") == yaml.safe_load(text)
    assert load_yaml("", "x") is None and load_yaml("# only a comment\n", "x") is None


def test_read_text_names_the_file(tmp_path):
    binary = tmp_path / "rules.yaml"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff")
    assert "rules.yaml' is not UTF-8 text" in refused(read_text, binary, "rules file")
    assert "does not exist" in refused(read_text, tmp_path / "nope.yaml", "rules file")
    assert "does not exist or is not a file" in refused(read_text, tmp_path, "rules file")
    big = tmp_path / "big.yaml"
    big.write_text("#" * (MAX_YAML_CHARS + 1))
    assert f"more than {MAX_YAML_CHARS} bytes" in refused(read_text, big, "rules file")


def test_short_repr_is_short_for_any_value():
    assert short_repr([2] * 200_000) == "[2, 2, 2, 2, 2, 2, ...]"
    assert short_repr(10**5000) == "<an integer of about 5001 digits>"
    assert len(short_repr("x" * 10**6)) <= 80 and short_repr("7") == "'7'"
    nested: list = []
    for _ in range(10_000):
        nested = [nested, nested]  # 2**10000 leaves, shared
    assert len(short_repr(nested)) <= 80


def test_a_command_line_shows_each_warning_once_on_one_line_and_restores_the_settings(capsys):
    @one_line_warnings("prog")
    def run() -> None:
        for _ in range(3):
            warnings.warn("a retired\nname", RetiredAgentWarning, stacklevel=1)  # hidden outside __main__ otherwise
        warnings.warn("another", UserWarning, stacklevel=1)

    before = (list(warnings.filters), warnings.showwarning)
    run()
    assert capsys.readouterr().err == "prog: warning: a retired name\nprog: warning: another\n"
    run()  # every run tells its own warnings
    assert capsys.readouterr().err.count("a retired name") == 1
    assert (list(warnings.filters), warnings.showwarning) == before


def test_check_writable_dir(tmp_path):
    assert check_writable_dir(tmp_path / "a" / "b", "--out") == tmp_path / "a" / "b"
    assert (tmp_path / "a" / "b").is_dir()
    (tmp_path / "file").write_text("x")
    assert "--out" in refused(check_writable_dir, tmp_path / "file", "--out")
    assert "Not a directory" in refused(check_writable_dir, tmp_path / "file" / "sub", "--out")


# ---------------------------------------------------------------- rules files
def test_rules_alias_bomb_and_huge_exchange_are_short_errors(tmp_path):
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(billion_laughs("exchange"))
    assert "bomb.yaml" in refused(Rules.from_yaml, bomb)
    assert "more than" in refused(Rules.from_yaml, billion_laughs("exchange"))  # as YAML text too
    huge = tmp_path / "huge.yaml"
    huge.write_text("exchange: [" + "2, " * 200_000 + "]\n")
    assert "huge.yaml" in refused(Rules.from_yaml, huge)
    assert refused(Rules, exchange=[2] * 200_000) == "exchange has 200000 entries; at most 4 pairs exist (8 players)"
    assert "(5, 5, 5, 5, 5, 5, ...)" in refused(Rules, exchange=[5] * 200_000)
    assert "and 95 more" in refused(Rules.from_dict, {f"field{i}": 1 for i in range(100)})


def test_binary_rules_file_is_a_value_error_naming_it(tmp_path):
    path = tmp_path / "table.yaml"
    path.write_bytes(bytes(range(256)))
    assert "table.yaml" in refused(Rules.from_yaml, path)
    from president_env.core.presets import resolve_rules

    assert "table.yaml" in refused(resolve_rules, path)


_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 10),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from([c for choices in RULE_CHOICES.values() for c in choices]),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)


def _assert_valid_or_refused(load, *args) -> None:
    try:
        rules = load(*args)
    except ValueError as err:
        assert len(str(err)) < SHORT
    else:
        assert isinstance(rules, Rules) and Rules.from_dict(rules.to_dict()) == rules


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.sampled_from(RULE_FIELDS) | st.text(max_size=8), _VALUES, max_size=6))
def test_random_rules_documents_give_rules_or_a_value_error(data):
    _assert_valid_or_refused(Rules.from_yaml, "# rules\n" + yaml.safe_dump(data))


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(PRESETS), st.data())
def test_mutated_rules_files_give_rules_or_a_value_error(name, data):
    text = preset_path(name).read_text(encoding="utf-8")
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(text)))
        cut = data.draw(st.integers(0, 3))
        insert = data.draw(st.text(alphabet=st.sampled_from("&*[]{}:-!|>'\"#, \n\t0123456789abcxyz²é"), max_size=6))
        text = text[:at] + insert + text[at + cut :]
    _assert_valid_or_refused(Rules.from_yaml, "\n" + text)


# ---------------------------------------------------------------- training configs
def load_config(*args, **kwargs):
    """``president_env.training.config.load_config``, imported when a test calls it (pydantic: the train extra)."""
    from president_env.training.config import load_config

    return load_config(*args, **kwargs)


@needs_pydantic
@pytest.mark.parametrize(
    "override, message",
    [
        ("threads=-1", "threads must be an integer from 0 to 1024, got -1"),
        ("seed=-1", "seed must be an integer >= 0, got -1"),
        ("ppo.learning_rate=.inf", "ppo.learning_rate must be a finite number in (0, 1], got inf"),
        ("ppo.learning_rate=1e999", "ppo.learning_rate must be a finite number in (0, 1], got inf"),
        ("ppo.ent_coef=.nan", "ppo.ent_coef must be a finite number in [0, 10], got nan"),
        ("ppo.max_grad_norm=-1", "ppo.max_grad_norm must be a finite number in (0, 1e+06], got -1"),
        ("ppo.target_kl=0", "ppo.target_kl must be a finite number in (0, 1e+06] or null, got 0"),
        ("opponents.self_play=.nan", "opponents.self_play must be a finite number"),
        ("rollout.ray_cpus_per_shard=.inf", "rollout.ray_cpus_per_shard must be a finite number"),
        ("budget.eval_opponent=nobody", "budget.eval_opponent: unknown agent 'nobody'"),
        ("opponents.baselines={nobody: 0.3}", "opponents.baselines: unknown agent 'nobody'"),
        ("opponents.baselines={1: 0.3}", "opponents.baselines key must be a string, got 1"),
        ("network.activation=gelu", "network.activation must be one of relu, tanh, got 'gelu'"),
        ("network.hidden=[]", "network.hidden must be a non-empty list, got []"),
        ("network.hidden=[64, 0]", "network.hidden[1] must be an integer from 1 to"),
        ("ppo.gamma=" + "9" * 400, "ppo.gamma must be a finite number in [0, 1], got <an integer of about 401 digits>"),
        ("seed=" + "1" * 5000, "override seed='111"),
        ("rules=" + "x" * 5000, "rules: 'xxx"),
        ("ppo.clip_coef=0", "ppo.clip_coef must be a finite number in (0, 10]"),
        ("rollout.shards=4096", "rollout.shards must divide ppo.num_envs (2048), got 4096"),
        ("out_dir=' '", "out_dir: must not be empty"),
        ("out_dir=", "out_dir must be a string, got None"),
    ],
    ids=lambda value: value[:30],
)
def test_bad_override_is_a_short_error_naming_the_field(override, message):
    assert message in refused(load_config, None, [override])


@needs_pydantic
def test_config_alias_bomb_and_binary_file_are_short_errors(tmp_path):
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(billion_laughs("ppo"))
    assert "bomb.yaml' holds more than" in refused(load_config, bomb)
    assert "holds more than" in refused(load_config, None, ["network.hidden=" + billion_laughs("x").split(": ", 1)[1]])
    binary = tmp_path / "run.yaml"
    binary.write_bytes(b"\xff\xfe\x00ppo: {}\n")
    assert "run.yaml' is not UTF-8 text" in refused(load_config, binary)


def _config_keys() -> tuple[list[str], list[str]]:
    """Every key of a training config, dotted (``ppo``, ``ppo.num_envs``, ...), and those of the leaf fields."""
    if not HAS_PYDANTIC:
        return [], []
    from president_env.training.config import TrainConfig

    keys, leaves = [], []
    for name, field in TrainConfig.model_fields.items():
        keys.append(name)
        section = field.annotation
        if isinstance(section, type) and hasattr(section, "model_fields"):
            keys += [f"{name}.{child}" for child in section.model_fields]
            leaves += [f"{name}.{child}" for child in section.model_fields]
        else:
            leaves.append(name)
    return keys, leaves


CONFIG_KEYS, CONFIG_FIELDS = _config_keys()


def _assert_short_error_naming(message: str, key: str) -> None:
    """A refusal fit for one line of ``president-train``: short, naming ``key``, none of pydantic's report."""
    assert len(message) < SHORT and "\n" not in message, message
    assert all(part in message for part in key.split(".")), message
    assert "pydantic" not in message and "Input should" not in message, message


@needs_pydantic
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.sampled_from(CONFIG_KEYS) | st.from_regex(r"[a-z_]{1,8}(\.[a-z_]{1,8}){0,2}", fullmatch=True),
            _VALUES.map(lambda v: yaml.safe_dump(v, default_flow_style=True).removesuffix("\n...\n").strip())
            | st.text(max_size=20),
        ),
        min_size=1,
        max_size=3,
    )
)
def test_random_overrides_give_a_valid_config_or_an_error_naming_the_field(items):
    overrides = [f"{key}={value}" for key, value in items]
    try:
        config = load_config(None, overrides)
    except ValueError as err:
        message = str(err)
        assert len(message) < SHORT
        assert any(part in message for key, _ in items for part in key.split(".")), message
        return
    p = config.ppo
    for value in (p.learning_rate, p.gamma, p.gae_lambda, p.clip_coef, p.ent_coef, p.vf_coef, p.max_grad_norm):
        assert math.isfinite(value)
    assert config.seed >= 0 and config.threads >= 0 and config.ppo.num_envs % config.rollout.shards == 0
    assert load_config(None, overrides) == config


_NUMBERS = (
    st.integers(-5, 5000)
    | st.integers()
    | st.floats(0, 1)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from([0, 1, 1e6, 1e9, 1024, 65536, 65537, 1 << 20, (1 << 20) + 1, 1e-300, 2**1024, -0.0])
)
_TYPED = st.sampled_from(
    ["true", "no", "null", "~", "", " ", "[]", "{}", "[64, 64]", "[1, 0]", "{heuristic-3: 1.0}", "{random: 1}"]
    + ["3e-4", "1e999", "-1e-3", ".inf", "-.inf", ".nan", "0x10", "1_000", "0o17", "017", "1:30", "2001-01-01"]
    + ["relu", "tanh", "standard", "party", "heuristic-3", "ppo-universal", "local", "'3'", '"1.5"', "!!binary aGk="]
)


@needs_pydantic
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(CONFIG_FIELDS),
    _NUMBERS.map(repr) | _NUMBERS.map(str) | _TYPED | st.text(max_size=20),
)
def test_any_value_of_a_field_is_an_error_naming_it_or_a_config_that_round_trips(tmp_path_factory, key, text):
    """``--set key=text`` for each field and any text: a short error naming the field, or a config whose field holds
    the value the text spells (as YAML) and that comes back equal from ``save`` and ``load_config``."""
    try:
        config = load_config(None, [f"{key}={text}"])
    except ValueError as err:
        event("refused")
        _assert_short_error_naming(str(err), key)
        return
    event("valid")
    got = config.to_dict()
    for part in key.split("."):
        got = got[part]
    typed = load_yaml(text, "override") if text.strip() else None
    assert got == typed or (isinstance(typed, str) and got == float(typed)), (got, typed)
    path = config.save(tmp_path_factory.mktemp("config") / "config.yaml")
    assert load_config(path) == config


# ---------------------------------------------------------------- president-train
def test_president_train_refuses_bad_input_with_exit_2_before_training(tmp_path, capsys):
    pytest.importorskip("torch")
    from president_env.training.cli import main

    (tmp_path / "file").write_text("x")
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(billion_laughs("budget"))
    cases = [
        (["--set", "threads=-1"], "threads must be an integer"),
        (["--set", "budget.eval_opponent=nobody"], "budget.eval_opponent: unknown agent 'nobody'"),
        (["--set", "seed=-1"], "seed must be an integer >= 0"),
        (["--set", "ppo.learning_rate=.inf"], "ppo.learning_rate must be a finite number"),
        (["--out-dir", str(tmp_path / "file" / "run")], "--out-dir"),
        (["--config", str(bomb)], "holds more than"),
        (["--resume", str(tmp_path / "nowhere" / "checkpoint.pt")], "no such checkpoint file"),
    ]
    for argv, message in cases:
        assert main(argv + ["--no-progress"]) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith("president-train: error: ") and message in err and err.count("\n") == 1, err
    assert not (tmp_path / "nowhere").exists()  # nothing is created for a run that cannot start


# ---------------------------------------------------------------- president-eval
def test_president_eval_checks_every_input_before_the_tournament(tmp_path, monkeypatch, capsys):
    from president_env.evaluation import cli as evaluate_module

    def no_tournament(*args, **kwargs):
        raise AssertionError("the tournament ran before the input was checked")

    monkeypatch.setattr(evaluate_module, "evaluate", no_tournament)
    (tmp_path / "file").write_text("x")
    bad_checkpoint = tmp_path / "bad.pt"
    bad_checkpoint.write_bytes(b"not a checkpoint")
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(billion_laughs("exchange"))
    cases = [
        (["--agents", "random", "--against", "heuristic-3,nobody"], "unknown agent 'nobody'"),
        (["--agents", "random", "--out", str(tmp_path / "file")], "--out"),
        (["--agents", f"random,{bad_checkpoint}"], "bad.pt"),
        (["--agents", "random", "--rules", str(bomb)], "holds more than"),
        (["--agents", "random", "--seed", "-1"], "seed must be a non-negative integer"),
        (["--agents", "random", "--agent-seed", "-1"], "agent_seed must be a non-negative integer"),
        (["--agents", "random", "--deals", "1000000000000"], "deals must be at most 10,000,000"),
    ]
    for argv, message in cases:
        with pytest.raises(SystemExit) as exit_info:
            evaluate_module.main(["--no-progress", "--deals", "1"] + argv)
        assert exit_info.value.code == 2, argv
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err, err


# ---------------------------------------------------------------- president-play
def needs_play_extra() -> None:
    """Skip unless rich and prompt_toolkit (the play extra, which ``president-play`` needs) are installed."""
    for module in ("rich", "prompt_toolkit"):
        pytest.importorskip(module, reason="president-play needs the play extra")


@pytest.mark.parametrize("missing", ["rich", "prompt_toolkit"])
def test_president_play_without_the_play_extra_says_so_in_one_line_and_exits_2(missing):
    """Run with the library hidden (``None`` in ``sys.modules`` fails its import), as on a core install."""
    import subprocess
    import sys

    code = (
        f"import sys; sys.modules[{missing!r}] = None\n"
        "from president_env.apps.terminal import main\n"
        "raise SystemExit(main(['--seed', '1']))"
    )
    done = subprocess.run([sys.executable, "-c", code], input="", capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == 'president-play needs the play extra: pip install "president-env[play]"\n'


def test_president_play_rules_bomb_is_exit_2(tmp_path):
    needs_play_extra()
    from president_env.apps.terminal import main

    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(billion_laughs("exchange"))
    err = io.StringIO()
    assert main(["--rules", str(bomb)], io.StringIO(), io.StringIO(), err) == 2
    assert "holds more than" in err.getvalue() and len(err.getvalue()) < SHORT


@pytest.fixture(scope="module")
def human_turn():
    """A game of ``president-play`` at the human's first decision, and its legal actions."""
    needs_play_extra()
    from president_env.apps.terminal import build_game

    game = build_game(["--opponents", "random", "--seed", "3", "--seat", "0"], io.StringIO(), io.StringIO())
    game.env.reset(seed=game.env_seed)
    for agent in game.env.agent_iter():
        observation, _, _, _, info = game.env.last()
        player = game.agent_names.index(agent)
        if player == game.human:
            return game, [int(a) for a in observation["action_mask"].nonzero()[0]]
        game.env.step(int(game.agents[player].act(observation, info)))
    raise AssertionError("the human never acts")


_TOKENS = st.sampled_from(
    ["7", "7x2", "x", "×", "*", "#", "#1", "10", "t", "jk", "2", "pass", "p", "give", "play", "3c", "²", "①", "7²", "٣"]
    + ["9" * 5000, "7x" + "9" * 5000, "#" + "1" * 4301, "-1", "0", "x0", "\x00", "\ufffd", "ß", "ﬀ"]
)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40) | st.lists(_TOKENS, max_size=5).map(" ".join) | st.lists(_TOKENS, max_size=4).map("".join))
def test_any_typed_line_is_a_legal_move_a_command_or_an_input_error(human_turn, line):
    from president_env.apps.terminal import InputError, parse_command

    game, legal = human_turn
    try:
        command = parse_command(line)
        if command[0] in ("play", "give", "pass", "pick", "number"):
            assert set(game.resolve(command, legal)) <= set(legal)
    except InputError as err:
        assert len(str(err)) < SHORT


def test_a_tiny_run_writes_strict_json_metrics_without_warnings(tmp_path, capsys):
    """Two decisions per update, one deal group per evaluation: losses of an empty batch and the interval of one
    group are undefined; they are left out or null, never NaN, and nothing warns."""
    pytest.importorskip("torch")
    import json
    import warnings

    from president_env.training.cli import main

    tiny = ["ppo.num_envs=2", "ppo.num_steps=1", "budget.total_steps=4", "budget.eval_deals=1", "budget.eval_every=1"]
    argv = [item for override in tiny + ["threads=1"] for item in ("--set", override)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(argv + ["--out-dir", str(tmp_path / "run"), "--no-progress"]) == 0
    numeric = [w for w in caught if issubclass(w.category, RuntimeWarning) or "degrees of freedom" in str(w.message)]
    assert not numeric, [str(w.message) for w in numeric]

    def refuse(constant):
        raise AssertionError(f"{constant} in metrics.jsonl")

    lines = (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()
    records = [json.loads(line, parse_constant=refuse) for line in lines]
    assert [r["update"] for r in records] == [1, 2]
    assert all(r["eval/advantage_ci"] is None for r in records)
    json.loads(capsys.readouterr().out.split("\ncheckpoint:")[0], parse_constant=refuse)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.text(max_size=30) | st.lists(_TOKENS, max_size=4).map(" ".join), max_size=6))
def test_president_play_answers_any_typed_lines_and_quits_cleanly(lines):
    needs_play_extra()
    from president_env.apps.terminal import main

    out, err = io.StringIO(), io.StringIO()
    typed = io.StringIO("".join(line.replace("\n", " ").replace("\r", " ") + "\n" for line in lines) + "quit\n")
    code = main(["--opponents", "random", "--seed", "1", "--seat", "0"], typed, out, err)
    assert code in (0, 1) and err.getvalue() == ""
    assert "Traceback" not in out.getvalue()
