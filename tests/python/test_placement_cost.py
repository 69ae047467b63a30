"""placerl.PlacementCost: Circuit Training's plc_client API over the exact proxy cost. Every golden case
of TILOS's plc_client_os.py (tests/data/proxy_golden/golden.json) to 1e-9 after restore_placement; moves,
orientations and grid changes equal a fresh evaluation of the saved placement; node queries follow CT's
numbering; bad input is a Python exception with one line."""
import json
import math
import os

import numpy as np
import pytest

import placerl

ARIANE = "../shared/datasets/chip/ariane133_ng45/netlist.pb.txt.gz"
ARIANE_PLC = "../shared/datasets/chip/ariane133_ng45/initial.plc"


def golden_cases():
    with open("tests/data/proxy_golden/golden.json") as f:
        return json.load(f)


def test_every_golden_case_of_the_reference_implementation():
    cases = golden_cases()
    assert len(cases) >= 20
    netlists = {}
    for c in cases:
        if c["netlist"] not in netlists:
            netlists[c["netlist"]] = placerl.PlacementCost(c["netlist"])
        plc = netlists[c["netlist"]]
        plc.restore_placement(c["plc"])
        assert plc.get_wirelength() == pytest.approx(c["hpwl"], rel=1e-9, abs=1e-9), c["name"]
        assert plc.get_cost() == pytest.approx(c["wirelength_cost"], abs=1e-9), c["name"]
        assert plc.get_density_cost() == pytest.approx(c["density_cost"], abs=1e-9), c["name"]
        assert plc.get_congestion_cost() == pytest.approx(c["congestion_cost"], rel=1e-9, abs=1e-9), c["name"]
        assert plc.get_proxy_cost() == pytest.approx(c["proxy_cost"], rel=1e-9, abs=1e-9), c["name"]


def test_moves_equal_a_fresh_evaluation_of_the_saved_placement(tmp_path):
    plc = placerl.PlacementCost(ARIANE)
    plc.restore_placement(ARIANE_PLC)
    cols, rows = plc.get_grid_num_columns_rows()
    w, h = plc.get_canvas_width_height()
    hard = [m for m in plc.get_macro_indices() if not plc.is_node_soft_macro(m)]
    assert len(hard) == 133
    rng = np.random.default_rng(1)
    for i in range(30):
        m = int(rng.choice(hard))
        if i % 3 == 0:
            plc.place_node(m, int(rng.integers(cols * rows)))
        elif i % 3 == 1:
            plc.update_node_coords(m, float(rng.uniform(0, w)), float(rng.uniform(0, h)))
        else:
            plc.update_macro_orientation(m, "FS" if i % 2 else "S")
    saved = str(tmp_path / "moved.plc")
    plc.save_placement(saved, "moved by a test")
    fresh = placerl.PlacementCost(ARIANE)
    fresh.restore_placement(saved)
    for name in ["get_wirelength", "get_cost", "get_density_cost", "get_congestion_cost"]:
        assert getattr(plc, name)() == pytest.approx(getattr(fresh, name)(), rel=1e-6, abs=1e-9), name
    assert "# moved by a test" in open(saved).read()
    # place_node puts the macro's centre at the cell's centre.
    m = hard[0]
    plc.place_node(m, cols + 2)
    assert plc.get_node_location(m) == pytest.approx(plc.get_grid_cell_centre(cols + 2))
    # A grid change keeps the placement and re-scores it; the wirelength does not depend on the grid.
    wl = plc.get_cost()
    plc.set_placement_grid(20, 20)
    assert plc.get_grid_num_columns_rows() == (20, 20)
    assert plc.get_cost() == pytest.approx(wl, abs=1e-12)
    density = plc.get_grid_cells_density()
    assert density.shape == (400,) and np.all(density >= 0)
    assert plc.get_horizontal_routing_congestion().shape == (400,)
    assert plc.get_vertical_routing_congestion().shape == (400,)


def test_node_queries_follow_circuit_trainings_numbering():
    plc = placerl.PlacementCost(ARIANE)
    types = [plc.get_node_type(i) for i in range(plc.num_nodes())]
    assert set(types) <= {"PORT", "MACRO", "MACRO_PIN", "STDCELL"}
    macros = plc.get_macro_indices()
    assert [i for i, t in enumerate(types) if t == "MACRO"] == list(macros)
    m = macros[0]
    assert plc.get_node_index(plc.get_node_name(m)) == m
    w, h = plc.get_node_width_height(m)
    assert w > 0 and h > 0
    assert plc.get_macro_orientation(m) in {"N", "FN", "S", "FS", "E", "FE", "W", "FW"}
    assert not plc.is_node_fixed(m)
    plc.fix_node_coord(m)
    assert plc.is_node_fixed(m)
    plc.unfix_node_coord(m)
    assert not plc.is_node_fixed(m)


def test_bad_input_is_a_python_exception_and_changes_nothing():
    plc = placerl.PlacementCost(ARIANE)
    plc.restore_placement(ARIANE_PLC)
    before = plc.get_proxy_cost()
    m = plc.get_macro_indices()[0]
    for call in [lambda: plc.get_node_name(-1), lambda: plc.get_node_type(plc.num_nodes()),
                 lambda: plc.place_node(m, 10 ** 9), lambda: plc.update_macro_orientation(m, "sideways"),
                 lambda: plc.update_node_coords(m, math.nan, 0.0), lambda: plc.set_placement_grid(0, 4),
                 lambda: plc.set_canvas_size(-1.0, 3.0), lambda: plc.get_node_index("no such node")]:
        with pytest.raises(placerl.ConfigError) as e:
            call()
        assert "\n" not in str(e.value)
    with pytest.raises(placerl.Error):
        plc.restore_placement("/nonexistent.plc")
    with pytest.raises(placerl.Error):
        placerl.PlacementCost("/nonexistent.pb.txt")
    with pytest.raises(TypeError):
        plc.place_node("a macro", 3)
    assert plc.get_proxy_cost() == before


def test_random_moves_equal_the_reference_implementation():
    """Random moves (place_node on a random cell, update_node_coords of a random macro or port to a
    random point) through TILOS's plc_client_os.py, each followed by every cost and the density and
    routing-congestion grids (tests/python/data/README.md): the same from placerl after the same
    moves, to 1e-9. The incremental path: one restore, then only moves."""
    with open("tests/python/data/plc_moves_golden.json") as f:
        cases = json.load(f)
    assert len(cases) >= 6 and sum(len(c["ops"]) for c in cases) >= 100
    compared = 0
    for case in cases:
        plc = placerl.PlacementCost(case["netlist"])
        plc.restore_placement(case["plc"])
        for k, op in enumerate(case["ops"]):
            where = f"{case['name']} op {k} ({op['op']})"
            if op["op"] == "place_node":
                assert plc.place_node(op["node"], op["cell"]) is None
            else:
                assert plc.update_node_coords(op["node"], op["x"], op["y"]) is None
            assert plc.get_node_location(op["node"]) == pytest.approx(tuple(op["location"]), abs=1e-9), where
            assert plc.get_wirelength() == pytest.approx(op["hpwl"], rel=1e-9, abs=1e-9), where
            assert plc.get_cost() == pytest.approx(op["wirelength_cost"], abs=1e-9), where
            assert plc.get_density_cost() == pytest.approx(op["density_cost"], abs=1e-9), where
            assert plc.get_congestion_cost() == pytest.approx(op["congestion_cost"], abs=1e-9), where
            for name, method in [("density", "get_grid_cells_density"), ("h_congestion", "get_horizontal_routing_congestion"),
                                 ("v_congestion", "get_vertical_routing_congestion")]:
                if name in op:
                    got = getattr(plc, method)()
                    assert got.shape == (len(op[name]),), where
                    np.testing.assert_allclose(got, op[name], rtol=0, atol=1e-9, err_msg=f"{where} {name}")
                    compared += 1
    assert compared > 100
