# Sourced by the chip experiment scripts (pretrain_chip.sh, zero_shot_chip.sh).
# synthetic_design BIN WORK SEED SPEC: writes WORK/synthetic_s<SEED>/{netlist.pb.txt,initial.plc}
# with `proxy-cost --seed SEED --synthetic SPEC` unless they exist, and prints that folder;
# returns proxy-cost's status when it fails (its one-line error on stderr).
synthetic_design() {
  local bin="$1" work="$2" seed="$3" spec="$4" dir="$2/synthetic_s$3"
  mkdir -p "$dir"
  if [[ ! -f "$dir/netlist.pb.txt" ]]; then
    "$bin/proxy-cost" --seed "$seed" --synthetic "$spec" --write-netlist "$dir/netlist.pb.txt" \
      --write-plc "$dir/initial.plc" > /dev/null || return
  fi
  echo "$dir"
}
