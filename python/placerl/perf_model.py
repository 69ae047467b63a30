"""placerl.perf_model: the analytical TPU/GPU performance model (docs/perf_model.md) from Python.

Each function returns, as a dict, the document that `perf-model <subcommand> --json` prints for the
same options; keyword arguments are the binary's long options with '_' for '-':

    import placerl
    placerl.perf_model.run(model="transformer(layers=8,d_model=2048)", mesh="tpu_v4:2x2x2", plan="tensor=2")
    placerl.perf_model.search(mesh="tpu_v4:2x2x2", top=5)["plans"][0]["step_s"]
    placerl.perf_model.infer(mesh="tpu_v4:2x2x2", batch=8, prompt=512, generate=16, weights="int8")
    placerl.perf_model.simulate(graph="layered(ops=200,width=20,fan_in=3,seed=3)", devices=4)

Every function also takes catalog= (a hardware catalogue .pbtxt) and one_matmul_constant=True (the
binary's global --catalog and --one-matmul-constant). An infeasible result is still a document (the
binary's exit status 2): "oom": true, or no "plans" from search. Bad input raises placerl.ConfigError
(or ParseError) with the binary's one-line message, without its "perf-model: error: " prefix.
"""

import json

from . import _core
from ._core import ConfigError

__all__ = ["run", "search", "infer", "simulate"]


def _document(subcommand, options):
    try:
        text = json.dumps(options, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise ConfigError(f"{subcommand}: options must be strings, finite numbers and booleans ({e})") from None
    doc, _status = _core.perf_model(subcommand, text)
    return json.loads(doc)


def run(**options):
    """`perf-model run --json`: one plan of model= on mesh= (model, mesh, plan, graph)."""
    return _document("run", options)


def search(**options):
    """`perf-model search --json`: the best plans by step time (model, mesh, plan, top, no_schedules)."""
    return _document("search", options)


def infer(**options):
    """`perf-model infer --json`: prefill and decode latency (model, mesh, plan, batch, prompt, generate,
    weights, layout, batch_sharded_kv, energy, power_w, pue, grid, idle_capacity)."""
    return _document("infer", options)


def simulate(**options):
    """`perf-model simulate --json`: the placed-graph simulator (graph, placement, machine, devices, preset,
    device, memory, trace, bench, replicas, ring_bw, ring_latency)."""
    return _document("simulate", options)
