# Bad input from Python (issue 33, must-show 5): malformed files, wrong types, out-of-range
# moves and actions, use after close — of PlacementCost, environments, vector environments and
# policies — raise a Python exception with a one-line message (the binaries' message where a
# binary reads the same input), never a crash of the interpreter. Every case runs in a child
# interpreter, so that a crash fails the test naming the case instead of killing pytest.
import gzip
import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import pytest

BUILD = os.environ.get("PLACERL_BUILD_DIR", "build")
ARIANE = "../shared/datasets/chip/ariane133_ng45/netlist.pb.txt.gz"
ARIANE_PLC = "../shared/datasets/chip/ariane133_ng45/initial.plc"
TILES = "../shared/datasets/chip/circuit_training/macro_tiles_10x10/netlist.pb.txt"
CKPT = "experiments/pretrained/chip"
DEVICE = "device(graph=tests/data/device/mlp_training.graph,machine='k80(gpus=2)')"

# The child: runs each case, prints one JSON line per case (name, exception class, message);
# "begin" lines name the case in progress, so a crash names it.
CHILD = textwrap.dedent("""
    import json, sys
    import numpy as np
    import placerl
    cases = json.loads(sys.stdin.read())
    for name, code, files in cases:
        print(json.dumps({"begin": name}), flush=True)
        env = {"placerl": placerl, "np": np, **files}
        try:
            exec(code, env)
            result = {"name": name, "raised": None, "message": ""}
        except Exception as e:
            result = {"name": name, "raised": type(e).__name__, "message": str(e),
                      "classes": [c.__name__ for c in type(e).__mro__]}
        print(json.dumps(result), flush=True)
""")


def run_cases(cases, files):
    """{name: result} of running `cases` [(name, code)] in a child interpreter; fails naming the
    case if the interpreter dies."""
    payload = json.dumps([(name, code, files) for name, code in cases])
    r = subprocess.run([sys.executable, "-c", CHILD], input=payload, capture_output=True, text=True, timeout=900)
    results, current = {}, None
    for line in r.stdout.splitlines():
        d = json.loads(line)
        if "begin" in d:
            current = d["begin"]
        else:
            results[d["name"]] = d
            current = None
    assert r.returncode == 0, f"the interpreter died (status {r.returncode}) in case {current!r}: {r.stderr[-2000:]}"
    return results


@pytest.fixture
def files(tmp_path):
    """Malformed inputs: a netlist cut mid-node, random bytes named .gz, a cut gzip, an empty
    netlist, a .plc with a bad row, another design's .plc, a cut and a random checkpoint."""
    f = {}
    f["bad_netlist"] = str(tmp_path / "bad.pb.txt")
    with open(f["bad_netlist"], "w") as out:
        out.write('node {\n name: "x"\n garbage')
    f["random_gz"] = str(tmp_path / "random.pb.txt.gz")
    with open(f["random_gz"], "wb") as out:
        out.write(bytes(range(7, 250)))
    f["cut_gz"] = str(tmp_path / "cut.pb.txt.gz")
    with open(ARIANE, "rb") as src, open(f["cut_gz"], "wb") as out:
        out.write(src.read()[:5000])
    f["empty_netlist"] = str(tmp_path / "empty.pb.txt")
    open(f["empty_netlist"], "w").close()
    f["bad_plc"] = str(tmp_path / "bad.plc")
    with open(f["bad_plc"], "w") as out:
        out.write("# Columns : 2  Rows : 2\nnot a row 1 2\n")
    f["cut_ckpt"] = str(tmp_path / "cut.ckpt")
    with open(CKPT + "/checkpoints/latest.ckpt", "rb") as src, open(f["cut_ckpt"], "wb") as out:
        out.write(src.read()[:2000])
    f["random_ckpt"] = f["random_gz"]
    f["empty_dir"] = str(tmp_path / "empty_dir")
    os.mkdir(f["empty_dir"])
    f.update(ARIANE=ARIANE, ARIANE_PLC=ARIANE_PLC, TILES=TILES, CKPT=CKPT, DEVICE=DEVICE,
             missing=str(tmp_path / "missing" / "x.plc"))
    return f


def expect(results, table):
    """Each case raised `cls` (a class name in its MRO) with a one-line message containing `text`."""
    for name, cls, text in table:
        r = results[name]
        assert r["raised"] is not None, f"{name}: nothing raised"
        assert cls in r["classes"], f"{name}: {r['raised']}: {r['message']}"
        assert "\n" not in r["message"] and r["message"], f"{name}: {r['message']!r}"
        assert text in r["message"], f"{name}: {r['message']!r} lacks {text!r}"


PLACEMENT_COST = [
    # malformed files
    ("pc_bad_netlist", "placerl.PlacementCost(bad_netlist)", "ParseError", ":3: expected ':' or '{'"),
    ("pc_random_gz", "placerl.PlacementCost(random_gz)", "ParseError", "random.pb.txt.gz"),
    ("pc_cut_gz", "placerl.PlacementCost(cut_gz)", "ParseError", "truncated gzip data"),
    ("pc_empty", "placerl.PlacementCost(empty_netlist)", "ParseError", "no nodes"),
    ("pc_directory", "placerl.PlacementCost('/tmp')", "Error", "is a directory"),
    ("pc_missing", "placerl.PlacementCost(missing)", "Error", "x.plc"),
    ("pc_bad_plc", "placerl.PlacementCost(TILES).restore_placement(bad_plc)", "ParseError", "bad.plc:2:"),
    ("pc_other_designs_plc", "placerl.PlacementCost(TILES).restore_placement(ARIANE_PLC)", "ParseError",
     "which is a pin"),
    ("pc_save_nowhere", "placerl.PlacementCost(TILES).save_placement(missing)", "Error", "cannot write"),
    # wrong types
    ("pc_netlist_none", "placerl.PlacementCost(None)", "TypeError", ""),
    ("pc_plc_none", "placerl.PlacementCost(TILES).restore_placement(None)", "TypeError", ""),
    ("pc_coords_str", "placerl.PlacementCost(TILES).update_node_coords(0, 'a', 2.0)", "TypeError", ""),
    ("pc_orientation_none", "p = placerl.PlacementCost(TILES); p.update_macro_orientation(p.get_macro_indices()[0], None)",
     "TypeError", ""),
    ("pc_index_huge", "placerl.PlacementCost(TILES).get_node_name(2 ** 80)", "TypeError", ""),
    # out-of-range moves, indices and settings
    ("pc_move_out_of_range", "placerl.PlacementCost(TILES).update_node_coords(10 ** 6, 1.0, 2.0)", "ConfigError",
     "update_node_coords: node index 1000000 is out of range [0, "),
    ("pc_move_negative", "placerl.PlacementCost(TILES).update_node_coords(-5, 1.0, 2.0)", "ConfigError",
     "node index -5 is out of range"),
    ("pc_move_infinite", "p = placerl.PlacementCost(TILES); p.update_node_coords(p.get_macro_indices()[0], float('inf'), 2.0)",
     "ConfigError", "must be finite"),
    ("pc_place_negative_cell", "p = placerl.PlacementCost(TILES); p.place_node(p.get_macro_indices()[0], -1)",
     "ConfigError", "grid cell -1 is out of range"),
    ("pc_place_pin", "p = placerl.PlacementCost(TILES); p.place_node(1, 0)", "ConfigError", "not a macro"),
    ("pc_orient_port", "p = placerl.PlacementCost(ARIANE); p.update_macro_orientation(0, 'N')", "ConfigError",
     "is a PORT, not a macro"),
    ("pc_grid_huge", "placerl.PlacementCost(TILES).set_placement_grid(10 ** 6, 10 ** 6)", "ConfigError", "1..4096"),
    ("pc_canvas_nan", "placerl.PlacementCost(TILES).set_canvas_size(float('nan'), 3.0)", "ConfigError", "finite"),
    ("pc_routes_negative", "placerl.PlacementCost(TILES).set_routes_per_micron(-1.0, 2.0)", "ConfigError", "> 0"),
    ("pc_smooth_negative", "placerl.PlacementCost(TILES).set_congestion_smooth_range(-3)", "ConfigError", ">= 0"),
    ("pc_overlap_nan", "placerl.PlacementCost(TILES).set_overlap_threshold(float('nan'))", "ConfigError", ">= 0"),
    ("pc_allocation_nan", "placerl.PlacementCost(TILES).set_macro_routing_allocation(float('nan'), 1.0)",
     "ConfigError", "finite"),
    ("pc_cell_centre", "placerl.PlacementCost(TILES).get_grid_cell_centre(10 ** 7)", "ConfigError", "out of range"),
] + [(f"pc_{m}_out_of_range", f"placerl.PlacementCost(TILES).{m}(10 ** 7)", "ConfigError",
      f"{m}: node index 10000000 is out of range")
     for m in ["fix_node_coord", "unfix_node_coord", "get_node_width_height", "get_node_location",
               "is_node_soft_macro", "is_node_fixed", "get_macro_orientation", "unplace_node"]]

ENVIRONMENTS = [
    ("env_spec_none", "placerl.make(None)", "ConfigError", "the spec must be a string"),
    ("env_spec_bad", "placerl.make('chip(((')", "ConfigError", "missing ')'"),
    ("env_bad_netlist", "placerl.make('chip(netlist=' + bad_netlist + ')')", "ParseError", ":3: expected"),
    ("env_random_gz", "placerl.make('chip(netlist=' + random_gz + ')')", "ParseError", "random.pb.txt.gz"),
    ("env_bad_plc", "placerl.make('chip(netlist=' + TILES + ',plc=' + bad_plc + ')')", "ParseError", "bad.plc:2:"),
    ("env_bad_graph", "placerl.make(DEVICE.replace('tests/data/device/mlp_training.graph', bad_netlist))",
     "ParseError", "bad.pb.txt"),
    ("env_action_none", "e = placerl.make('chip(seed=1)'); e.reset(seed=0); e.step(None)", "TypeError",
     "the action must be an integer"),
    ("env_action_list", "e = placerl.make('chip(seed=1)'); e.reset(seed=0); e.step([1])", "TypeError", "integer"),
    ("env_action_nan", "e = placerl.make('chip(seed=1)'); e.reset(seed=0); e.step(float('nan'))", "ConfigError",
     "integer"),
    ("env_action_out_of_range", "e = placerl.make('chip(seed=1)'); e.reset(seed=0); e.step(10 ** 6)",
     "InfeasibleAction", "cell 1000000 is not legal"),
    ("env_action_negative", "e = placerl.make('chip(seed=1)'); e.reset(seed=0); e.step(-1)", "InfeasibleAction",
     "cell -1 is not legal"),
    ("env_action_huge", "e = placerl.make('chip(seed=1)'); e.reset(seed=0); e.step(2 ** 100)", "InfeasibleAction",
     "out of range"),
    ("env_step_after_the_end", textwrap.dedent("""
        e = placerl.make('chip(seed=1)'); e.reset(seed=0)
        while not e.step(int(np.flatnonzero(e.action_masks())[0]))[2]:
            pass
        e.step(0)"""), "InfeasibleAction", "the episode is over"),
    ("device_action_out_of_range", "e = placerl.make(DEVICE); e.reset(seed=0); e.step(99)", "InfeasibleAction",
     "device 99 is not allowed"),
    ("block_action_out_of_range", "e = placerl.make('block(space=nb201)'); e.reset(seed=0); e.step(10 ** 5)",
     "InfeasibleAction", "choice 100000 is not allowed"),
    ("env_seed_str", "placerl.make('chip(seed=1)').reset(seed='5')", "TypeError", "reset: the seed must be an integer"),
    ("env_seed_negative", "placerl.make('chip(seed=1)').reset(seed=-1)", "ConfigError", "reset: the seed must be >= 0"),
    ("env_seed_huge", "placerl.make('chip(seed=1)').reset(seed=2 ** 70)", "ConfigError",
     "reset: the seed must be < 2**64"),
] + [(f"env_closed_{what}", f"e = placerl.make('chip(seed=1)'); e.reset(seed=0); e.close(); {call}", "Error",
      "the environment is closed")
     for what, call in [("step", "e.step(0)"), ("reset", "e.reset(seed=0)"), ("masks", "e.action_masks()"),
                        ("static", "e.static"), ("clone", "e.clone()"), ("length", "e.episode_length")]]

VECTOR_ENVIRONMENTS = [
    ("vec_n_zero", "placerl.make_vec('chip(seed=1)', 0)", "ConfigError", "make_vec: n must be in [1, 4096] (got 0)"),
    ("vec_n_huge", "placerl.make_vec('chip(seed=1)', 2 ** 40)", "ConfigError", "n must be in [1, 4096]"),
    ("vec_n_str", "placerl.make_vec('chip(seed=1)', '2')", "TypeError", "make_vec: n must be an integer"),
    ("vec_seed_negative", "placerl.make_vec('chip(seed=1)', 2, seed=-1)", "ConfigError",
     "make_vec: the seed must be >= 0"),
    ("vec_spec_bad", "placerl.make_vec('chip(netlist=' + bad_netlist + ')', 2)", "ParseError", ":3: expected"),
    ("vec_before_reset", "placerl.make_vec('chip(seed=1)', 2).step(np.zeros(2, np.int32))", "ConfigError",
     "before reset"),
    ("vec_shape", "v = placerl.make_vec('chip(seed=1)', 2); v.reset(); v.step(np.zeros(3, np.int32))", "ConfigError",
     "expected 2 actions"),
    ("vec_2d", "v = placerl.make_vec('chip(seed=1)', 2); v.reset(); v.step(np.zeros((2, 1), np.int32))",
     "ConfigError", "expected 2 actions"),
    ("vec_floats", "v = placerl.make_vec('chip(seed=1)', 2); v.reset(); v.step(np.zeros(2) + 0.5)", "ConfigError",
     "must be integers"),
    ("vec_none", "v = placerl.make_vec('chip(seed=1)', 2); v.reset(); v.step(None)", "TypeError", "integers"),
    ("vec_out_of_range", "v = placerl.make_vec('chip(seed=1)', 2); v.reset(); v.step(np.array([10 ** 6, 0]))",
     "InfeasibleAction", "cell 1000000 is not legal"),
    ("vec_huge", "v = placerl.make_vec('chip(seed=1)', 2); v.reset(); v.step(np.array([2 ** 40, 0]))",
     "InfeasibleAction", "out of range"),
    ("vec_env_index", "placerl.make_vec('chip(seed=1)', 2)._core.env(2)", "ConfigError", "index out of range"),
] + [(f"vec_closed_{what}", f"v = placerl.make_vec('chip(seed=1)', 2); v.reset(); v.close(); {call}", "Error",
      "the vector environment is closed")
     for what, call in [("step", "v.step(np.zeros(2, np.int32))"), ("reset", "v.reset()"),
                        ("masks", "v.action_masks()")]]

POLICIES = [
    ("policy_cut", "placerl.Policy.load(cut_ckpt)", "ConfigError", "truncated checkpoint"),
    ("policy_random", "placerl.Policy.load(random_ckpt)", "ConfigError", "not a placerl checkpoint"),
    ("policy_empty_dir", "placerl.Policy.load(empty_dir)", "ConfigError", "no checkpoints/latest.ckpt"),
    ("policy_none", "placerl.Policy.load(None)", "ConfigError", "must be a path"),
    ("policy_other_kind", "placerl.Policy.load(CKPT).act(placerl.make('block(space=nb201)'))", "ConfigError",
     "does not fit environment block("),
    ("policy_vec_env", "placerl.Policy.load(CKPT).act(placerl.make_vec('chip(seed=1)', 2))", "TypeError",
     "expected a placerl.Env"),
    ("policy_seed_str", "e = placerl.make('chip(seed=1)'); e.reset(seed=0); placerl.Policy.load(CKPT).act(e, seed='x')",
     "TypeError", "Policy.act: the seed must be an integer"),
    ("policy_seed_huge", "e = placerl.make('chip(seed=1)'); e.reset(seed=0); placerl.Policy.load(CKPT).act(e, seed=2 ** 70)",
     "ConfigError", "Policy.act: the seed must be < 2**63"),
    ("policy_seed_negative", "e = placerl.make('chip(seed=1)'); e.reset(seed=0); placerl.Policy.load(CKPT).act(e, seed=-1)",
     "ConfigError", "Policy.act: the seed must be >= 0"),
    ("policy_after_the_end", textwrap.dedent("""
        p = placerl.Policy.load(CKPT); e = placerl.make('chip(seed=1)'); e.reset(seed=0)
        while not e.step(p.act(e))[2]:
            pass
        p.act(e)"""), "InfeasibleAction", "no legal action"),
    ("policy_closed_act", "e = placerl.make('chip(seed=1)'); e.close(); placerl.Policy.load(CKPT).act(e)", "Error",
     "the environment is closed"),
    ("policy_closed_evaluate", "e = placerl.make('chip(seed=1)'); e.close(); placerl.Policy.load(CKPT).evaluate(e)",
     "Error", "the environment is closed"),
    ("policy_make_env_bad_netlist", "placerl.Policy.load(CKPT).make_env(netlist=bad_netlist)", "ParseError",
     ":3: expected"),
    ("policy_make_env_bad_plc", "placerl.Policy.load(CKPT).make_env(netlist=TILES, plc=bad_plc)", "ParseError",
     "bad.plc:2:"),
    ("policy_make_env_cut_gz", "placerl.Policy.load(CKPT).make_env(netlist=cut_gz)", "ParseError",
     "truncated gzip data"),
    ("policy_make_env_type", "placerl.Policy.load(CKPT).make_env(plc=3)", "TypeError", "plc must be a path"),
]


def test_placement_cost_bad_input(files):
    expect(run_cases([(n, c) for n, c, _, _ in PLACEMENT_COST], files), [(n, k, t) for n, _, k, t in PLACEMENT_COST])


def test_environment_bad_input_and_use_after_close(files):
    expect(run_cases([(n, c) for n, c, _, _ in ENVIRONMENTS], files), [(n, k, t) for n, _, k, t in ENVIRONMENTS])


def test_vector_environment_bad_input_and_use_after_close(files):
    expect(run_cases([(n, c) for n, c, _, _ in VECTOR_ENVIRONMENTS], files),
           [(n, k, t) for n, _, k, t in VECTOR_ENVIRONMENTS])


@pytest.mark.skipif(importlib.util.find_spec("placerl._policy") is None, reason="placerl built without LibTorch")
def test_policy_bad_input_and_use_after_close(files):
    expect(run_cases([(n, c) for n, c, _, _ in POLICIES], files), [(n, k, t) for n, _, k, t in POLICIES])


def test_views_outlive_close(files):
    # Observations are views of the environment's buffers: closing (and collecting) the
    # environment must not free memory they still show.
    code = textwrap.dedent("""
        import gc
        e = placerl.make('chip(seed=1)'); obs, _ = e.reset(seed=0); total = int(obs['action_mask'].sum())
        static = e.static['node_features']; e.close(); del e; gc.collect()
        assert int(obs['action_mask'].sum()) == total and static.shape[0] > 0
        v = placerl.make_vec('chip(seed=1)', 2); o, _ = v.reset(); total = int(o['action_mask'].sum())
        v.close(); del v; gc.collect()
        assert int(o['action_mask'].sum()) == total""")
    assert run_cases([("views", code)], files)["views"]["raised"] is None


@pytest.mark.parametrize("name,args,code", [
    ("bad_netlist", ["--netlist", "{bad_netlist}"], "placerl.PlacementCost(bad_netlist)"),
    ("random_gz", ["--netlist", "{random_gz}"], "placerl.PlacementCost(random_gz)"),
    ("cut_gz", ["--netlist", "{cut_gz}"], "placerl.PlacementCost(cut_gz)"),
    ("bad_plc", ["--netlist", "{TILES}", "--plc", "{bad_plc}"], "placerl.PlacementCost(TILES).restore_placement(bad_plc)"),
    ("other_plc", ["--netlist", "{TILES}", "--plc", "{ARIANE_PLC}"],
     "placerl.PlacementCost(TILES).restore_placement(ARIANE_PLC)"),
])
def test_malformed_files_are_the_binarys_message(files, name, args, code):
    # The same line proxy-cost prints after its "proxy-cost: error: " prefix.
    binary = os.path.join(BUILD, "bin", "proxy-cost")
    if not os.path.exists(binary):
        pytest.skip(f"{binary} not built")
    r = subprocess.run([binary, *[a.format(**files) for a in args]], capture_output=True, text=True, timeout=300)
    assert r.returncode == 1 and r.stderr.count("\n") == 1, r.stderr
    result = run_cases([(name, code)], files)[name]
    assert r.stderr == "proxy-cost: error: " + result["message"] + "\n"


def test_a_cut_checkpoint_is_the_binarys_message(files, tmp_path):
    if importlib.util.find_spec("placerl._policy") is None:
        pytest.skip("placerl built without LibTorch")
    place = os.path.join(BUILD, "bin", "place")
    if not os.path.exists(place):
        pytest.skip(f"{place} not built")
    r = subprocess.run([place, "--checkpoint", files["cut_ckpt"], "--samples", "0", "--out", str(tmp_path / "run")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 1 and r.stderr.count("\n") == 1, r.stderr
    result = run_cases([("cut", "placerl.Policy.load(cut_ckpt)")], files)["cut"]
    assert r.stderr == "place: error: " + result["message"] + "\n"
    assert not (tmp_path / "run").exists()
