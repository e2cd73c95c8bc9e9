"""``init.grow``: a network grown from a smaller one's weights computes the same function, learns with its new
units, and the trainer refuses a shape it cannot grow into, with one line naming ``init.grow``."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from helpers import PER_TABLE_CHECKPOINT  # noqa: E402

from president_env.agents.checkpoint import load_checkpoint  # noqa: E402
from president_env.agents.torch_policy import PolicyNet  # noqa: E402
from president_env.agents.universal import NUM_ACTIONS, UniversalNet  # noqa: E402
from president_env.training.config import load_config  # noqa: E402
from president_env.training.grow import check_growable, grow_state  # noqa: E402
from president_env.training.ppo_selfplay import Trainer, start_weights  # noqa: E402
from president_env.training.probe import PROBE_CONFIG  # noqa: E402

TINY = ["ppo.num_envs=16", "ppo.num_steps=8", "budget.eval_every=0", "threads=1"]


def grown(small: torch.nn.Module, big: torch.nn.Module) -> torch.nn.Module:
    check_growable(small.spec(), big.spec())
    big.load_state_dict(grow_state(small.state_dict(), big.state_dict(), small.hidden, big.spec()))
    return big


def inputs(net, n=256, seed=0):
    """Non-negative inputs, as the encodings are (counts and flags), and random legal masks."""
    gen = torch.Generator().manual_seed(seed)
    width = net.input_dim if isinstance(net, UniversalNet) else net.obs_dim
    actions = NUM_ACTIONS if isinstance(net, UniversalNet) else net.num_actions
    x = torch.rand(n, width, generator=gen) * (torch.rand(n, width, generator=gen) < 0.3)
    mask = torch.rand(n, actions, generator=gen) < 0.4
    mask[:, 0] = True
    return x, mask


@pytest.mark.parametrize("hidden", [(256, 256), (512, 512), (512, 512, 512), (256, 384, 384, 512)])
@pytest.mark.parametrize("critic", ["plain", "perfect"])
def test_a_grown_universal_network_computes_what_the_small_one_did(hidden, critic):
    torch.manual_seed(1)
    small = UniversalNet((256, 256), critic=critic)
    for p in small.parameters():  # not the initial weights only: biases and heads of a trained network are not zero
        p.data.add_(0.05 * torch.randn_like(p))
    torch.manual_seed(2)
    big = grown(small, UniversalNet(hidden, critic=critic))
    x, mask = inputs(small)
    with torch.no_grad():
        (small_logits, small_values), (big_logits, big_values) = small(x, mask), big(x, mask)
    np.testing.assert_allclose(big_logits.numpy(), small_logits.numpy(), rtol=1e-5, atol=1e-5)  # masked ones too
    np.testing.assert_allclose(big_values.numpy(), small_values.numpy(), rtol=1e-5, atol=1e-5)
    if hidden != (256, 256):
        assert sum(p.numel() for p in big.parameters()) > sum(p.numel() for p in small.parameters())


def test_a_grown_policy_net_computes_what_the_small_one_did_and_its_new_units_learn():
    torch.manual_seed(3)
    small = PolicyNet(40, 12, hidden=(32, 16))
    for p in small.parameters():
        p.data.add_(0.05 * torch.randn_like(p))
    big = grown(small, PolicyNet(40, 12, hidden=(48, 32, 64)))
    x, mask = inputs(small)
    with torch.no_grad():
        np.testing.assert_allclose(big(x, mask)[1].numpy(), small(x, mask)[1].numpy(), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(
            torch.softmax(big(x, mask)[0], -1).numpy(), torch.softmax(small(x, mask)[0], -1).numpy(), atol=1e-6
        )
    # the new units' outgoing weights start at zero but get a gradient: the grown network learns with them
    logits, values = big(x, mask)
    (values.square().mean() - torch.log_softmax(logits, -1)[:, 0].mean()).backward()
    assert big.policy_head.weight[:, 16:].abs().sum() == 0
    assert big.policy_head.weight.grad[:, 16:].abs().sum() > 0
    assert big.value_head.weight.grad[:, 16:].abs().sum() > 0


@pytest.mark.parametrize(
    "small, big, message",
    [
        ({"hidden": (256, 256)}, {"hidden": (128, 256)}, r"hidden \[128, 256\] cannot hold \[256, 256\]"),
        ({"hidden": (256, 256)}, {"hidden": (256,)}, r"hidden \[256\] cannot hold \[256, 256\]"),
        ({"hidden": (64,)}, {"hidden": (64, 32)}, r"each added layer must be at least as wide"),
        ({"hidden": (64,), "activation": "tanh"}, {"hidden": (64, 64), "activation": "tanh"}, "needs relu, not 'tanh'"),
        ({"hidden": (64,), "critic": "plain"}, {"hidden": (64,), "critic": "perfect"}, r"differs in critic"),
    ],
)
def test_shapes_that_cannot_grow_are_refused_naming_init_grow(small, big, message):
    small_spec = UniversalNet(**small).spec()
    with pytest.raises(ValueError, match=f"^init.grow: .*{message}"):
        check_growable(small_spec, UniversalNet(**big).spec())


def test_the_trainer_grows_its_start_only_when_asked(tmp_path):
    checkpoint = load_checkpoint(PER_TABLE_CHECKPOINT)
    held = list(checkpoint["network"]["hidden"])
    wider = [h * 2 for h in held] + [held[-1] * 2]
    start = [*TINY, f"out_dir={tmp_path}", f"init.weights={PER_TABLE_CHECKPOINT}"]
    with pytest.raises(ValueError, match=r"this run builds .*\(init.grow: true grows a narrower or shallower one"):
        Trainer(load_config(PROBE_CONFIG, [*start, f"network.hidden={wider}"]), progress=False)
    trainer = Trainer(load_config(PROBE_CONFIG, [*start, f"network.hidden={wider}", "init.grow=true"]), progress=False)
    try:
        assert list(trainer.net.hidden) == wider
        small = PolicyNet(checkpoint["network"]["obs_dim"], checkpoint["network"]["num_actions"], held)
        small.load_state_dict(checkpoint["model"])
        x, mask = inputs(small, seed=5)
        with torch.no_grad():
            np.testing.assert_allclose(trainer.net(x, mask)[1].numpy(), small(x, mask)[1].numpy(), atol=1e-5)
        trainer.train_step()  # the grown network trains like any other
        assert load_checkpoint(trainer.save(tmp_path / "grown.pt"))["network"]["hidden"] == wider
    finally:
        trainer.close()
    # a network of the run's own shape is never grown: init.grow changes nothing there
    same = Trainer(load_config(PROBE_CONFIG, [*start, "init.grow=true"]), progress=False)
    try:
        state = start_weights(str(PER_TABLE_CHECKPOINT), same.net, grow=True)
        assert all(torch.equal(state[k], checkpoint["model"][k]) for k in checkpoint["model"])
    finally:
        same.close()
