"""placerl.PlacementCost, the rest of what Circuit Training's environment and observation extractor
call: get_macro_adjacency, get_node_mask, unplace_all_nodes / unplace_node / is_node_placed,
get_grid_cell_of_node, get_macro_and_clustered_port_adjacency (each against TILOS's plc_client_os.py, tests/data/plc_api_golden/),
get_fan_outs_of_node (against the netlist file read here), get_blockages / create_blockage and
optimize_stdcells (placerl's FD); bad input is a Python exception with one line."""
import gzip
import json
import re

import numpy as np
import pytest

import placerl

ARIANE = "../shared/datasets/chip/ariane133_ng45/netlist.pb.txt.gz"
ARIANE_PLC = "../shared/datasets/chip/ariane133_ng45/initial.plc"


def golden_cases():
    with open("tests/data/plc_api_golden/golden.json") as f:
        return json.load(f)


def test_every_golden_case_of_the_reference_implementation():
    cases = golden_cases()
    assert len(cases) >= 8
    checked = {"mask": 0, "is_placed": 0, "adjacency": 0, "clustered": 0}
    by_name = {c["name"]: c for c in cases}
    for c in cases:
        if isinstance(c["adjacency_nonzero"], str):  # the same netlist as that case
            c["adjacency_nonzero"] = by_name[c["adjacency_nonzero"]]["adjacency_nonzero"]
        plc = placerl.PlacementCost(c["netlist"])
        plc.restore_placement(c["plc"])
        assert list(plc.get_macro_indices()) == c["macros"], c["name"]
        m = c["adjacency_size"]
        expected = np.zeros(m * m)
        for i, j, v in c["adjacency_nonzero"]:
            expected[i * m + j] = v
        adj = plc.get_macro_adjacency()
        assert adj.shape == (m * m,)
        np.testing.assert_allclose(adj, expected, rtol=0, atol=1e-9, err_msg=c["name"])
        checked["adjacency"] += len(c["adjacency_nonzero"])
        # The macros and the clustered ports: the macro block is the adjacency above.
        k = c["clustered_size"]
        clustered = np.zeros((k, k))
        clustered[:m, :m] = expected.reshape(m, m)
        for i, j, v in c["clustered_port_nonzero"]:
            clustered[i, j] = v
        got, cells = plc.get_macro_and_clustered_port_adjacency()
        assert list(cells) == c["clustered_cells"], c["name"]
        np.testing.assert_allclose(got, clustered.ravel(), rtol=0, atol=1e-9, err_msg=c["name"])
        checked["clustered"] += len(c["clustered_port_nonzero"])
        for op in c["ops"]:
            if op[0] == "mask":
                got = plc.get_node_mask(op[1])
                assert got.tolist() == op[2], f"{c['name']}: mask of node {op[1]}"
                checked["mask"] += 1
            elif op[0] == "is_placed":
                assert plc.is_node_placed(op[1]) == op[2], f"{c['name']}: is_node_placed({op[1]})"
                checked["is_placed"] += 1
            elif op[0] == "unplace_all":
                plc.unplace_all_nodes()
            elif op[0] == "place":
                plc.place_node(op[1], op[2])
            elif op[0] == "unplace":
                plc.unplace_node(op[1])
            else:
                raise AssertionError(op[0])
        for node, cell in c["grid_cell_of_node_after_ops"].items():
            assert plc.get_grid_cell_of_node(int(node)) == cell, f"{c['name']}: grid cell of {node}"
    assert checked["mask"] >= 50 and checked["is_placed"] >= 30 and checked["adjacency"] >= 100 and checked["clustered"] >= 200


def read_fan_outs(path):
    """{driver name: [sink names]} read from a CT protobuf text netlist, independently of placerl."""
    text = gzip.open(path, "rt").read() if path.endswith(".gz") else open(path).read()
    out = {}
    for block in re.findall(r"node\s*\{(.*?)\n\}", text, flags=re.S):
        name = re.search(r'name:\s*"([^"]*)"', block).group(1)
        inputs = re.findall(r'input:\s*"([^"]*)"', block)
        if inputs:
            out[name] = inputs
    return out


def test_fan_outs_are_the_netlist_inputs():
    plc = placerl.PlacementCost(ARIANE)
    drivers = read_fan_outs(ARIANE)
    assert len(drivers) > 1000
    checked = 0
    for i in range(0, plc.num_nodes(), 7):
        name = plc.get_node_name(i)
        got = [plc.get_node_name(j) for j in plc.get_fan_outs_of_node(i)]
        assert got == drivers.get(name, []) or sorted(got) == sorted(set(drivers.get(name, []))), name
        checked += bool(got)
    assert checked > 100
    assert plc.get_fan_outs_of_node(plc.get_macro_indices()[0]) == []


def test_node_mask_follows_placements_and_the_fixed_flag():
    plc = placerl.PlacementCost(ARIANE)
    plc.restore_placement(ARIANE_PLC)
    cols, rows = plc.get_grid_num_columns_rows()
    hard = [m for m in plc.get_macro_indices() if not plc.is_node_soft_macro(m)]
    plc.unplace_all_nodes()
    assert not any(plc.is_node_placed(m) for m in plc.get_macro_indices())
    free = plc.get_node_mask(hard[0])
    assert free.shape == (cols * rows,) and 0 < free.sum() < cols * rows  # only the canvas edges
    cell = int(np.flatnonzero(free)[len(np.flatnonzero(free)) // 2])
    plc.place_node(hard[0], cell)
    assert plc.is_node_placed(hard[0])
    assert plc.get_grid_cell_of_node(hard[0]) == cell
    assert plc.get_node_mask(hard[1])[cell] == 0  # taken now
    plc.unplace_node(hard[0])
    assert plc.get_node_mask(hard[1])[cell] == free[cell]
    # A fixed macro is neither moved by place_node nor unplaced (TILOS).
    plc.fix_node_coord(hard[2])
    before = plc.get_node_location(hard[2])
    plc.place_node(hard[2], cell)
    assert plc.get_node_location(hard[2]) == before
    plc.unfix_node_coord(hard[2])


def test_blockages_and_optimize_stdcells():
    plc = placerl.PlacementCost(ARIANE)
    plc.restore_placement(ARIANE_PLC)
    assert plc.get_blockages() == []
    assert plc.get_fake_nets() == [] and plc.has_area_constraint() is False
    plc.create_blockage(10.0, 20.0, 110.0, 220.0, 0.5)
    assert plc.get_blockages() == [(10.0, 20.0, 110.0, 220.0, 0.5)]
    w, h = plc.get_canvas_width_height()
    soft = [m for m in plc.get_macro_indices() if plc.is_node_soft_macro(m)]
    hard = [m for m in plc.get_macro_indices() if not plc.is_node_soft_macro(m)]
    hard_before = [plc.get_node_location(m) for m in hard]
    soft_before = [plc.get_node_location(m) for m in soft]
    cost_before = plc.get_cost()
    # CT's episode-end call (placement_util / environment): max_move_distance = max(W, H) / num_steps.
    plc.optimize_stdcells(use_current_loc=False, move_stdcells=True, move_macros=False, log_scale_conns=False,
                          use_sizes=False, io_factor=1.0, num_steps=[100, 100, 100],
                          max_move_distance=[max(w, h) / 100] * 3, attract_factor=[100.0, 1e-3, 1e-5],
                          repel_factor=[0.0, 1e6, 1e7])
    assert [plc.get_node_location(m) for m in hard] == hard_before
    moved = sum(plc.get_node_location(m) != p for m, p in zip(soft, soft_before))
    assert moved > len(soft) // 2
    assert plc.get_cost() != cost_before
    for x, y in (plc.get_node_location(m) for m in soft):
        assert 0 <= x <= w and 0 <= y <= h


def test_bad_input_raises_with_one_line():
    plc = placerl.PlacementCost(ARIANE)
    pin = next(i for i in range(plc.num_nodes()) if plc.get_node_type(i) == "MACRO_PIN")
    port = next(i for i in range(plc.num_nodes()) if plc.get_node_type(i) == "PORT")
    bad = [lambda: plc.get_node_mask(-1), lambda: plc.get_node_mask(10 ** 8), lambda: plc.is_node_placed(pin),
           lambda: plc.unplace_node(pin), lambda: plc.get_grid_cell_of_node(port),
           lambda: plc.get_fan_outs_of_node(plc.num_nodes()),
           lambda: plc.create_blockage(5, 5, 1, 1, 0.5), lambda: plc.create_blockage(0, 0, 1, 1, 2.0),
           lambda: plc.create_blockage(0, float("nan"), 1, 1, 0.5)]
    fd = dict(use_current_loc=False, move_stdcells=True, move_macros=False, log_scale_conns=False, use_sizes=False,
              io_factor=1.0, num_steps=[10], max_move_distance=[10.0], attract_factor=[1.0], repel_factor=[0.0])
    for change in [dict(move_macros=True), dict(move_stdcells=False), dict(log_scale_conns=True),
                   dict(num_steps=[10, 10]), dict(num_steps=[0]), dict(max_move_distance=[-1.0]),
                   dict(attract_factor=[1.0, 2.0])]:
        bad.append(lambda change=change: plc.optimize_stdcells(**{**fd, **change}))
    for call in bad:
        with pytest.raises(placerl.ConfigError) as e:
            call()
        assert "\n" not in str(e.value)
    with pytest.raises(TypeError):
        plc.get_node_mask("a macro")
    with pytest.raises(TypeError):
        plc.optimize_stdcells(**{**fd, "num_steps": "many"})
    assert plc.get_blockages() == []  # nothing changed


def test_a_circuit_training_style_episode(tmp_path):
    """What CT's environment does with plc_client: unplace everything, place the hard macros one by
    one on a legal cell of get_node_mask, FD for the soft macros, read the costs; the result is a
    legal placement whose costs equal a fresh evaluation of the saved .plc."""
    plc = placerl.PlacementCost(ARIANE)
    plc.restore_placement(ARIANE_PLC)
    hard = [m for m in plc.get_macro_indices() if not plc.is_node_soft_macro(m)]
    hard.sort(key=lambda m: -np.prod(plc.get_node_width_height(m)))  # CT: largest first
    plc.unplace_all_nodes()
    rng = np.random.default_rng(3)
    for m in hard:
        mask = plc.get_node_mask(m)
        legal = np.flatnonzero(mask)
        assert legal.size > 0
        plc.place_node(m, int(rng.choice(legal)))
        assert plc.is_node_placed(m)
    # No two hard macros overlap (what the masks guarantee).
    boxes = []
    for m in hard:
        (x, y), (w, h) = plc.get_node_location(m), plc.get_node_width_height(m)
        boxes.append((x - w / 2, y - h / 2, x + w / 2, y + h / 2))
    for i in range(len(boxes)):
        for j in range(i + 1, len(boxes)):
            a, b = boxes[i], boxes[j]
            dx = min(a[2], b[2]) - max(a[0], b[0])
            dy = min(a[3], b[3]) - max(a[1], b[1])
            assert not (dx > 1e-9 and dy > 1e-9), (hard[i], hard[j])
    w, h = plc.get_canvas_width_height()
    plc.optimize_stdcells(False, True, False, False, False, 1.0, [100, 100, 100], [max(w, h) / 100] * 3,
                          [100.0, 1e-3, 1e-5], [0.0, 1e6, 1e7])
    saved = str(tmp_path / "episode.plc")
    plc.save_placement(saved)
    fresh = placerl.PlacementCost(ARIANE)
    fresh.restore_placement(saved)
    for name in ["get_cost", "get_density_cost", "get_congestion_cost"]:
        assert getattr(plc, name)() == pytest.approx(getattr(fresh, name)(), rel=1e-6, abs=1e-9), name


def test_setters_and_mutators_return_what_tilos_returns(tmp_path):
    """TILOS's plc_client_os.py (commit 20eddb6, tests/data/plc_api_golden/README.md) returns True
    from set_canvas_size and set_placement_grid and None (no return statement) from every other
    setter and mutator of the covered API: the same values here, so code that checks them behaves
    the same. (placerl returned None from the two before.)"""
    plc = placerl.PlacementCost(ARIANE)
    w, h = plc.get_canvas_width_height()
    cols, rows = plc.get_grid_num_columns_rows()
    assert plc.set_canvas_size(w, h) is True
    assert plc.set_placement_grid(cols, rows) is True
    assert plc.set_canvas_size(width=w, height=h) is True  # TILOS's argument names
    assert plc.set_placement_grid(grid_col=cols, grid_row=rows) is True
    m = plc.get_macro_indices()[0]
    hard = next(i for i in plc.get_macro_indices() if plc.is_node_hard_macro(i))
    none_returning = [
        lambda: plc.set_routes_per_micron(*plc.get_routes_per_micron()),
        lambda: plc.set_macro_routing_allocation(*plc.get_macro_routing_allocation()),
        lambda: plc.set_congestion_smooth_range(plc.get_congestion_smooth_range()),
        lambda: plc.set_overlap_threshold(plc.get_overlap_threshold()),
        lambda: plc.restore_placement(ARIANE_PLC),
        lambda: plc.save_placement(str(tmp_path / "saved.plc"), "info"),
        lambda: plc.update_node_coords(m, *plc.get_node_location(m)),
        lambda: plc.update_macro_orientation(hard, plc.get_macro_orientation(hard)),
        lambda: plc.fix_node_coord(hard),
        lambda: plc.unfix_node_coord(hard),
        lambda: plc.unplace_node(hard),
        lambda: plc.place_node(hard, plc.get_grid_cell_of_node(hard)),
        lambda: plc.unplace_all_nodes(),
        lambda: plc.create_blockage(0.0, 0.0, 1.0, 1.0, 0.5),
        lambda: plc.optimize_stdcells(False, True, False, False, False, 1.0, [2], [10.0], [1.0], [0.0]),
    ]
    for call in none_returning:
        assert call() is None
