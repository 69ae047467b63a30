#!/usr/bin/env python3
"""Step overhead of placerl from Python: what `env.step` (placerl.make) and `vec.step`
(placerl.make_vec) add to the C++ step, CPU time of this thread (the issue's bound: 2 µs).

    OMP_NUM_THREADS=1 PYTHONPATH=build/python /usr/bin/python3 python/examples/bench_step.py

The steps are fixed: an episode from reset(seed=0) taking the first legal action each step,
recorded once in C++ (placerl._core._bench_record) and replayed R times. Two measurements:
- "C++ µs/step": the replay stepped inside C++ (placerl._core._bench_replay / _bench_vec_replay,
  the same build, the info vector read after every step);
- "overhead": paired, per Python call — the CPU time of the Python loop minus the CPU time spent
  inside the C++ step of those same calls (the module's benchmark switch `_timing` reads the
  thread clock around the C++ step), minus one clock reading per step. Pairing cancels the C++
  step's own noise (the chip step is 10–40 µs and varies by several µs on a shared machine).
Only the steps before an episode's last are timed, on both sides: the reset and the final step
(soft-macro FD, the simulator) take milliseconds. Each number is the median of --rounds rounds.
"""
import argparse
import statistics
import sys

import numpy as np

import placerl
from placerl import _core

ARIANE = "../shared/datasets/chip/ariane133_ng45/netlist.pb.txt.gz"
ARIANE_PLC = "../shared/datasets/chip/ariane133_ng45/initial.plc"
DEVICE = "device(graph=tests/data/device/mlp_training.graph,machine='k80(gpus=2)')"

CASES = [
    ("chip(seed=1)", "chip(seed=1)", 100),
    ("chip on Ariane133 (initial.plc, soft=keep)", f"chip(netlist={ARIANE},plc={ARIANE_PLC},soft=keep)", 10),
    ("device(mlp_training, k80 ×2)", DEVICE, 400),
]


def python_round(env, seed, actions, repeats):
    """(CPU seconds of the Python loop, CPU seconds inside the C++ steps) over the steps before
    the last of repeats × the actions from reset(seed)."""
    acts = [int(a) for a in actions]
    body, last = acts[:-1], acts[-1]
    clock = _core._thread_time
    stepper = env._stepper
    outer = 0.0
    stepper._inner_seconds = 0.0
    for _ in range(repeats):
        env.reset(seed=seed)
        stepper._timing = True
        t0 = clock()
        for a in body:
            env.step(a)
        outer += clock() - t0
        stepper._timing = False
        env.step(last)
    return outer, stepper._inner_seconds


def bench_env(label, spec, repeats, rounds, clock_cost, seed=0):
    env = placerl.make(spec)
    actions = _core._bench_record(env._core, seed)
    steps = (len(actions) - 1) * repeats
    cpp, over = [], []
    for _ in range(rounds):
        cpp.append(_core._bench_replay(env._core, seed, actions, repeats) / steps)
        outer, inner = python_round(env, seed, actions, repeats)
        over.append((outer - inner) / steps - clock_cost)
    return label, len(actions), cpp, over


def bench_vec(label, spec, n, episodes, rounds, clock_cost):
    venv = placerl.make_vec(spec, n)
    actions = _core._bench_vec_record(venv._core, episodes)
    length = venv._core.env(0).episode_length
    rows = [np.ascontiguousarray(a) for a in actions]
    steps = episodes * (length - 1)
    clock = _core._thread_time
    core = venv._core
    cpp, over = [], []
    for _ in range(rounds):
        cpp.append(_core._bench_vec_replay(core, actions) / steps)
        venv.reset()
        outer = 0.0
        core._inner_seconds = 0.0
        for e in range(0, len(rows), length):
            core._timing = True
            t0 = clock()
            for a in rows[e:e + length - 1]:
                venv.step(a)
            outer += clock() - t0
            core._timing = False
            venv.step(rows[e + length - 1])
        over.append((outer - core._inner_seconds) / steps - clock_cost)
    return label, length, cpp, over


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--scale", type=float, default=1.0, help="multiplies the repeats (default 1)")
    ap.add_argument("--skip-ariane", action="store_true")
    a = ap.parse_args()
    if not 1 <= a.rounds <= 1000 or not 0 < a.scale <= 100:
        ap.error("--rounds in [1, 1000], --scale in (0, 100]")
    clock_cost = statistics.median(_core._clock_cost() for _ in range(5))
    rows = []
    try:
        for label, spec, repeats in CASES:
            if a.skip_ariane and "Ariane" in label:
                continue
            rows.append(bench_env(label, spec, max(1, int(repeats * a.scale)), a.rounds, clock_cost))
        rows.append(bench_vec("make_vec('chip(seed=1)', 8), one batched step", "chip(seed=1)", 8,
                              max(1, int(10 * a.scale)), a.rounds, clock_cost))
    except placerl.Error as e:
        print(f"bench_step: {e}", file=sys.stderr)
        return 1
    print(f"one reading of the thread clock: {clock_cost * 1e6:.3f} µs (subtracted once per step)")
    print("| environment | steps/episode | C++ µs/step | Python overhead µs/step (median; min … max of rounds) |")
    print("|---|---|---|---|")
    for label, n, cpp, over in rows:
        d = [x * 1e6 for x in over]
        print(f"| {label} | {n} | {statistics.median(cpp) * 1e6:.2f} | "
              f"**{statistics.median(d):.2f}** ({min(d):.2f} … {max(d):.2f}) |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
