"""placerl.make / make_vec: Gymnasium's API contract on the registry's environments (chip, device,
block, partition): spaces, reset → (obs, info), step → 5-tuple, determinism per seed, action masks,
read-only views of the C++ buffers, batched stepping, and bad input as Python exceptions."""
import numpy as np
import pytest

import placerl

SPECS = [
    "chip(seed=1)",
    "device(graph=tests/data/device/mlp_training.graph,machine='k80(gpus=2)')",
    "block(space=nas_bench_macro,budget=60,penalty=0.5)",
    "partition(nodes=10,devices=3,extra_edges=5,graph_seed=7)",
]


def play(env, seed, pick):
    """One episode from reset(seed) taking pick(mask, t); returns rewards, observations (copies) and the last info."""
    obs, info = env.reset(seed=seed)
    rewards, seen = [], [{k: np.array(v) for k, v in obs.items()}]
    t = 0
    while True:
        mask = env.action_masks()
        assert mask.dtype == bool and mask.shape == (env.action_space.n,)
        assert mask.any()
        obs, reward, terminated, truncated, info = env.step(pick(mask, t))
        assert isinstance(reward, float) and isinstance(terminated, bool) and truncated is False
        rewards.append(reward)
        seen.append({k: np.array(v) for k, v in obs.items()})
        t += 1
        if terminated:
            return rewards, seen, info
        assert t <= env.episode_length


def first_legal(mask, t):
    return int(np.flatnonzero(mask)[0])


@pytest.mark.parametrize("spec", SPECS)
def test_spaces_reset_step_and_determinism(spec):
    env = placerl.make(spec)
    assert env.action_space.n > 0 and env.action_space.shape == () and env.action_space.dtype == np.int64
    obs, info = env.reset(seed=5)
    assert set(obs) == set(env.observation_space.keys())
    for key, space in env.observation_space.spaces.items():
        assert np.asarray(obs[key]).shape == space.shape, key
        assert np.asarray(obs[key]).dtype == space.dtype, key
    assert env.observation_space.contains(obs)
    assert isinstance(info, dict) and all(isinstance(v, float) for v in info.values())
    rng = np.random.default_rng(0)
    actions = []

    def sample(mask, t):
        a = env.action_space.sample(mask=mask, rng=rng)
        actions.append(a)
        return a

    r1, o1, i1 = play(env, 7, sample)
    replay = iter(list(actions))
    r2, o2, i2 = play(env, 7, lambda m, t: next(replay))
    assert r1 == r2 and i1 == i2
    for a, b in zip(o1, o2):
        for k in a:
            np.testing.assert_array_equal(a[k], b[k])
    assert len(r1) <= env.episode_length


def test_chip_sparse_return_is_minus_the_proxy_cost():
    env = placerl.make("chip(seed=1)")
    rewards, _, info = play(env, 3, first_legal)
    assert len(rewards) == env.episode_length
    assert sum(rewards) == pytest.approx(-info["proxy_cost"], abs=1e-12)
    assert info["infeasible"] is False


def test_observations_are_read_only_views_of_the_environment():
    env = placerl.make("chip(seed=1)")
    obs, _ = env.reset(seed=1)
    mask_view = obs["action_mask"]
    before = mask_view.copy()
    assert not mask_view.flags.writeable and not obs["node_dynamic"].flags.writeable
    with pytest.raises(ValueError):
        mask_view[0] = 1
    env.step(first_legal(env.action_masks(), 0))
    # The view now shows the new state (the first macro took cells): it was not a copy.
    assert not np.array_equal(mask_view, before)
    np.testing.assert_array_equal(mask_view, env.action_masks().astype(np.uint8))
    static = env.static
    nodes = static["node_features"].shape[0]
    assert static["edge_src"].size > 0 and static["edge_src"].max() < nodes and static["edge_dst"].max() < nodes
    assert static["edge_weight"].shape == static["edge_src"].shape
    assert not static["node_features"].flags.writeable


def test_clone_is_independent():
    env = placerl.make("chip(seed=2)")
    env.reset(seed=4)
    env.step(first_legal(env.action_masks(), 0))
    copy = env.clone()
    a = copy.action_masks()
    env.step(first_legal(env.action_masks(), 1))
    np.testing.assert_array_equal(copy.action_masks(), a)
    r_env, _, i_env = play(env, 9, first_legal)
    r_copy, _, i_copy = play(copy, 9, first_legal)
    assert r_env == r_copy and i_env == i_copy


def test_reset_without_seed_takes_the_next_one():
    env = placerl.make("partition(nodes=10,devices=3,extra_edges=5,graph_seed=7)")
    env.reset(seed=10)
    obs_next, _ = env.reset()
    expected, _ = placerl.make(env.spec).reset(seed=11)
    for k in obs_next:
        np.testing.assert_array_equal(obs_next[k], expected[k])


def test_make_vec_steps_copies_as_their_single_environments():
    """Copy i starts with seed + i and each further episode of it adds n; an ending step's
    observation is the next episode's first, the finished episode's return in info."""
    spec, n, seed = "partition(nodes=10,devices=3,extra_edges=5,graph_seed=7)", 3, 20
    vec = placerl.make_vec(spec, n, seed=seed)
    obs, _ = vec.reset()
    singles = [placerl.make(spec) for _ in range(n)]
    episodes = [0] * n
    for i, s in enumerate(singles):
        o, _ = s.reset(seed=seed + i)
        np.testing.assert_array_equal(obs["action_mask"][i][: s.action_space.n], o["action_mask"])
    returns = [0.0] * n
    ends = 0
    for _ in range(25):
        actions = np.array([int(np.flatnonzero(m)[0]) for m in vec.action_masks()])
        expected = []
        for i, s in enumerate(singles):
            o, r, term, _, _ = s.step(int(actions[i]))
            returns[i] += r
            if term:
                episodes[i] += 1
                o, _ = s.reset(seed=seed + i + n * episodes[i])
            expected.append((r, term, o))
        obs, rewards, terminated, truncated, info = vec.step(actions)
        assert not truncated.any()
        for i in range(n):
            r, term, o = expected[i]
            assert rewards[i] == pytest.approx(r, rel=1e-6)
            assert bool(terminated[i]) == term
            np.testing.assert_array_equal(obs["action_mask"][i][: singles[i].action_space.n], o["action_mask"])
            if term:
                assert info["episode_return"][i] == pytest.approx(returns[i], rel=1e-6)
                returns[i] = 0.0
                ends += 1
    assert ends > 0


def test_bad_input_raises_python_exceptions_with_one_line():
    with pytest.raises(placerl.ConfigError) as e:
        placerl.make("chip(seed=1,bogus=3)")
    assert "\n" not in str(e.value) and issubclass(placerl.ConfigError, ValueError)
    with pytest.raises(placerl.Error):
        placerl.make("nosuchenv()")
    with pytest.raises(placerl.ConfigError):
        placerl.make(42)
    env = placerl.make("chip(seed=1)")
    env.reset(seed=0)
    masked = int(np.flatnonzero(~env.action_masks())[0])
    with pytest.raises(placerl.InfeasibleAction):
        env.step(masked)
    with pytest.raises(placerl.InfeasibleAction):
        env.step(env.action_space.n + 5)
    with pytest.raises(placerl.ConfigError):
        env.step(1.5)
    with pytest.raises(placerl.ConfigError):
        env.reset(seed=-1)
    with pytest.raises(placerl.ConfigError):
        placerl.make_vec("chip(seed=1)", 0)
    env.close()
    with pytest.raises(placerl.Error):
        env.reset(seed=0)
    with pytest.raises(placerl.Error):
        env.action_masks()
