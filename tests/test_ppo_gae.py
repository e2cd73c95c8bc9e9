"""GAE along each seat's own chain of decisions (``training.ppo.seat_gae``), against hand-computed values."""

import numpy as np
import pytest

pytest.importorskip("torch")

from president_env.training.ppo import seat_gae  # noqa: E402

GAMMA, LAM = 0.9, 0.8


def hand_example():
    """Three players, three games (slots), six engine steps.

    Slot 0: players act 0,1,2,0,1 and the game ends at step 4 with rewards (1, 0.5, -1.5); an earlier
    manche paid (0.25, 0, -0.25) at step 2; step 5 is player 2's first decision of the next game.
    Player 2 carries a decision in (value 0.05, reward so far 0.1), and player 1 one (0, 0).
    Slot 1: same order, player 1 is an opponent (not trained), no game end; player 0 carries one in.
    Slot 2: players 0 and 1 alternate; player 2 is out and carries a decision that stays open.
    """
    actor = np.array([[0, 0, 0], [1, 1, 1], [2, 2, 0], [0, 0, 1], [1, 1, 0], [2, 2, 1]])
    learner = np.ones((6, 3), dtype=bool)
    learner[[1, 4], 1] = False
    value = np.array([[0.1, 0.1, 0.1], [0.2, 0.0, 0.2], [0.3, 0.3, 0.3], [0.4, 0.4, 0.4], [0.5, 0.0, 0.5], [0.6] * 3])
    reward = np.zeros((6, 3, 3))
    reward[2, 0] = reward[2, 1] = (0.25, 0.0, -0.25)
    reward[4, 0] = (1.0, 0.5, -1.5)
    reward[3, 2] = (0.0, 0.0, 0.7)
    done = np.zeros((6, 3), dtype=bool)
    done[4, 0] = True
    pending_valid = np.zeros((3, 3), dtype=bool)
    pending_value = np.zeros((3, 3))
    pending_reward = np.zeros((3, 3))
    pending_valid[0, 2], pending_value[0, 2], pending_reward[0, 2] = True, 0.05, 0.1
    pending_valid[0, 1] = True
    pending_valid[1, 0], pending_value[1, 0], pending_reward[1, 0] = True, 0.2, 0.3
    pending_valid[2, 2], pending_reward[2, 2] = True, 0.5
    args = [x.astype(np.float32) if x.dtype == np.float64 else x for x in (actor, learner, value, reward, done)]
    pend = [pending_valid, pending_value.astype(np.float32), pending_reward.astype(np.float32)]
    return seat_gae(*args, *pend, GAMMA, LAM)


def test_slot0_chains_cut_at_game_end_and_skip_other_seats():
    gae = hand_example()
    a4 = 0.5 - 0.5  # last decision of player 1: the game ends at once
    a3 = (0 + 1.0) - 0.4  # player 0: no later decision in this game
    a2 = (-0.25 + 0 - 1.5) - 0.3  # player 2: its next decision (step 5) is in the next game
    a1 = (0 + GAMMA * 0.5 - 0.2) + GAMMA * LAM * a4
    a0 = (0.25 + GAMMA * 0.4 - 0.1) + GAMMA * LAM * a3
    np.testing.assert_allclose(gae.advantage[:5, 0], [a0, a1, a2, a3, a4], atol=1e-6)
    assert gae.closed[:5, 0].all() and not gae.closed[5, 0]
    assert gae.open_reward[5, 0] == 0.0
    # carried in: player 2's successor is step 2, player 1's is step 1
    np.testing.assert_allclose(gae.pending_advantage[0, 2], (0.1 + GAMMA * 0.3 - 0.05) + GAMMA * LAM * a2, atol=1e-6)
    np.testing.assert_allclose(gae.pending_advantage[0, 1], (0 + GAMMA * 0.2 - 0) + GAMMA * LAM * a1, atol=1e-6)
    assert gae.pending_closed[0, 1] and gae.pending_closed[0, 2] and not gae.pending_closed[0, 0]


def test_slot1_open_successor_truncates_lambda_and_opponents_are_not_trained():
    gae = hand_example()
    a2 = (-0.25 + GAMMA * 0.6 - 0.3) + GAMMA * LAM * 0.0  # successor (step 5) is open: its own advantage unknown
    a0 = (0.25 + GAMMA * 0.4 - 0.1) + GAMMA * LAM * 0.0  # successor (step 3) is open
    np.testing.assert_allclose(gae.advantage[[0, 2], 1], [a0, a2], atol=1e-6)
    assert list(gae.closed[:, 1]) == [True, False, True, False, False, False]
    assert gae.advantage[1, 1] == 0 and gae.advantage[4, 1] == 0  # the opponent's rows
    np.testing.assert_allclose(gae.pending_advantage[1, 0], (0.3 + GAMMA * 0.1 - 0.2) + GAMMA * LAM * a0, atol=1e-6)


def test_slot2_open_decisions_keep_their_reward_and_carried_ones_accumulate():
    gae = hand_example()
    a2 = GAMMA * 0.5 - 0.3
    a0 = (GAMMA * 0.3 - 0.1) + GAMMA * LAM * a2
    a3 = GAMMA * 0.6 - 0.4
    a1 = (GAMMA * 0.4 - 0.2) + GAMMA * LAM * a3
    np.testing.assert_allclose(gae.advantage[:4, 2], [a0, a1, a2, a3], atol=1e-6)
    assert list(gae.closed[:, 2]) == [True, True, True, True, False, False]
    assert not gae.pending_closed[2, 2]
    np.testing.assert_allclose(gae.pending_reward[2, 2], 0.5 + 0.7, atol=1e-6)
    assert gae.pending_reward[0, 2] == 0  # closed decisions hand on nothing


def test_a_reward_after_the_last_decision_is_carried_with_it():
    actor = np.array([[0], [1]])
    reward = np.zeros((2, 1, 2), dtype=np.float32)
    reward[1, 0] = (2.0, -2.0)  # a manche ends at step 1 (no game end): player 0 is not to act again yet
    gae = seat_gae(
        actor,
        np.ones((2, 1), dtype=bool),
        np.zeros((2, 1), dtype=np.float32),
        reward,
        np.zeros((2, 1), dtype=bool),
        np.zeros((1, 2), dtype=bool),
        np.zeros((1, 2), dtype=np.float32),
        np.zeros((1, 2), dtype=np.float32),
        1.0,
        0.95,
    )
    assert not gae.closed.any()
    np.testing.assert_allclose(gae.open_reward[:, 0], [2.0, -2.0])
