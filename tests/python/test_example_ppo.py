"""python/examples/ppo_chip.py, the CleanRL-style PPO on placerl.make("chip(seed=1)"): it learns — the
mean proxy cost of its last updates is below that of its first ones — and after the same number of
episodes its best placement is below the best of uniformly random legal placements. Fixed seeds, one
thread: the run is the same every time."""
import importlib.util
import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")  # Debian python3-torch (scripts/install_deps.sh)


def load_example():
    path = os.path.join("python", "examples", "ppo_chip.py")
    spec = importlib.util.spec_from_file_location("ppo_chip", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_ppo_learns_the_synthetic_chip_and_beats_random_placements():
    ppo = load_example()
    torch.set_num_threads(1)
    lines = []
    best, episodes = ppo.train("chip(seed=1)", updates=30, seed=1, log=lines.append)
    assert episodes == 240 and len(lines) == 30
    means = [float(l.split("mean proxy")[1].split()[0]) for l in lines]
    assert np.mean(means[-5:]) < np.mean(means[:5]) - 0.02, means
    rand = ppo.random_best(ppo.placerl.make("chip(seed=1)"), episodes, 10 ** 6 + 1)
    assert best < rand, (best, rand)
