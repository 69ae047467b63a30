#!/usr/bin/env python3
"""Scores a Circuit Training placement (.plc) through placerl's plc_client-compatible API, the way
a Circuit Training program does with plc_client.PlacementCost, and times a full evaluation
(restore_placement + get_cost + get_density_cost + get_congestion_cost: everything recomputed).

    PYTHONPATH=build/python python3 python/examples/score_plc.py \
        --netlist ../shared/datasets/chip/ariane133_ng45/netlist.pb.txt.gz \
        --plc ../shared/datasets/chip/ariane133_ng45/initial.plc --repeat 20
"""
import argparse
import sys
import time

import placerl


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--netlist", required=True, help="netlist.pb.txt(.gz)")
    ap.add_argument("--plc", required=True, help="the placement to score")
    ap.add_argument("--repeat", type=int, default=5, help="full evaluations to time (default 5)")
    a = ap.parse_args()
    if a.repeat < 1 or a.repeat > 100000:
        ap.error("--repeat must be in [1, 100000]")
    try:
        t0 = time.process_time()
        plc = placerl.PlacementCost(a.netlist)
        load = time.process_time() - t0
        times = []
        for _ in range(a.repeat):
            t = time.process_time()
            plc.restore_placement(a.plc)
            costs = (plc.get_cost(), plc.get_density_cost(), plc.get_congestion_cost())
            times.append(time.process_time() - t)
    except placerl.Error as e:
        print(f"score_plc.py: error: {e}", file=sys.stderr)
        return 1
    wl, density, congestion = costs
    times.sort()
    print(f"wirelength_cost {wl:.12g}  density_cost {density:.12g}  congestion_cost {congestion:.12g}  "
          f"proxy_cost {wl + 0.5 * density + 0.5 * congestion:.12g}")
    print(f"netlist read {load:.3f} CPU-s; full evaluation (restore + 3 costs) median {times[len(times) // 2] * 1e3:.2f} "
          f"CPU-ms over {a.repeat}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
