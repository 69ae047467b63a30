#include "cost_models/tpu/machine.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>

#include "cost_models/tpu/catalog.h"
#include "datasets/proto/machine.pb.h"
#include "datasets/util/errors.h"
#include "datasets/util/files.h"

namespace placerl::perf {
namespace {

// K80 die (device_placement_notes §2.3: 13 SMs × 875 MHz × 192 × 2 = 4.37 TFLOP/s; a board
// has 2 dies sharing 480 GB/s and 24 GB [M]) — the per-die numbers perf-model simulate uses too.
constexpr double kK80Flops = 4.37e12, kK80Bandwidth = 240e9, kK80Memory = 12e9;
// Haswell-class host CPU (Exprimo's colocrl-4.json: Xeon E5 v3 650 GFLOP/s; grappler's CPU
// memory bandwidth default 32 GB/s); 128 GB of host memory is our assumption.
constexpr double kCpuFlops = 650e9, kCpuBandwidth = 32e9, kCpuMemory = 128e9;
// Baechi's PyTorch port: 8 GB GPUs minus 1.08 GB reserved (notes §2.2).
constexpr double kBaechiGpuMemory = 8e9 - 1.08e9;

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

void AddDevices(Machine* m, const std::string& prefix, const std::string& type, int count,
                const SimDevice& d) {
  for (int i = 0; i < count; ++i) {
    m->device_names.push_back(prefix + ":" + std::to_string(i));
    m->device_types.push_back(type);
    m->sim.devices.push_back(d);
  }
}

SimDevice CpuDevice() { return PlainDevice(kCpuFlops, kCpuBandwidth, kCpuMemory); }

void CheckFraction(double f) {
  if (!(f > 0 && f <= 1e6) || !std::isfinite(f))
    throw ConfigError("machine: memory_fraction must be in (0, 1e6], got " + Num(f));
}
void CheckLatency(double us) {
  if (!(us >= 0 && us <= 1e7) || !std::isfinite(us))
    throw ConfigError("machine: latency_us must be in [0, 1e7] (µs per transfer), got " + Num(us));
}
void CheckCount(const char* what, int n, int lo) {
  if (n < lo || n > 4096)
    throw ConfigError(std::string("machine: ") + what + " must be in [" + std::to_string(lo) + ", 4096], got " +
                      std::to_string(n));
}

// "a=1,b=x" → ordered map; keys must be in `defaults` (which gives the resolved values back).
std::map<std::string, std::string> ParseArgs(const std::string& name, const std::string& args,
                                             const std::vector<std::pair<std::string, std::string>>& defaults) {
  std::map<std::string, std::string> v;
  for (const auto& [k, d] : defaults) v[k] = d;
  std::map<std::string, bool> seen;
  for (const std::string& kv : SplitCommaList(args)) {
    const size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == kv.size())
      throw ConfigError("machine: expected key=value in " + name + "(...), got '" + kv + "'");
    const std::string k = kv.substr(0, eq);
    if (v.count(k) == 0) {
      std::string keys;
      for (const auto& [key, unused] : defaults) keys += (keys.empty() ? "" : ", ") + key;
      throw ConfigError("machine: unknown key '" + k + "' for " + name + " (known: " + keys + ")");
    }
    if (seen[k]) throw ConfigError("machine: key '" + k + "' given twice");
    seen[k] = true;
    v[k] = kv.substr(eq + 1);
  }
  return v;
}

double ToDouble(const std::string& key, const std::string& s) {
  char* end = nullptr;
  const double x = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || !std::isfinite(x))
    throw ConfigError("machine: " + key + " must be a number, got '" + s + "'");
  return x;
}
int ToInt(const std::string& key, const std::string& s) {
  char* end = nullptr;
  const long x = std::strtol(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || x < 0 || x > 1000000)
    throw ConfigError("machine: " + key + " must be a non-negative integer, got '" + s + "'");
  return static_cast<int>(x);
}

// Chip names may be written without the "tpu_" prefix: tpu(type=v4) = tpu_v4.
const Chip& LookUpChip(const Catalog& cat, const std::string& type) {
  for (const Chip& c : cat.chip())
    if (c.name() == type) return c;
  for (const Chip& c : cat.chip())
    if (c.name() == "tpu_" + type) return c;
  return FindChip(cat, type);  // throws, listing the known names
}

SimDevice ChipDevice(const Catalog& cat, const Chip& chip, double memory_fraction) {
  SimDevice d;
  const Efficiency eff = EffectiveEfficiency(cat, chip);
  d.rates = MakeDeviceRates(chip, BF16, eff);
  const double usable = eff.hbm_usable() > 0 ? eff.hbm_usable() : 1;
  d.memory_capacity = chip.hbm_bytes() / std::max(1, chip.devices_per_chip()) * usable * memory_fraction;
  return d;
}

}  // namespace

bool Machine::CanRun(int d, const std::string& op_kind) const {
  if (device_types[d] == "cpu") return true;
  for (const std::string& k : cpu_only_kinds)
    if (k == op_kind) return false;
  return true;
}

int Machine::FastestDevice() const {
  int best = 0;
  for (int d = 1; d < num_devices(); ++d)
    if (sim.devices[d].rates.peak_flops > sim.devices[best].rates.peak_flops) best = d;
  return best;
}

namespace {
// k80(...) and baechi(...): K80-like GPUs (per-GPU memory `gpu_memory` × fraction) + CPUs,
// with the link of the paper the preset is named after.
Machine GpuCpuMachine(const char* name, int gpus, int cpus, double memory_fraction, double latency_us,
                      double gpu_memory, SimConfig (*link)(std::vector<SimDevice>)) {
  CheckCount("gpus", gpus, 0);
  CheckCount("cpu", cpus, 0);
  CheckFraction(memory_fraction);
  CheckLatency(latency_us);
  if (gpus + cpus < 1) throw ConfigError(std::string("machine: ") + name + " needs at least one device");
  Machine m;
  m.name = name;
  m.spec = m.name + "(gpus=" + std::to_string(gpus) + ",cpu=" + std::to_string(cpus) +
           ",memory_fraction=" + Num(memory_fraction) + ",latency_us=" + Num(latency_us) + ")";
  AddDevices(&m, "gpu", "gpu", gpus, PlainDevice(kK80Flops, kK80Bandwidth, gpu_memory * memory_fraction));
  AddDevices(&m, "cpu", "cpu", cpus, CpuDevice());
  m.sim = link(m.sim.devices);
  m.sim.link.latency_s = latency_us * 1e-6;
  return m;
}
}  // namespace

Machine K80Machine(int gpus, int cpus, double memory_fraction, double latency_us) {
  return GpuCpuMachine("k80", gpus, cpus, memory_fraction, latency_us, kK80Memory, PlacetoConfig);
}

Machine BaechiMachine(int gpus, int cpus, double memory_fraction, double latency_us) {
  return GpuCpuMachine("baechi", gpus, cpus, memory_fraction, latency_us, kBaechiGpuMemory, BaechiConfig);
}

Machine ChipMachine(const std::string& type, int chips, int cpus, double memory_fraction) {
  CheckCount("chips", chips, 1);
  CheckCount("cpu", cpus, 0);
  CheckFraction(memory_fraction);
  const Catalog& cat = DefaultCatalog();
  const Chip& chip = LookUpChip(cat, type);
  const bool is_tpu = chip.name().rfind("tpu", 0) == 0;
  Machine m;
  m.name = chip.name();
  const int per_chip = std::max(1, chip.devices_per_chip());
  if (is_tpu) {
    m.spec = "tpu(type=" + type + ",chips=" + std::to_string(chips) + ",cpu=" + std::to_string(cpus) +
             ",memory_fraction=" + Num(memory_fraction) + ")";
    AddDevices(&m, chip.name(), "tpu", chips * per_chip, ChipDevice(cat, chip, memory_fraction));
  } else {
    m.spec = "gpu(type=" + type + ",gpus=" + std::to_string(chips) + ",cpu=" + std::to_string(cpus) +
             ",memory_fraction=" + Num(memory_fraction) + ")";
    AddDevices(&m, "gpu", "gpu", chips * per_chip, ChipDevice(cat, chip, memory_fraction));
  }
  AddDevices(&m, "cpu", "cpu", cpus, CpuDevice());
  SimConfig c;
  c.devices = m.sim.devices;
  // One link model for every pair: a torus neighbour link (TPU) or the switch's per-GPU
  // bandwidth (all of a GPU's NVLinks), with the catalogue's hop latency; send and receive share
  // one channel per device as in Baechi.
  const Ici& ici = chip.ici();
  const bool switched = ici.topology() == SWITCHED;
  c.link.bandwidth = ici.link_bw_one_way() * (switched ? std::max(1, ici.links_per_chip()) : 1);
  if (!(c.link.bandwidth > 0)) c.link.bandwidth = 1e10;
  c.link.latency_s = ici.hop_latency_s();
  c.link.contention = Contention::kSharedChannel;
  m.sim = c;
  return m;
}

Machine ParseMachineText(const std::string& text, const std::string& label) {
  MachineConfig cfg;
  ParseTextProto(text, label, &cfg);
  auto fail = [&](const std::string& what) { throw ParseError(label, 0, what); };
  if (cfg.device_size() == 0) fail("a machine needs at least one `device { ... }`");
  Machine m;
  m.spec = label;
  m.name = cfg.name().empty() ? "machine" : cfg.name();
  const Catalog& cat = DefaultCatalog();
  for (int i = 0; i < cfg.device_size(); ++i) {
    const MachineDeviceConfig& dc = cfg.device(i);
    const std::string where = "device " + std::to_string(i + 1) + " ('" + dc.name() + "')";
    if (dc.name().empty()) fail(where + ": name is empty");
    const std::string type = dc.type().empty() ? "gpu" : dc.type();
    if (type != "cpu" && type != "gpu" && type != "tpu") fail(where + ": type must be cpu, gpu or tpu, got '" + type + "'");
    if (dc.count() < 0 || dc.count() > 4096) fail(where + ": count must be in [0, 4096]");
    const bool plain = dc.flops_per_s() != 0 || dc.bytes_per_s() != 0;
    if (plain == !dc.chip().empty()) fail(where + ": give either chip or flops_per_s and bytes_per_s");
    if (!(dc.memory_bytes() >= 0) || !std::isfinite(dc.memory_bytes())) fail(where + ": memory_bytes must be >= 0");
    SimDevice d;
    if (plain) {
      if (!(dc.flops_per_s() > 0) || !(dc.bytes_per_s() > 0) || !std::isfinite(dc.flops_per_s()) ||
          !std::isfinite(dc.bytes_per_s()))
        fail(where + ": flops_per_s and bytes_per_s must both be positive");
      if (!(dc.launch_s() >= 0) || !std::isfinite(dc.launch_s())) fail(where + ": launch_s must be >= 0");
      d = PlainDevice(dc.flops_per_s(), dc.bytes_per_s(),
                      dc.memory_bytes() > 0 ? dc.memory_bytes() : std::numeric_limits<double>::infinity());
      d.rates.launch = dc.launch_s();
    } else {
      const Chip* chip = nullptr;
      for (const Chip& c : cat.chip())
        if (c.name() == dc.chip()) chip = &c;
      if (!chip) {
        std::string names;
        for (const Chip& c : cat.chip()) names += (names.empty() ? "" : ", ") + c.name();
        fail(where + ": unknown chip '" + dc.chip() + "' (known: " + names + ")");
      }
      d = ChipDevice(cat, *chip, 1);
      if (dc.memory_bytes() > 0) d.memory_capacity = dc.memory_bytes();
    }
    const int count = std::max(1, dc.count());
    if (m.sim.devices.size() + count > 4096) fail("more than 4096 devices");
    for (int k = 0; k < count; ++k) {
      m.device_names.push_back(dc.count() == 0 ? dc.name() : dc.name() + ":" + std::to_string(k));
      m.device_types.push_back(type);
      m.sim.devices.push_back(d);
    }
  }
  for (size_t a = 0; a < m.device_names.size(); ++a)
    for (size_t b = a + 1; b < m.device_names.size(); ++b)
      if (m.device_names[a] == m.device_names[b]) fail("two devices are named '" + m.device_names[a] + "'");
  const MachineLinkConfig& l = cfg.link();
  std::vector<SimDevice> devs = m.sim.devices;
  if (l.preset() == "placeto") {
    m.sim = PlacetoConfig(devs);
  } else if (l.preset() == "baechi") {
    m.sim = BaechiConfig(devs);
  } else if (l.preset().empty()) {
    m.sim = SimConfig{};
    m.sim.devices = devs;
  } else {
    fail("link.preset must be placeto, baechi or empty, got '" + l.preset() + "'");
  }
  auto non_negative = [&](const char* what, double v) {
    if (!(v >= 0) || !std::isfinite(v)) fail(std::string("link.") + what + " must be >= 0");
    return v;
  };
  if (l.has_bandwidth()) {
    if (!(l.bandwidth() > 0) || !std::isfinite(l.bandwidth())) fail("link.bandwidth must be > 0");
    m.sim.link.bandwidth = l.bandwidth();
  }
  if (l.has_latency_s()) m.sim.link.latency_s = non_negative("latency_s", l.latency_s());
  if (l.has_bus_hold_s()) m.sim.link.bus_hold_s = non_negative("bus_hold_s", l.bus_hold_s());
  if (l.has_op_gap_s()) m.sim.op_gap_s = non_negative("op_gap_s", l.op_gap_s());
  if (l.has_contention()) {
    if (l.contention() == "sender_bus") {
      m.sim.link.contention = Contention::kSenderBus;
    } else if (l.contention() == "shared_channel") {
      m.sim.link.contention = Contention::kSharedChannel;
    } else {
      fail("link.contention must be sender_bus or shared_channel, got '" + l.contention() + "'");
    }
  }
  for (const std::string& k : cfg.cpu_only_kind()) m.cpu_only_kinds.push_back(k);
  if (!m.cpu_only_kinds.empty()) {
    bool has_cpu = false;
    for (const std::string& t : m.device_types) has_cpu |= t == "cpu";
    if (!has_cpu) fail("cpu_only_kind is given but the machine has no device of type cpu");
  }
  return m;
}

Machine MachineFromSpec(const std::string& spec) {
  const size_t open = spec.find('(');
  const std::string name = spec.substr(0, open);
  const bool call = open != std::string::npos && !spec.empty() && spec.back() == ')';
  const std::string args = call ? spec.substr(open + 1, spec.size() - open - 2) : "";
  if (name == "k80" || name == "baechi") {
    if (!call && spec != name) throw ConfigError("machine: expected " + name + "(k=v,...), got '" + spec + "'");
    const bool k80 = name == "k80";
    auto v = ParseArgs(name, args, {{"gpus", "4"}, {"cpu", k80 ? "1" : "0"}, {"memory_fraction", "1"},
                                    {"latency_us", Num(k80 ? kK80LatencyUs : kBaechiLatencyUs)}});
    const int gpus = ToInt("gpus", v["gpus"]), cpus = ToInt("cpu", v["cpu"]);
    const double fraction = ToDouble("memory_fraction", v["memory_fraction"]);
    const double latency_us = ToDouble("latency_us", v["latency_us"]);
    return k80 ? K80Machine(gpus, cpus, fraction, latency_us) : BaechiMachine(gpus, cpus, fraction, latency_us);
  }
  if (name == "tpu") {
    if (!call && spec != name) throw ConfigError("machine: expected tpu(type=v4,chips=4), got '" + spec + "'");
    auto v = ParseArgs(name, args, {{"type", "v4"}, {"chips", "4"}, {"cpu", "0"}, {"memory_fraction", "1"}});
    return ChipMachine(v["type"], ToInt("chips", v["chips"]), ToInt("cpu", v["cpu"]),
                       ToDouble("memory_fraction", v["memory_fraction"]));
  }
  if (name == "gpu") {
    if (!call && spec != name) throw ConfigError("machine: expected gpu(type=a100,gpus=8), got '" + spec + "'");
    auto v = ParseArgs(name, args, {{"type", "a100"}, {"gpus", "8"}, {"cpu", "0"}, {"memory_fraction", "1"}});
    Machine m = ChipMachine(v["type"], ToInt("gpus", v["gpus"]), ToInt("cpu", v["cpu"]),
                            ToDouble("memory_fraction", v["memory_fraction"]));
    if (m.device_types[0] != "gpu") throw ConfigError("machine: gpu(type=" + v["type"] + ") is a TPU; use tpu(type=...)");
    return m;
  }
  if (spec.empty()) throw ConfigError("machine: empty spec (k80(gpus=4), baechi(gpus=4), tpu(type=v4,chips=4), gpu(type=a100,gpus=8) or a .pbtxt file)");
  if (call) throw ConfigError("machine: unknown preset '" + name + "' (k80, baechi, tpu, gpu, or a .pbtxt file)");
  return ParseMachineText(ReadFile(spec), spec);
}

std::string DescribeMachine(const Machine& m) {
  std::string out;
  char buf[256];
  for (int d = 0; d < m.num_devices(); ++d) {
    const SimDevice& s = m.sim.devices[d];
    const double cap = s.memory_capacity;
    std::snprintf(buf, sizeof buf, "%-10s %-4s %8.4g TFLOP/s %8.4g GB/s  memory %s\n", m.device_names[d].c_str(),
                  m.device_types[d].c_str(), s.rates.peak_flops / 1e12, s.rates.hbm_bw / 1e9,
                  std::isfinite(cap) ? (Num(cap / 1e9) + " GB").c_str() : "unlimited");
    out += buf;
  }
  std::snprintf(buf, sizeof buf, "link       %.4g GB/s, latency %.4g us, %s, bus hold %.4g us, op gap %.4g us\n",
                m.sim.link.bandwidth / 1e9, m.sim.link.latency_s * 1e6,
                m.sim.link.contention == Contention::kSenderBus ? "sender bus" : "shared channel",
                m.sim.link.bus_hold_s * 1e6, m.sim.op_gap_s * 1e6);
  out += buf;
  return out;
}

}  // namespace placerl::perf
