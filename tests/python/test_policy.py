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


def run_place(tmp_path, checkpoint, *args):
    """`place --samples 0 --finetune-minutes 0 --json` on `checkpoint`: result.json and stderr
    (skips when place is not built)."""
    place = os.path.join(BUILD, "bin", "place")
    if not os.path.exists(place):
        pytest.skip(f"{place} not built")
    out = tmp_path / f"place{len(list(tmp_path.iterdir()))}"
    r = subprocess.run([place, "--checkpoint", str(checkpoint), *args, "--samples", "0", "--finetune-minutes", "0",
                        "--out", str(out), "--json"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout), r.stderr


def test_greedy_episode_equals_place_zero_shot_greedy(tmp_path):
    policy = placerl.Policy.load(CKPT)
    env = placerl.make(f"chip(netlist={ARIANE},plc={ARIANE_PLC})")
    actions, info = greedy_episode(policy, env)
    assert len(actions) == env.episode_length and not info["infeasible"]
    again, info2 = greedy_episode(policy, env)
    assert again == actions and info2["proxy_cost"] == info["proxy_cost"]
    # The environment place builds from the checkpoint (policy.make_env) is the same one here
    # (the shipped policy predates recorded settings: the defaults and its features' cost map).
    made = policy.make_env(netlist=ARIANE, plc=ARIANE_PLC)
    assert made.spec == env.spec
    assert made.trained_settings == {"recorded": False, "changed": {}}
    made_actions, made_info = greedy_episode(policy, made)
    logits, value = policy.evaluate(made)  # the state after the episode: evaluate takes the env
    assert logits.shape == (made.action_space.n,) and np.isfinite(value)
    result, _ = run_place(tmp_path, CKPT, "--netlist", ARIANE, "--plc", ARIANE_PLC)
    greedy = result["stages"]["zero_shot"]["greedy_proxy_cost"]
    assert info["proxy_cost"] == pytest.approx(greedy, abs=1e-9)
    assert made_actions == actions and made_info["proxy_cost"] == pytest.approx(greedy, abs=1e-9)


def place_train(tmp_path, *args):
    train = os.path.join(BUILD, "bin", "place-train")
    if not os.path.exists(train):
        pytest.skip(f"{train} not built")
    out = tmp_path / "train"
    r = subprocess.run([train, "--max-updates", "1", "--set", "episodes_per_update=2", *args, "--out", str(out)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return out


def test_make_env_uses_the_training_runs_settings_as_place_does(tmp_path):
    # A run trained with non-default settings: make() would build the defaults, make_env() builds
    # what the checkpoint carries, and its greedy episode is place's greedy placement.
    run = place_train(tmp_path, "--set", "chip.density_weight=1", "--set", "chip.fd_steps_scale=0.5",
                      "--set", "chip.reward=dense")
    policy = placerl.Policy.load(run)
    assert policy.run_config is not None and "density_weight: 1" in policy.run_config
    assert placerl.Policy.load(CKPT).run_config is None
    env = policy.make_env()
    for setting in ("weights='1,1,0.5'", "reward=dense", "fd_steps_scale=0.5"):
        assert setting in env.spec, env.spec
    assert env.trained_settings == {"recorded": True, "changed": {}}
    assert placerl.make(env.spec).spec == env.spec
    default = placerl.make("chip()")
    assert "reward=sparse" in default.spec and "fd_steps_scale" not in default.spec
    _, info = greedy_episode(policy, env)
    result, err = run_place(tmp_path, run)
    assert "CKPT-0001" not in err
    assert info["proxy_cost"] == pytest.approx(result["stages"]["zero_shot"]["greedy_proxy_cost"], abs=1e-9)


def test_make_env_warns_as_place_does_for_a_training_design_on_another_grid(tmp_path):
    tiles = "../shared/datasets/chip/circuit_training/macro_tiles_10x10/"
    run = place_train(tmp_path, "--netlist", tiles + "netlist.pb.txt", "--plc", tiles + "initial.plc")
    policy = placerl.Policy.load(run)
    with pytest.warns(UserWarning, match=r"\[CKPT-0001\]: placing .*netlist.pb.txt with no .plc \(the default grid\)"):
        env = policy.make_env(netlist=tiles + "netlist.pb.txt")
    assert env.trained_settings["changed"]["chip.plc"]["used"] == "no .plc (the default grid)"
    _, err = run_place(tmp_path, run, "--netlist", tiles + "netlist.pb.txt")
    assert "place: warning [CKPT-0001]: placing " in err
    # Bad input: a Python exception with the binary's one-line message.
    with pytest.raises(placerl.Error) as e:
        policy.make_env(netlist="/nonexistent/netlist.pb.txt")
    assert "/nonexistent/netlist.pb.txt" in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(TypeError):
        policy.make_env(netlist=3)


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


def test_make_env_refuses_a_device_checkpoint(tmp_path):
    # make_env builds chip environments: a device policy's checkpoint is a ConfigError naming it
    # (place's message for it), not a chip environment of the defaults.
    run = place_train(tmp_path, "--env", "device", "--graph", "tests/data/device/mlp_training.graph",
                      "--machine", "k80(gpus=2)")
    policy = placerl.Policy.load(run)
    with pytest.raises(placerl.ConfigError, match="not a chip placement checkpoint") as e:
        policy.make_env()
    assert "\n" not in str(e.value)
