#!/usr/bin/env python3
"""Golden-value harness for placerl's placed-graph simulator (see tests/data/sim_golden/README.md).

Runs the UNMODIFIED reference simulators on generated graphs and writes, per case,
<case>.graph (placerl text format) and <case>.json (placements + reference outputs) to OUT.

  Placeto/Park : park-project/park park/envs/tf_placement_sim/{tf_sim,tf_pl_simulator}.py
                 (ImportantOpsSimulator.simulate(pl, sim_mem_usage=True) on a Simulator built
                 from a shimmed MetaGraphDef, cost dict (int µs) and output dict (bytes)).
  Baechi       : beomyeol/baechi placer/virtual_scheduler.py VirtualScheduler.initialize()+run()
                 on a networkx op graph built like PlacementGraphGenerator; edge weights from
                 placer_lib.get_comm_cost(bytes, 0.0001754, 134); topo order from
                 placer_utils.assign_topo_order.

usage: harness.py BAECHI_DIR PARK_SIM_DIR OUT_DIR
"""
import ast
import copy
import importlib.util
import json
import os
import random
import sys
import types

import networkx as nx

BAECHI, PARK, OUT = sys.argv[1], sys.argv[2], sys.argv[3]

# ---------------------------------------------------------------- module shims (no TF/matplotlib)
for name in ["matplotlib", "matplotlib.pyplot", "tensorflow", "tensorflow.core",
             "tensorflow.core.framework", "tensorflow.core.framework.attr_value_pb2"]:
    sys.modules.setdefault(name, types.ModuleType(name))
sys.modules["matplotlib"].pyplot = sys.modules["matplotlib.pyplot"]
sys.path.insert(0, BAECHI)
from placer import placer_utils  # noqa: E402
from placer.virtual_scheduler import VirtualScheduler  # noqa: E402
import logging  # noqa: E402
logging.disable(logging.WARNING)

# get_comm_cost lives in placer_lib.py, which imports TensorFlow: take only that function.
_src = open(os.path.join(BAECHI, "placer", "placer_lib.py")).read()
_fn = [n for n in ast.parse(_src).body if isinstance(n, ast.FunctionDef) and n.name == "get_comm_cost"][0]
_ns = {}
exec(compile(ast.Module(body=[_fn], type_ignores=[]), "placer_lib.py", "exec"), _ns)
get_comm_cost = _ns["get_comm_cost"]
COEF, INTERCEPT = 0.0001754, 134  # README.md / train.py default --comm_cost_coeffs


def load(modname, path):
    spec = importlib.util.spec_from_file_location(modname, path)
    m = importlib.util.module_from_spec(spec)
    sys.modules[modname] = m
    spec.loader.exec_module(m)
    return m


for name in ["park", "park.envs", "park.envs.tf_placement_sim"]:
    sys.modules.setdefault(name, types.ModuleType(name))
import warnings  # noqa: E402
warnings.simplefilter("ignore")  # `is` with literals (SyntaxWarning) in tf_sim.py
tf_sim = load("park.envs.tf_placement_sim.tf_sim", os.path.join(PARK, "tf_sim.py"))
tf_pl = load("park.envs.tf_placement_sim.tf_pl_simulator", os.path.join(PARK, "tf_pl_simulator.py"))


# ---------------------------------------------------------------- graphs
# op = dict(name, cost (int µs, >= 1 unless placeto_only), out (bytes, multiple of 5700), inputs [idx])
def chain(n, costs, outs):
    return [dict(cost=costs[i], out=outs[i], inputs=[i - 1] if i else []) for i in range(n)]


def layered(num, width, fan, seed, costs=(5, 400), kmax=600):
    r = random.Random(seed)
    ops, layers = [], []
    while len(ops) < num:
        layer = []
        for _ in range(min(width, num - len(ops))):
            ins = sorted(r.sample(layers[-1], min(len(layers[-1]), r.randint(1, fan)))) if layers else []
            ops.append(dict(cost=r.randint(*costs), out=5700 * r.randint(0, kmax), inputs=ins))
            layer.append(len(ops) - 1)
        layers.append(layer)
    return ops


def kahn_fifo_relabel(ops):
    """Baechi's assign_topo_order on the op graph; returns ops renumbered so that index ==
    topo_order (our simulator breaks ties by index, Baechi by topo_order)."""
    for _ in range(20):
        g = build_baechi_graph(ops, [0] * len(ops))
        placer_utils.assign_topo_order(g)
        order = [g.nodes[i]["topo_order"] for i in range(len(ops))]
        if order == list(range(len(ops))):
            return ops
        new_of = order
        new = [None] * len(ops)
        for i, op in enumerate(ops):
            new[new_of[i]] = dict(op, inputs=sorted(new_of[p] for p in op["inputs"]))
        ops = new
    raise RuntimeError("topo relabel did not converge")


# ---------------------------------------------------------------- Baechi
def build_baechi_graph(ops, placement):
    g = nx.DiGraph()
    for i, op in enumerate(ops):
        g.add_node(i, weight=op["cost"], name="n%03d" % i, id=i, temporary_memory=op.get("temp", 0),
                   persistent_memory=0, output_memory=[op["out"]], colocation_group=[],
                   p=placement[i])
    eid = 0
    for c, op in enumerate(ops):  # PlacementGraphGenerator._add_edges: consumers in graph order
        for p in op["inputs"]:
            w = get_comm_cost(ops[p]["out"], COEF, INTERCEPT)
            g.add_edge(p, c, id=eid, weight=w,
                       tensor=[{"name": "n%03d:0" % p, "weight": w, "num_bytes": ops[p]["out"]}])
            eid += 1
    return g


def run_baechi(ops, placement, ndev):
    g = build_baechi_graph(ops, placement)
    placer_utils.assign_topo_order(g)
    dg = nx.Graph()
    for d in range(ndev):
        dg.add_node(d, id=d, name="/GPU:%d" % d, size=0, memory_limit=1 << 60)
    vs = VirtualScheduler(g, dg)
    vs.initialize()
    makespan = vs.run()
    for i, op in enumerate(ops):  # exactness of the µs mapping (see README)
        assert get_comm_cost(op["out"], COEF, INTERCEPT) == INTERCEPT + op["out"] // 5700
    return dict(makespan_us=makespan,
                op_start_us=[g.nodes[i]["start_ts"] for i in range(len(ops))],
                op_end_us=[g.nodes[i]["end_ts"] for i in range(len(ops))],
                reference_peak_memory_bytes_not_compared=[dg.nodes[d]["peak_memory"] for d in range(ndev)])


# ---------------------------------------------------------------- Placeto / Park
class _NS:
    def __init__(self, **kw):
        self.__dict__.update(kw)


def run_placeto(ops, placement, ndev):
    names = ["n%03d" % i for i in range(len(ops))]
    nodes = [_NS(name=names[i], op="Op", device="", input=[names[p] for p in op["inputs"]])
             for i, op in enumerate(ops)]
    mg = _NS(graph_def=_NS(node=nodes))
    cost_d = {names[i]: int(op["cost"]) for i, op in enumerate(ops)}
    out_d = {names[i]: [int(op["out"])] for i, op in enumerate(ops)}
    devices = ["/GPU:%d" % d for d in range(ndev)]
    # ImportantOpsSimulator without its TF-proto constructor (which only fills cost_d / out_d
    # and normalises device names).
    sim = tf_pl.ImportantOpsSimulator.__new__(tf_pl.ImportantOpsSimulator)
    tf_sim.Simulator.__init__(sim, mg, cost_d, out_d, devices)
    pl = {names[i]: placement[i] for i in range(len(ops))}
    run_time, peak = sim.simulate(pl, sim_mem_usage=True)
    f = sim.f
    return dict(run_time_us=run_time,
                max_op_end_us=max(f[n].end_time for n in names),
                op_start_us=[f[n].start_time for n in names],
                op_end_us=[f[n].end_time for n in names],
                reference_peak_memory_bytes_not_compared=peak)


# ---------------------------------------------------------------- cases
def placements_for(ops, ndev, seed, extra=()):
    r = random.Random(seed)
    out = [("all_on_0", [0] * len(ops)),
           ("round_robin", [i % ndev for i in range(len(ops))])]
    for s in range(2):
        out.append(("random_%d" % s, [r.randrange(ndev) for _ in ops]))
    out.extend(extra)
    return out


def write_case(name, ops, ndev, placements, placeto_only=False, comment=""):
    with open(os.path.join(OUT, name + ".graph"), "w") as fh:
        fh.write("# sim_golden case %s (generated by the harness in README.md). %s\n" % (name, comment))
        fh.write("# time = reference op cost in integer µs × 1e-6; out = bytes (multiple of 5700).\n")
        for i, op in enumerate(ops):
            line = "op n%03d elementwise time=%de-6 out=%d" % (i, op["cost"], op["out"])
            if op.get("temp"):
                line += " temp=%d" % op["temp"]
            if op["inputs"]:
                line += " inputs=" + ",".join("n%03d" % p for p in op["inputs"])
            fh.write(line + "\n")
    recs = []
    for pname, pl in placements:
        rec = dict(name=pname, placement=pl, placeto=run_placeto(ops, pl, ndev))
        if not placeto_only:
            rec["baechi"] = run_baechi(ops, pl, ndev)
        recs.append(rec)
    with open(os.path.join(OUT, name + ".json"), "w") as fh:
        head = json.dumps(dict(graph=name + ".graph", devices=ndev, comment=comment))[:-1]
        fh.write(head + ',\n "placements": [\n  ' + ",\n  ".join(json.dumps(r) for r in recs) + "\n ]\n}\n")
    for rec in recs:
        print("%-14s %-12s placeto run_time=%-10s max_end=%-10s baechi=%s" % (
            name, rec["name"], rec["placeto"]["run_time_us"], rec["placeto"]["max_op_end_us"],
            rec.get("baechi", {}).get("makespan_us")))


os.makedirs(OUT, exist_ok=True)
K = 5700

# 1. chain on one / two devices
ops = chain(5, [100, 30, 250, 7, 60], [K * 100, K * 3, K * 40, K * 500, 0])
write_case("chain5", ops, 2, [("all_on_0", [0] * 5), ("alternating", [0, 1, 0, 1, 0]),
                               ("split", [0, 0, 1, 1, 1])], comment="chain of 5")

# 2. diamond a -> {b, c} -> d
ops = [dict(cost=50, out=K * 200, inputs=[]), dict(cost=300, out=K * 10, inputs=[0]),
       dict(cost=120, out=K * 20, inputs=[0]), dict(cost=40, out=0, inputs=[1, 2])]
write_case("diamond", ops, 2, [("one_device", [0, 0, 0, 0]), ("parallel", [0, 0, 1, 0]),
                                ("both_remote", [0, 1, 1, 0]), ("crossed", [0, 1, 0, 1])],
           comment="a -> {b, c} -> d")

# 3. fan-out of one tensor to 6 consumers on 4 devices (Placeto: one bus transfer; Baechi:
#    one transfer per destination device, cached for the second consumer there) + join.
ops = [dict(cost=80, out=K * 300, inputs=[])]
ops += [dict(cost=c, out=K * k, inputs=[0]) for c, k in [(40, 5), (90, 50), (60, 7), (200, 100), (30, 1), (75, 30)]]
ops += [dict(cost=20, out=0, inputs=list(range(1, 7)))]
write_case("fanout4", ops, 4, [("spread", [0, 0, 1, 1, 2, 3, 3, 0]),
                               ("all_remote", [0, 1, 2, 3, 1, 2, 3, 3]),
                               ("two_devices", [0, 1, 1, 1, 1, 1, 1, 1])],
           comment="one tensor to 6 consumers on up to 4 devices")

# 4. contention: two producers on different devices send to one receiver device; a third
#    producer sends twice in a row from the same device (bus hold / sender channel).
ops = [dict(cost=10, out=K * 400, inputs=[]), dict(cost=12, out=K * 350, inputs=[]),
       dict(cost=15, out=K * 20, inputs=[]), dict(cost=5, out=K * 20, inputs=[2]),
       dict(cost=30, out=K * 2, inputs=[0]), dict(cost=30, out=K * 2, inputs=[1]),
       dict(cost=25, out=K * 2, inputs=[2]), dict(cost=25, out=K * 2, inputs=[3]),
       dict(cost=10, out=0, inputs=[4, 5, 6, 7])]
write_case("contention", ops, 3, [("to_dev2", [0, 1, 0, 0, 2, 2, 1, 1, 2]),
                                  ("mixed", [0, 1, 2, 2, 1, 0, 0, 1, 2])],
           comment="receiver contention (Baechi) and bus hold (Placeto)")

# 5. random layered DAGs, relabelled to Baechi's topological order
for name, (n, w, fan, nd, seed) in {"layered30": (30, 5, 3, 2, 11), "layered45": (45, 6, 3, 3, 12),
                                    "layered60": (60, 8, 4, 4, 13)}.items():
    ops = kahn_fifo_relabel(layered(n, w, fan, seed))
    write_case(name, ops, nd, placements_for(ops, nd, seed),
               comment="layered random DAG, %d ops, %d devices, seed %d" % (n, nd, seed))

# 6. Placeto only: ops of zero cost (no δ1 gap; Baechi would raise them to 1 µs)
ops = [dict(cost=40, out=K * 30, inputs=[]), dict(cost=0, out=K * 30, inputs=[0]),
       dict(cost=0, out=K * 8, inputs=[1]), dict(cost=25, out=0, inputs=[2]),
       dict(cost=30, out=K * 4, inputs=[0])]
write_case("zero_cost_placeto", ops, 2, [("one_device", [0] * 5), ("split", [0, 0, 1, 1, 1])],
           placeto_only=True, comment="zero-cost ops (Placeto only)")
