# device(…, mode=iterative, start=heft|m_topo|m_etf|m_sct|metis|scotch) from Python: the module
# registers search/device's list-scheduler and partitioner starts as the binaries do.
import pytest

import placerl

BASE = "device(graph=tests/data/device/mlp_training.graph,machine='k80(gpus=2)',mode=iterative"
STARTS = ["heft", "m_topo", "m_etf", "m_sct", "metis", "scotch"]


@pytest.mark.parametrize("start", STARTS)
def test_every_registered_start_builds_and_is_deterministic(start):
    env = placerl.make(f"{BASE},start={start})")
    assert f"start={start}" in env.spec
    obs, info = env.reset(seed=0)
    again = placerl.make(f"{BASE},start={start})")
    obs2, info2 = again.reset(seed=0)
    assert info == info2
    assert (obs["node_dynamic"] == obs2["node_dynamic"]).all()
    assert 0 < info["step_time_s"] <= info["single_device_time_s"] * 1.5
    assert info["placed_groups"] == env.static["node_features"].shape[0]


def test_the_starts_are_not_the_single_device_start():
    single = placerl.make(f"{BASE})").reset(seed=0)[1]["step_time_s"]
    times = {s: placerl.make(f"{BASE},start={s})").reset(seed=0)[1]["step_time_s"] for s in STARTS}
    assert min(times.values()) < single  # at least one start is faster than one device
    assert len({round(t, 12) for t in times.values()}) >= 2


def test_an_unknown_start_is_a_config_error_with_one_line():
    with pytest.raises(placerl.ConfigError) as e:
        placerl.make(f"{BASE},start=bogus)")
    assert "\n" not in str(e.value) and "heft" in str(e.value)
