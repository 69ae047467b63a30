# placerl.Policy: a place-train checkpoint acting from Python (python/policy_bindings.cc, LibTorch
# in the module): the shipped policy's greedy episode on Ariane133 equals `place`'s zero-shot
# greedy placement (same proxy cost), the module coexists with Debian's python3-torch in one
# process, bad checkpoints and wrong environments are Python exceptions.
import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import placerl

CKPT = "experiments/pretrained/chip"
ARIANE = "../shared/datasets/chip/ariane133_ng45/netlist.pb.txt.gz"
ARIANE_PLC = "../shared/datasets/chip/ariane133_ng45/initial.plc"
BUILD = os.environ.get("PLACERL_BUILD_DIR", "build")

pytestmark = pytest.mark.skipif(importlib.util.find_spec("placerl._policy") is None,
                                reason="placerl built without LibTorch")


def greedy_episode(policy, env, seed=1):
    env.reset(seed=seed)
    actions = []
    while True:
        a = policy.act(env, greedy=True)
        actions.append(a)
        _, _, terminated, _, info = env.step(a)
        if terminated:
            return actions, info


def test_greedy_episode_equals_place_zero_shot_greedy(tmp_path):
    policy = placerl.Policy.load(CKPT)
    env = placerl.make(f"chip(netlist={ARIANE},plc={ARIANE_PLC})")
    actions, info = greedy_episode(policy, env)
    assert len(actions) == env.episode_length and not info["infeasible"]
    again, info2 = greedy_episode(policy, env)
    assert again == actions and info2["proxy_cost"] == info["proxy_cost"]
    place = os.path.join(BUILD, "bin", "place")
    if not os.path.exists(place):
        pytest.skip(f"{place} not built")
    out = tmp_path / "run"
    r = subprocess.run([place, "--checkpoint", CKPT, "--netlist", ARIANE, "--plc", ARIANE_PLC, "--samples", "0",
                        "--finetune-minutes", "0", "--out", str(out), "--json"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    assert info["proxy_cost"] == pytest.approx(result["stages"]["zero_shot"]["greedy_proxy_cost"], abs=1e-9)


def test_sampling_is_seeded_and_evaluate_gives_masked_logits():
    policy = placerl.Policy.load(CKPT + "/checkpoints/latest.ckpt")
    env = placerl.make(f"chip(netlist={ARIANE},plc={ARIANE_PLC})")
    env.reset(seed=0)
    a = [policy.act(env, greedy=False, seed=5)] + [policy.act(env, greedy=False) for _ in range(5)]
    b = [policy.act(env, greedy=False, seed=5)] + [policy.act(env, greedy=False) for _ in range(5)]
    assert a == b
    logits, value = policy.evaluate(env)
    mask = env.action_masks()
    assert logits.shape == mask.shape and np.isfinite(value)
    assert int(np.argmax(logits)) == policy.act(env, greedy=True)
    assert (logits[~mask] <= -1e8).all() and mask[a].all()


def test_bad_checkpoints_and_environments_raise():
    with pytest.raises(placerl.ConfigError, match="no such checkpoint"):
        placerl.Policy.load("/nonexistent.ckpt")
    with pytest.raises(placerl.ConfigError):
        placerl.Policy.load(42)
    with pytest.raises(placerl.Error) as e:
        placerl.Policy.load("tests/data/plc_api_golden/README.md")  # not a checkpoint
    assert "\n" not in str(e.value)
    policy = placerl.Policy.load(CKPT)
    with pytest.raises(placerl.ConfigError):  # another action kind / feature layout
        policy.act(placerl.make("device(graph=tests/data/device/mlp_training.graph,machine='k80(gpus=2)')"))
    with pytest.raises(TypeError):
        policy.act({"current_node": 0})
    env = placerl.make("chip(seed=1)")
    env.reset(seed=0)
    with pytest.raises(placerl.ConfigError):
        policy.act(env, seed=-1)
    env.close()
    with pytest.raises(placerl.Error, match="closed"):
        policy.act(env)


def test_import_placerl_does_not_load_libtorch():
    code = "import sys, placerl\nprint('torch' in open('/proc/self/maps').read())\n"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"


def test_the_module_and_debian_torch_import_in_one_process():
    code = ("import torch, placerl, numpy as np\n"
            "p = placerl.Policy.load('experiments/pretrained/chip')\n"
            "e = placerl.make('chip(seed=1)')\n"
            "e.reset(seed=0)\n"
            "a = p.act(e)\n"
            "t = torch.nn.Linear(3, 2)(torch.ones(1, 3))\n"
            "print(torch.__version__, int(a), tuple(t.shape))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ))
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[0].startswith("1.13")
