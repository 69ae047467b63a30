# The one-call stepping path (placerl._core.GymStepper behind Env.step, VectorEnv.gym_step
# behind VecEnv.step) and the step-overhead benchmark's C++ entry points: same results as the
# environment itself, fresh dicts per step over views made once, every bad action a Python
# exception (docs/python.md).
import numpy as np
import pytest

import placerl
from placerl import _core

DEVICE = "device(graph=tests/data/device/mlp_training.graph,machine='k80(gpus=2)')"


@pytest.mark.parametrize("spec", ["chip(seed=1)", DEVICE])
def test_python_replay_equals_the_cpp_replay(spec):
    env = placerl.make(spec)
    actions = _core._bench_record(env._core, 3)
    assert len(actions) == env.episode_length
    # C++: the recorded episode again, then its info.
    assert _core._bench_replay(env._core, 3, actions, 2) >= 0
    cpp_info = {k: v for k, v in env._stepper.info().items() if k != "infeasible"}
    assert env._core.done
    # Python, through the Gym layer: the same rewards and the same final info.
    obs, info = env.reset(seed=3)
    total = 0.0
    for i, a in enumerate(actions):
        assert obs["action_mask"][a] == 1
        obs, reward, terminated, truncated, info = env.step(a)
        total += reward
        assert terminated == (i == len(actions) - 1) and truncated is False
    assert {k: v for k, v in info.items() if k != "infeasible"} == cpp_info
    assert info["infeasible"] is False


def test_each_step_returns_fresh_dicts_over_the_same_views():
    env = placerl.make("chip(seed=1)")
    obs0, info0 = env.reset(seed=0)
    node0 = int(obs0["current_node"])
    a = int(np.flatnonzero(env.action_masks())[0])
    obs1, _, _, _, info1 = env.step(a)
    assert obs1 is not obs0 and info1 is not info0
    assert int(obs0["current_node"]) == node0  # a kept dict is not rewritten …
    assert int(obs1["current_node"]) != node0
    for k in ("node_dynamic", "action_mask", "action_features", "node_features"):
        assert obs1[k] is obs0[k]  # … its arrays are the documented views
        assert not obs1[k].flags.writeable and not obs1[k].flags.owndata
    assert isinstance(obs1["current_node"], np.int32)
    assert env.observation_space.contains(obs1)
    info1["hpwl"] = -1.0  # the caller's dict: the next step's is unaffected
    _, _, _, _, info2 = env.step(int(np.flatnonzero(env.action_masks())[0]))
    assert info2["hpwl"] != -1.0 and set(info2) == set(info1)
    # A clone steps on its own buffers.
    other = env.clone()
    obs_c, *_ = other.step(int(np.flatnonzero(other.action_masks())[0]))
    assert obs_c["action_mask"] is not obs1["action_mask"]
    assert np.shares_memory(obs_c["node_features"], obs1["node_features"])  # the shared static graph


def test_actions_of_every_integer_kind_and_bad_ones_raise():
    env = placerl.make("chip(seed=1)")
    env.reset(seed=0)
    legal = np.flatnonzero(env.action_masks())
    env.step(np.int64(legal[0]))
    env.step(float(np.flatnonzero(env.action_masks())[0]))  # an integral float is an integer
    env.step(np.int32(np.flatnonzero(env.action_masks())[0]))
    with pytest.raises(placerl.ConfigError, match="must be an integer"):
        env.step(1.5)
    with pytest.raises(placerl.ConfigError):
        env.step(float("nan"))
    with pytest.raises(TypeError):
        env.step("3")
    with pytest.raises(TypeError):
        env.step(None)
    with pytest.raises(placerl.InfeasibleAction):
        env.step(2 ** 40)
    with pytest.raises(placerl.InfeasibleAction):
        env.step(-(2 ** 70))
    with pytest.raises(placerl.InfeasibleAction):
        env.step(-1)
    before = env._stepper.info()
    env.step(int(np.flatnonzero(env.action_masks())[0]))  # still usable after the errors
    assert env._stepper.info() != before
    env.close()
    with pytest.raises(placerl.Error, match="closed"):
        env.step(0)


def test_vec_step_in_one_call_and_bad_actions():
    vec = placerl.make_vec("chip(seed=1)", 3)
    with pytest.raises(placerl.ConfigError, match="before reset"):
        vec.step([0, 0, 0])
    obs0, _ = vec.reset()
    legal = [int(np.flatnonzero(m)[0]) for m in vec.action_masks()]
    obs1, reward, terminated, truncated, info = vec.step(legal)  # a list
    assert obs1 is not obs0 and obs1["action_mask"] is obs0["action_mask"]
    assert reward.shape == (3,) and terminated.dtype == np.bool_ and truncated.dtype == np.bool_
    assert not truncated.any() and not truncated.flags.writeable
    assert info["infeasible"].dtype == np.bool_ and list(info["info_names"])
    legal = np.array([int(np.flatnonzero(m)[0]) for m in vec.action_masks()], dtype=np.int64)
    vec.step(legal)  # int64, converted
    with pytest.raises(placerl.ConfigError, match="expected 3 actions"):
        vec.step([0, 0])
    with pytest.raises(TypeError):
        vec.step(["a", "b", "c"])
    with pytest.raises(placerl.InfeasibleAction):
        vec.step(np.full(3, -5, dtype=np.int32))
    # No silent truncation (regression: forcecast turned 1.5 into 1 and 2**40 into 0).
    with pytest.raises(placerl.ConfigError, match="must be integers"):
        vec.step([1.5, 0.0, 0.0])
    with pytest.raises(placerl.InfeasibleAction, match="out of range"):
        vec.step(np.array([2 ** 40, 0, 0], dtype=np.int64))
    with pytest.raises(TypeError):
        vec.step(None)
    vec.close()
    with pytest.raises(placerl.Error, match="closed"):
        vec.step([0, 0, 0])


def test_bench_entry_points_reject_bad_input():
    env = placerl.make("chip(seed=1)")
    with pytest.raises(placerl.ConfigError):
        _core._bench_replay(env._core, 0, [0, 1], 0)
    with pytest.raises(placerl.ConfigError):
        _core._bench_replay(env._core, 0, [0], 1)
    with pytest.raises(placerl.InfeasibleAction):
        _core._bench_replay(env._core, 0, [10 ** 6, 0], 1)
    vec = placerl.make_vec("chip(seed=1)", 2)
    with pytest.raises(placerl.ConfigError):
        _core._bench_vec_record(vec._core, 0)
    actions = _core._bench_vec_record(vec._core, 1)
    assert actions.shape == (env.episode_length, 2)
    assert _core._bench_vec_replay(vec._core, actions) >= 0
    with pytest.raises(placerl.ConfigError):
        _core._bench_vec_replay(vec._core, actions[:-1])
    assert _core._clock_cost(100) > 0
