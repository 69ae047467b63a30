#include "cost_models/tpu/perf_json.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <set>

#include "cost_models/tpu/catalog.h"
#include "cost_models/tpu/energy.h"
#include "cost_models/tpu/perf_options.h"
#include "cost_models/tpu/spec.h"
#include "datasets/graphs/graph_spec.h"
#include "datasets/util/errors.h"
#include "datasets/util/files.h"

namespace placerl::perf {

using nlohmann::json;

Catalog PerfModelCatalog(const std::string& path, bool one_matmul_constant) {
  return WithShapeModel(LoadCatalog(path), !one_matmul_constant);
}

json ModelOptionsJson(const ModelQuery& in) {
  return {{"model", in.model}, {"mesh", in.mesh}, {"plan", in.plan}, {"matmul_shapes", !in.one_matmul_constant}};
}

json StepBreakdownJson(const StepBreakdown& b) {
  json j;
  j["valid"] = b.valid;
  if (!b.valid) {
    j["invalid_reason"] = b.invalid_reason;
    return j;
  }
  j["microbatches"] = b.microbatches;
  j["step_s"] = b.step_s;
  j["breakdown_s"] = {{"compute", b.compute_s},         {"exposed_tensor", b.exposed_tp_s},
                      {"exposed_fsdp", b.exposed_fsdp_s}, {"exposed_data", b.exposed_dp_s},
                      {"exposed_expert", b.exposed_ep_s}, {"pipeline_comm", b.pipeline_comm_s},
                      {"bubble", b.bubble_s},           {"optimizer", b.optimizer_s}};
  j["tokens_per_s"] = b.tokens_per_s;
  j["mfu"] = b.mfu;
  j["hfu"] = b.hfu;
  j["model_tflops_per_chip"] = b.model_tflops_per_chip;
  j["hw_tflops_per_chip"] = b.hw_tflops_per_chip;
  j["hbm_bytes_per_device"] = {{"params", b.hbm_params},         {"grads", b.hbm_grads},
                               {"optimizer", b.hbm_optimizer},   {"activations", b.hbm_activations},
                               {"total", b.hbm_total},           {"capacity", b.hbm_capacity}};
  j["oom"] = b.oom;
  return j;
}

void ThrowInvalidPlan(const char* reason, const PlanC& p, const TrainingEvaluator& ev) {
  const TransformerModel& m = ev.model();
  throw ConfigError(std::string("plan: ") + reason + " (data " + std::to_string(p.data) + ", fsdp " +
                    std::to_string(p.fsdp) + ", tensor " + std::to_string(p.tensor) + ", tensor_x " +
                    std::to_string(p.tensor_x) + ", pipeline " + std::to_string(p.pipeline) + ", microbatches " +
                    std::to_string(p.microbatches) + ", interleave " + std::to_string(p.interleave) +
                    ", expert " + std::to_string(p.expert) + ", global_batch " +
                    std::to_string(static_cast<long long>(p.global_batch)) + "; layers " +
                    std::to_string(m.layers()) + ", heads " + std::to_string(m.heads()) + ", d_model " +
                    std::to_string(m.d_model()) + ", num_experts " + std::to_string(m.num_experts()) +
                    (m.block_size() > 0 ? ", block " + BlockToString(m) : "") + "; " +
                    std::to_string(ev.num_devices()) + " devices)");
}

// ---------------------------------------------------------------- run

TransformerRunResult EvaluateTransformerRun(const RunQuery& q, const Catalog& catalog) {
  const TransformerModel model = ParseModelSpec(q.in.model);
  const Mesh mesh = ParseMeshSpec(q.in.mesh);
  const TrainingEvaluator ev(model, mesh, catalog);
  const PlanC plan = ResolvePlan(ParsePlanSpecWithKeys(q.in.plan), ev.num_devices(), FillAxis::kFsdp);
  TransformerRunResult out;
  out.b = ev.Evaluate(plan);
  if (!out.b.valid) ThrowInvalidPlan(out.b.invalid_reason, plan, ev);
  out.plan = ResolvedPlanString(plan, out.b.microbatches);
  out.model = ModelToString(ev.model());
  out.mesh = MeshToString(mesh);
  out.devices = ev.num_devices();
  out.params = ev.total_params();
  out.options = ModelOptionsJson(q.in);
  out.options["resolved"] = {{"model", out.model}, {"mesh", out.mesh}, {"plan", out.plan}};
  return out;
}

json ToJson(const TransformerRunResult& r) {
  json j = StepBreakdownJson(r.b);
  j["options"] = r.options;
  j["model"] = r.model;
  j["mesh"] = r.mesh;
  j["plan"] = r.plan;
  j["devices"] = r.devices;
  j["params"] = r.params;
  return j;
}

GraphRunDocResult EvaluateGraphRun(const RunQuery& q, const Catalog& catalog) {
  const graphs::NamedGraph ng = graphs::GraphFromSpec(q.graph);
  const Mesh mesh = ParseMeshSpec(q.in.mesh);
  const PlanSpec spec = ParsePlanSpecWithKeys(q.in.plan);
  GraphRunDocResult out;
  out.gp = GraphRunPlanFromPlan(spec.plan, ng.examples);
  out.r = EvaluateGraphOnMesh(ng.graph, mesh, catalog, out.gp);
  // The graph is data parallel: data takes the devices the pipeline leaves (checked with the
  // numbers when written).
  const PlanC p = ResolvePlan(spec, out.r.devices, FillAxis::kData);
  if (p.data != out.r.replicas)
    throw ConfigError("plan: data=" + std::to_string(p.data) + " but the mesh has " +
                      std::to_string(out.r.replicas) + " replicas (" + std::to_string(out.r.devices) +
                      " devices / pipeline " + std::to_string(out.gp.pipeline) + ")");
  out.plan = ResolvedPlanString(p, out.gp.microbatches);
  out.graph = q.graph;
  out.mesh = MeshToString(mesh);
  out.ops = ng.graph.num_ops();
  out.options = ModelOptionsJson(q.in);
  out.options.erase("model");
  out.options["graph"] = q.graph;
  out.options["resolved"] = {{"mesh", out.mesh}, {"plan", out.plan}};
  return out;
}

json ToJson(const GraphRunDocResult& g) {
  const GraphRunResult& r = g.r;
  return {{"options", g.options},          {"graph", g.graph},
          {"ops", g.ops},                  {"mesh", g.mesh},
          {"plan", g.plan},                {"replicas", r.replicas},
          {"step_s", r.step_s},            {"compute_s", r.compute_s},
          {"dp_comm_s", r.dp_comm_s},      {"exposed_dp_s", r.exposed_dp_s},
          {"optimizer_s", r.optimizer_s},  {"examples_per_s", r.examples_per_s},
          {"bubble_s", r.bubble_s},        {"pipeline_comm_s", r.pipeline_comm_s},
          {"examples_per_s_per_chip", r.examples_per_s / r.chips},
          {"flops_per_step", r.flops_per_step}, {"mfu", r.mfu},
          {"hbm_bytes_per_device", r.hbm_per_device},
          {"hbm_breakdown", {{"params", r.hbm_params}, {"grads", r.hbm_grads},
                             {"optimizer", r.hbm_optimizer}, {"activations", r.hbm_activations}}},
          {"hbm_capacity", r.hbm_capacity}, {"oom", r.oom}};
}

// ---------------------------------------------------------------- search

SearchResult EvaluateSearch(const SearchQuery& q, const Catalog& catalog) {
  const TransformerModel model = ParseModelSpec(q.in.model);
  const Mesh mesh = ParseMeshSpec(q.in.mesh);
  const TrainingEvaluator ev(model, mesh, catalog);
  const PlanSpec spec = ParsePlanSpecWithKeys(q.in.plan);
  const PlanC base = ResolvePlan(spec, ev.num_devices(), FillAxis::kFsdp);
  // Degrees and choices written in the plan are kept; the search varies only the others.
  SearchResult out;
  out.ranked = SearchPlans(ev, base, q.top, &out.stats, &spec.keys, !q.no_schedules);
  out.fixed = spec.keys;
  out.options = ModelOptionsJson(q.in);
  out.options["top"] = q.top;
  out.options["schedules"] = !q.no_schedules;
  out.options["fixed"] = spec.keys;
  out.options["resolved"] = {{"model", ModelToString(ev.model())}, {"mesh", MeshToString(mesh)}};
  return out;
}

json ToJson(const SearchResult& s) {
  json plans = json::array();
  for (const auto& r : s.ranked) {
    json e = StepBreakdownJson(r.result);
    e["plan"] = ResolvedPlanString(r.plan, r.result.microbatches);
    plans.push_back(e);
  }
  return {{"options", s.options},
          {"enumerated", s.stats.enumerated},
          {"valid", s.stats.valid},
          {"fitting", s.stats.fitting},
          {"plans", plans}};
}

// ---------------------------------------------------------------- infer

InferResult EvaluateInfer(const InferQuery& o, const Catalog& catalog) {
  const TransformerModel model = ParseModelSpec(o.in.model);
  const Mesh mesh = ParseMeshSpec(o.in.mesh);
  const TrainingEvaluator ev(model, mesh, catalog);
  InferResult out;
  // Inference runs on a tensor layout: tensor takes the devices the written degrees leave.
  const PlanC p = ResolvePlan(ParsePlanSpecWithKeys(o.in.plan), ev.num_devices(), FillAxis::kTensor);
  InferenceQuery q;
  q.batch = static_cast<double>(o.batch);
  q.prompt = static_cast<double>(o.prompt);
  q.generate = static_cast<double>(o.generate);
  Plan dt;
  SetFieldsFromString("param_dtype=" + o.weights, "--weights", &dt);
  q.weight_dtype = dt.param_dtype();
  q.batch_sharded_kv = o.batch_sharded_kv;
  q.weight_gathered = o.layout == "wg-x" ? 1 : o.layout == "wg-xy" ? 2 : o.layout == "wg-xyz" ? 3 : 0;
  const InferenceResult r = ev.EvaluateInference(p, q);
  if (!r.valid) ThrowInvalidPlan(r.invalid_reason, p, ev);
  // energy: every chip of the mesh busy for the whole batch (prefill + decode) at its mean
  // system power, shared by the batch's requests; no idle capacity.
  json energy = nullptr;
  std::string energy_text;
  if (o.energy) {
    EnergyQuery eq;
    eq.chips = ev.num_chips();
    eq.hours = (r.prefill_s + r.decode_s) / 3600;
    std::string source = "--power-w";
    double idle_w = 0;
    if (o.power_w > 0) {
      eq.power_w = o.power_w;
      idle_w = o.power_w;  // no idle power known: the given power
    } else {
      // Prefill and decode at their own utilisation (MFU), the time-weighted mean power; idle
      // provisioned chips at P(0).
      const EnergyTable& table = DefaultEnergyTable();
      const ChipPower& cp = PowerOf(table, ev.chip().name());
      const double beta = table.power_utilisation_slope(), t = r.prefill_s + r.decode_s;
      eq.power_w = (r.prefill_s * PowerAt(cp, beta, r.prefill_mfu) + r.decode_s * PowerAt(cp, beta, r.decode_mfu)) / t;
      idle_w = PowerAt(cp, beta, 0);
      source = cp.source();
      if (cp.mean_utilisation() > 0 && beta > 0) source += ", by utilisation";
    }
    const double busy_w = eq.power_w;
    eq.power_w += o.idle_capacity * idle_w;
    eq.pue = o.pue;
    eq.grid_kg_per_kwh = o.grid;
    const EnergyResult er = EnergyOfRun(eq);
    const double wh = er.facility_mwh * 1e6 / q.batch;
    const double g = er.gross_tco2e * 1e6 / q.batch;
    energy = {{"power_w", eq.power_w}, {"busy_power_w", busy_w}, {"idle_power_w", idle_w},
              {"idle_capacity", o.idle_capacity}, {"power_source", source}, {"pue", o.pue}, {"grid_kg_per_kwh", o.grid},
              {"wh_per_request", wh}, {"gco2e_per_request", g}, {"facility_wh_batch", er.facility_mwh * 1e6}};
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "energy           %.4g Wh and %.4g gCO2e per request (%d chips x %.4g W (%s) x PUE %.3g over "
                  "%.4g s, / %lld requests; grid %.3g kg/kWh)\n",
                  wh, g, ev.num_chips(), eq.power_w, source.c_str(), o.pue, r.prefill_s + r.decode_s, o.batch, o.grid);
    energy_text = buf;
  }
  json options = ModelOptionsJson(o.in);
  options["batch"] = o.batch;
  options["prompt"] = o.prompt;
  options["generate"] = o.generate;
  options["weights"] = o.weights;
  options["batch_sharded_kv"] = o.batch_sharded_kv;
  options["layout"] = o.layout;
  if (o.energy) options["energy"] = {{"power_w", o.power_w}, {"pue", o.pue}, {"grid", o.grid}, {"idle_capacity", o.idle_capacity}};
  options["resolved"] = {{"model", ModelToString(ev.model())}, {"mesh", MeshToString(mesh)},
                         {"plan", ResolvedPlanString(p, 1)}};
  out.r = r;
  out.plan = p;
  out.query = q;
  out.model = ModelToString(ev.model());
  out.mesh = MeshToString(mesh);
  out.layout = o.layout;
  out.devices = ev.num_devices();
  out.energy = energy;
  out.energy_text = energy_text;
  out.options = options;
  return out;
}

json ToJson(const InferResult& i) {
  const InferenceResult& r = i.r;
  json j = {{"options", i.options},           {"model", i.model},
            {"mesh", i.mesh},                 {"tensor", i.plan.tensor},
            {"tensor_x", i.plan.tensor_x},    {"prefill_s", r.prefill_s},
            {"decode_s", r.decode_s},         {"decode_step_s", r.decode_step_s},
            {"prefill_comm_s", r.prefill_comm_s}, {"decode_comm_s", r.decode_comm_s},
            {"prefill_mfu", r.prefill_mfu},   {"decode_mfu", r.decode_mfu},
            {"hbm_weights", r.hbm_weights},   {"hbm_kv", r.hbm_kv},
            {"hbm_total", r.hbm_total},       {"hbm_capacity", r.hbm_capacity},
            {"oom", r.oom},                   {"layout", i.layout},
            {"gather_chips", r.gather_chips}};
  if (!i.energy.is_null()) j["energy"] = i.energy;
  return j;
}

// ---------------------------------------------------------------- simulate

json ToJson(const SimulateQuery& o) {
  if (!o.machine.empty())
    return {{"graph", o.graph}, {"placement", o.placement}, {"machine", o.machine}, {"trace", o.trace},
            {"bench_seconds", o.bench_seconds}, {"replicas", o.training.replicas}, {"ring_bw", o.training.ring_bw},
            {"ring_latency", o.training.ring_hop_latency}};
  return {{"graph", o.graph},     {"placement", o.placement}, {"preset", o.preset},
          {"device", o.device},   {"devices", o.devices},     {"memory", o.memory > 0 ? json(o.memory) : json(nullptr)},
          {"trace", o.trace},     {"bench_seconds", o.bench_seconds},
          {"replicas", o.training.replicas}, {"ring_bw", o.training.ring_bw},
          {"ring_latency", o.training.ring_hop_latency}};
}

std::vector<int> LoadPlacement(const std::string& spec, const graphs::ComputeGraph& g, int d) {
  const int n = g.num_ops();
  std::vector<int> p(n, 0);
  if (spec == "round_robin") {
    for (int i = 0; i < n; ++i) p[i] = i % d;
  } else if (spec == "single") {
  } else if (spec == "blocks") {
    for (int k = 0; k < n; ++k) p[g.topo_order[k]] = static_cast<int>(static_cast<long>(k) * d / n);
  } else {
    p = graphs::ReadPlacement(spec, g, d);
  }
  return p;
}

SimDevice MakeSimDevice(const std::string& spec, const Catalog& shaped_or_not, double memory) {
  const Catalog catalog = WithShapeModel(shaped_or_not, false);  // the simulator's op model: one constant
  if (spec.rfind("plain:", 0) == 0) {
    const std::vector<std::string> v = SplitCommaList(spec.substr(6));
    char *e1 = nullptr, *e2 = nullptr;
    const double f = v.size() == 2 ? std::strtod(v[0].c_str(), &e1) : 0;
    const double b = v.size() == 2 ? std::strtod(v[1].c_str(), &e2) : 0;
    if (v.size() != 2 || *e1 != '\0' || *e2 != '\0' || !(f > 0) || !(b > 0) || !std::isfinite(f) ||
        !std::isfinite(b))
      throw ConfigError("device: expected plain:FLOPS,BYTES_PER_S with positive numbers, got '" + spec + "'");
    return PlainDevice(f, b, memory > 0 ? memory : std::numeric_limits<double>::infinity());
  }
  const Chip& chip = FindChip(catalog, spec);
  SimDevice d;
  d.rates = MakeDeviceRates(chip, BF16, EffectiveEfficiency(catalog, chip));
  d.memory_capacity = memory > 0 ? memory : chip.hbm_bytes() / std::max(1, chip.devices_per_chip());
  return d;
}

SimulateResult EvaluateSimulate(const SimulateQuery& o, const Catalog& catalog) {
  SimulateResult out;
  out.query = o;
  out.graph = graphs::GraphFromSpec(o.graph).graph;
  const graphs::ComputeGraph& g = out.graph;
  // machine: the machine place-baseline --env device used (its devices, link and op gap), so
  // that a run's best.placement reproduces its result.json exactly; else identical devices.
  SimConfig& cfg = out.config;
  Machine& machine = out.machine;
  if (!o.machine.empty()) {
    machine = MachineFromSpec(o.machine);
    cfg = machine.sim;
  } else {
    const std::vector<SimDevice> devs(o.devices, MakeSimDevice(o.device, catalog, o.memory));
    cfg = o.preset == "placeto" ? PlacetoConfig(devs) : BaechiConfig(devs);
  }
  const int num_devices = static_cast<int>(cfg.devices.size());
  out.placement = LoadPlacement(o.placement, g, num_devices);
  const std::vector<int>& placement = out.placement;
  if (!o.machine.empty())
    for (int i = 0; i < g.num_ops(); ++i)
      if (!machine.CanRun(placement[i], g.kinds[i]))
        throw ConfigError("placement puts CPU-only op '" + g.names[i] + "' (" + g.kinds[i] + ") on " +
                          machine.device_names[placement[i]]);
  out.options = ToJson(o);
  Simulator sim(g, cfg);
  out.r = sim.Run(placement);
  const SimResult& r = out.r;
  out.train = EvaluateGraphTraining(&sim, g, placement, cfg, o.training);
  if (o.bench_seconds > 0) {
    const auto t0 = std::chrono::steady_clock::now();
    double sink = 0;
    while (out.elapsed < o.bench_seconds) {
      sink += sim.Run(placement).makespan;
      ++out.runs;
      out.elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    out.ops_per_s = sink >= 0 ? static_cast<double>(g.num_ops()) * out.runs / out.elapsed : 0;
  }
  if (!o.trace.empty()) {
    std::string csv = "op,device,start_s,end_s\n";
    char buf[96];
    for (int i = 0; i < g.num_ops(); ++i) {
      std::snprintf(buf, sizeof buf, ",%d,%.9g,%.9g\n", placement[i], r.op_start[i], r.op_end[i]);
      csv += g.names[i] + buf;
    }
    WriteFileAtomic(o.trace, csv);
  }
  out.ops_on.assign(num_devices, 0);
  for (int d : placement) ++out.ops_on[d];
  // The live tensors at the peak of every device over its capacity (the bench runs above
  // simulated the same placement, so LiveAt reads the same state).
  out.live.resize(num_devices);
  for (int d = 0; d < num_devices; ++d)
    if (r.peak_memory[d] > cfg.devices[d].memory_capacity || d == r.oom_device)
      out.live[d] = sim.LiveAt(d, r.peak_time[d]);
  return out;
}

json ToJson(const SimulateResult& s) {
  const SimResult& r = s.r;
  const SimulateQuery& o = s.query;
  const graphs::ComputeGraph& g = s.graph;
  const int num_devices = static_cast<int>(s.config.devices.size());
  json j;
  j["options"] = s.options;
  j["ops"] = g.num_ops();
  j["edges"] = g.num_edges();
  if (o.machine.empty()) {
    j["preset"] = o.preset;
  } else {
    j["machine"] = s.machine.spec;
  }
  j["makespan_s"] = r.makespan;
  j["busy_until_s"] = r.busy_until;
  j["transfers"] = r.num_transfers;
  j["bytes_transferred"] = r.bytes_transferred;
  j["oom"] = r.oom;
  j["oom_device"] = r.oom_device;
  for (int d = 0; d < num_devices; ++d)
    j["devices"].push_back({{"name", o.machine.empty() ? std::to_string(d) : s.machine.device_names[d]},
                            {"ops", s.ops_on[d]}, {"busy_s", r.busy[d]}, {"utilisation", r.utilisation[d]},
                            {"peak_memory_bytes", r.peak_memory[d]},
                            {"capacity_bytes", std::isfinite(s.config.devices[d].memory_capacity)
                                                   ? json(s.config.devices[d].memory_capacity)
                                                   : json(nullptr)}});
  if (o.bench_seconds > 0) j["ops_per_s"] = s.ops_per_s;
  j["data_parallel"] = {{"replicas", o.training.replicas}, {"step_s", s.train.step_s},
                        {"compute_s", s.train.compute_s}, {"allreduce_s", s.train.allreduce_s},
                        {"optimizer_s", s.train.optimizer_s}};
  if (r.oom) {
    const int d = r.oom_device;
    json live = json::array();
    for (const auto& t : s.live[d]) {
      if (live.size() == 20) break;
      live.push_back({{"op", g.names[t.op]}, {"what", t.what}, {"bytes", t.bytes}});
    }
    j["oom_report"] = {{"device", d}, {"time_s", r.peak_time[d]}, {"peak_bytes", r.peak_memory[d]},
                       {"capacity_bytes", s.config.devices[d].memory_capacity}, {"largest_live", live}};
  }
  return j;
}

// ---------------------------------------------------------------- by name, from a JSON object

namespace {

// Reads the keys of one options object, each once, with its type and range checked.
class OptionReader {
 public:
  OptionReader(const std::string& subcommand, const json& options) : sub_(subcommand), o_(options) {
    if (!o_.is_object()) throw ConfigError(sub_ + ": options must be an object of name = value");
  }
  void String(const char* key, std::string* v) {
    if (const json* x = Get(key)) {
      if (!x->is_string()) Bad(key, "a string");
      *v = x->get<std::string>();
    }
  }
  void Bool(const char* key, bool* v) {
    if (const json* x = Get(key)) {
      if (!x->is_boolean()) Bad(key, "true or false");
      *v = x->get<bool>();
    }
  }
  // A whole number in the option's range (perf_options.h: the binary's range and message).
  template <typename Int>
  void Integer(const char* key, Int* v) {
    if (const json* x = Get(key)) {
      if (!x->is_number_integer()) Bad(key, "a whole number");
      const OptionRange& r = PerfOptionRange(sub_, Dashed(key));
      const double n = x->is_number_unsigned() ? static_cast<double>(x->get<unsigned long long>())
                                               : static_cast<double>(x->get<long long>());
      CheckOptionValue(r, n, x->dump());
      *v = static_cast<Int>(x->get<long long>());
    }
  }
  // A number in the option's range (perf_options.h).
  void Number(const char* key, double* v) {
    if (const json* x = Get(key)) {
      if (!x->is_number()) Bad(key, "a number");
      const double d = x->get<double>();
      CheckOptionValue(PerfOptionRange(sub_, Dashed(key)), d, x->dump());
      *v = d;
    }
  }
  // One of the option's choices (perf_options.h).
  void OneOf(const char* key, std::string* v) {
    String(key, v);
    if (!Get(key, false)) return;
    CheckOptionChoice(sub_, Dashed(key), *v);
  }
  // Every key must have been read.
  void Finish() const {
    for (auto it = o_.begin(); it != o_.end(); ++it)
      if (!read_.count(it.key())) {
        std::string known;
        for (const auto& k : read_all_) known += (known.empty() ? "" : ", ") + k;
        throw ConfigError(sub_ + ": unknown option '" + it.key() + "' (options: " + known + ")");
      }
  }

 private:
  const json* Get(const char* key, bool record = true) {
    if (record) read_all_.push_back(key);
    auto it = o_.find(key);
    if (it == o_.end() || it->is_null()) {
      if (it != o_.end()) read_.insert(key);
      return nullptr;
    }
    read_.insert(key);
    return &*it;
  }
  [[noreturn]] void Bad(const char* key, const char* what) const {
    throw ConfigError(sub_ + ": --" + Dashed(key) + ": expected " + what + ", got " + o_.at(key).dump());
  }
  // The binary's spelling of an options key: idle_capacity → idle-capacity.
  static std::string Dashed(std::string key) {
    for (char& c : key)
      if (c == '_') c = '-';
    return key;
  }
  std::string sub_;
  const json& o_;
  std::set<std::string> read_;
  std::vector<std::string> read_all_;
};

void ReadModel(OptionReader& in, ModelQuery* q) {
  in.String("model", &q->model);
  in.String("mesh", &q->mesh);
  in.String("plan", &q->plan);
}


}  // namespace

json PerfModelDocument(const std::string& subcommand, const json& options, int* status) {
  OptionReader in(subcommand, options);
  std::string catalog_path;
  bool one_matmul_constant = false;
  in.String("catalog", &catalog_path);
  in.Bool("one_matmul_constant", &one_matmul_constant);
  json doc;
  int st = 0;
  if (subcommand == "run") {
    RunQuery q;
    ReadModel(in, &q.in);
    in.String("graph", &q.graph);
    in.Finish();
    q.in.one_matmul_constant = one_matmul_constant;
    const Catalog catalog = PerfModelCatalog(catalog_path, one_matmul_constant);
    if (q.graph.empty()) {
      const TransformerRunResult r = EvaluateTransformerRun(q, catalog);
      doc = ToJson(r);
      st = r.status();
    } else {
      const GraphRunDocResult r = EvaluateGraphRun(q, catalog);
      doc = ToJson(r);
      st = r.status();
    }
  } else if (subcommand == "search") {
    SearchQuery q;
    ReadModel(in, &q.in);
    in.Integer("top", &q.top);
    in.Bool("no_schedules", &q.no_schedules);
    in.Finish();
    q.in.one_matmul_constant = one_matmul_constant;
    const SearchResult r = EvaluateSearch(q, PerfModelCatalog(catalog_path, one_matmul_constant));
    doc = ToJson(r);
    st = r.status();
  } else if (subcommand == "infer") {
    InferQuery q;
    ReadModel(in, &q.in);
    in.Integer("batch", &q.batch);
    in.Integer("prompt", &q.prompt);
    in.Integer("generate", &q.generate);
    in.String("weights", &q.weights);
    in.OneOf("layout", &q.layout);
    in.Bool("batch_sharded_kv", &q.batch_sharded_kv);
    in.Bool("energy", &q.energy);
    in.Number("idle_capacity", &q.idle_capacity);
    in.Number("power_w", &q.power_w);
    in.Number("pue", &q.pue);
    in.Number("grid", &q.grid);
    in.Finish();
    q.in.one_matmul_constant = one_matmul_constant;
    const InferResult r = EvaluateInfer(q, PerfModelCatalog(catalog_path, one_matmul_constant));
    doc = ToJson(r);
    st = r.status();
  } else if (subcommand == "simulate") {
    SimulateQuery q;
    in.String("graph", &q.graph);
    in.String("placement", &q.placement);
    in.String("machine", &q.machine);
    if (options.contains("machine") && !options["machine"].is_null() && q.machine.empty())
      throw ConfigError("simulate: machine: expected a non-empty string");
    in.Integer("devices", &q.devices);
    in.OneOf("preset", &q.preset);
    in.String("device", &q.device);
    in.Number("memory", &q.memory);
    in.String("trace", &q.trace);
    in.Number("bench", &q.bench_seconds);
    in.Integer("replicas", &q.training.replicas);
    in.Number("ring_bw", &q.training.ring_bw);
    in.Number("ring_latency", &q.training.ring_hop_latency);
    in.Finish();
    if (!q.machine.empty())
      for (const char* k : {"devices", "preset", "device", "memory"})
        if (options.contains(k) && !options[k].is_null())
          throw ConfigError(std::string("simulate: ") + k + " excludes machine");
    const SimulateResult r = EvaluateSimulate(q, PerfModelCatalog(catalog_path, one_matmul_constant));
    doc = ToJson(r);
    st = r.status();
  } else {
    throw ConfigError("perf_model: unknown subcommand '" + subcommand + "' (run, search, infer, simulate)");
  }
  if (status) *status = st;
  return doc;
}

}  // namespace placerl::perf
