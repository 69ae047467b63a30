// perf-model: the TPU performance model from the command line (cost_models/tpu/).
//   run       one model + mesh + plan → step time breakdown, MFU, HBM (--json)
//   search    enumerate valid plans, rank by step time under the HBM limit
//   validate  predicted vs published measurements → table (markdown to --out)
//   bench     plan evaluations per second of the training-run evaluator
//   calibrate-host  measure this machine (LibTorch, Gloo) and write a catalogue with `host`
//   simulate  placed-graph simulator: a compute graph + op → device placement → step time,
//             per-device utilisation and peak memory, OOM (Placeto or Baechi semantics)
#include <CLI/CLI.hpp>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <limits>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "cost_models/tpu/catalog.h"
#include "cost_models/tpu/graph_training.h"
#include "cost_models/tpu/placed_graph_sim.h"
#include "cost_models/tpu/plan_search.h"
#include "cost_models/tpu/spec.h"
#include "cost_models/tpu/training_eval.h"
#include "cost_models/tpu/validation.h"
#include "datasets/util/errors.h"
#include "datasets/util/files.h"
#include "datasets/graphs/compute_graph.h"
#include "datasets/graphs/graph_spec.h"
#include "experiments/lib/cli.h"

namespace {

using namespace placerl;
using namespace placerl::perf;

nlohmann::json ToJson(const StepBreakdown& b) {
  nlohmann::json j;
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


// "round_robin" (op i → i mod d), "single" (all on 0), "blocks" (contiguous topological
// blocks of equal size) or a placement file.
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

// "plain:FLOPS,BYTES_PER_S" (every op kind at that speed) or a catalogue chip name (roofline
// of op_cost.h with the catalogue's efficiencies, in `dtype`).
SimDevice MakeSimDevice(const std::string& spec, const Catalog& catalog, double memory) {
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

}  // namespace

int main(int argc, char** argv) {
  return placerl::RunMain("perf-model", [&]() -> int {
    CLI::App app{
        "perf-model: analytical TPU/GPU performance model of sharded Transformer training.\n"
        "Models: transformer(layers=24,d_model=2048,d_ff=8192,heads=16,seq=2048,vocab=32000),\n"
        "        moe(...,num_experts=64,top_k=2) or a TransformerModel .pbtxt.\n"
        "Meshes: chip:AxBxC[,slices=N] (e.g. tpu_v5p:4x4x4, a100:8,slices=48) or a Mesh .pbtxt.\n"
        "Plans:  data=,fsdp=,tensor=,pipeline=,microbatches=,expert=,remat=none|minimal|full,\n"
        "        tensor_x= (2-D tensor parallelism: tensor_x × tensor/tensor_x),\n"
        "        param_dtype=,compute_dtype=,grad_dtype=,optimizer=adam|adafactor,\n"
        "        shard_optimizer=true,global_batch=N (sequences) or a Plan .pbtxt.\n"
        "Graphs: run --graph 'resnet(depth=50,batch=128,fused=1)' (any graph, data parallel over the\n"
        "        mesh), simulate --graph G --placement P (placed-graph simulator).\n"
        "Chips:  tpu_v2 tpu_v3 tpu_v4 tpu_v5e tpu_v5p tpu_v6e v100 a100 h100 (--catalog to override)."};
    app.require_subcommand(1);
    std::string catalog_path;
    app.add_option("--catalog", catalog_path, "hardware catalogue .pbtxt (default: embedded)");

    std::string model_spec = "transformer(layers=24,d_model=2048,d_ff=8192,heads=16,seq=2048,vocab=32000)";
    std::string mesh_spec = "tpu_v5e:16x16";
    std::string plan_spec = "fsdp=256,global_batch=512";
    bool json = false;
    auto add_inputs = [&](CLI::App* sub) {
      sub->add_option("--model", model_spec, "model string or .pbtxt")->capture_default_str();
      sub->add_option("--mesh", mesh_spec, "mesh string or .pbtxt")->capture_default_str();
      sub->add_option("--plan", plan_spec, "plan string or .pbtxt")->capture_default_str();
      sub->add_flag("--json", json, "print JSON instead of text");
    };

    CLI::App* run = app.add_subcommand("run", "evaluate one plan");
    add_inputs(run);
    std::string run_graph;
    run->add_option("--graph", run_graph,
                    "evaluate this graph (one replica's training step) data-parallel over the mesh "
                    "instead of --model: resnet(depth=50,batch=128), layered(...) or a graph file; "
                    "the plan's data (= mesh devices / pipeline), pipeline, microbatches (the graph "
                    "is one microbatch), shard_optimizer, dtypes, optimizer and "
                    "grad_reduce_after_backward apply");
    CLI::App* search = app.add_subcommand("search", "rank all valid plans by step time");
    add_inputs(search);
    int top = 10;
    search->add_option("--top", top, "how many plans to print")->capture_default_str();

    CLI::App* validate = app.add_subcommand("validate", "predicted vs published measurements");
    std::string measurements_path, out_path = "docs/perf_validation.md";
    bool fit = false, no_cv = false;
    validate->add_option("--measurements", measurements_path, "MeasurementSet .pbtxt (default: embedded)");
    validate->add_option("--out", out_path, "markdown output ('' = none)")->capture_default_str();
    validate->add_flag("--fit", fit,
                       "grid-search the global efficiency parameters first and validate with them "
                       "(prints the fitted values; the catalogue is not changed)");
    validate->add_flag("--no-held-out", no_cv,
                       "skip the leave-one-out table (each row predicted with parameters "
                       "fitted on the other rows; takes a few seconds)");

    CLI::App* infer = app.add_subcommand(
        "infer", "inference latency (prefill + decode) on a tensor-parallel layout (Pope et al.)");
    add_inputs(infer);
    double inf_batch = 1, inf_prompt = 2048, inf_generate = 64;
    std::string inf_weights = "bf16";
    bool inf_batch_kv = false;
    infer->add_option("--batch", inf_batch, "sequences")->capture_default_str();
    infer->add_option("--prompt", inf_prompt, "prompt tokens per sequence (prefill)")->capture_default_str();
    infer->add_option("--generate", inf_generate, "tokens generated per sequence")->capture_default_str();
    infer->add_option("--weights", inf_weights, "weight dtype: bf16, int8, fp8, int4")->capture_default_str();
    infer->add_flag("--batch-sharded-kv", inf_batch_kv,
                    "shard attention over the batch (multi-query models) instead of the heads");

    CLI::App* bench = app.add_subcommand("bench", "plan evaluations per second (one core)");
    add_inputs(bench);
    double seconds = 1.0;
    bench->add_option("--seconds", seconds, "how long to measure")->capture_default_str();

    CLI::App* simulate = app.add_subcommand(
        "simulate", "placed-graph simulator: graph + placement → step time, utilisation, memory");
    std::string graph_spec = "layered(ops=1000,width=100,fan_in=3,seed=1)", placement_spec = "round_robin";
    std::string preset = "baechi", device_spec = "plain:4.37e12,2.4e11", trace_path;
    int num_devices = 2;
    double memory = 0, bench_seconds = 0;
    simulate->add_option("--graph", graph_spec,
                         "graph file (docs/simulator.md) or layered(ops=,width=,fan_in=,seed=) / chain(ops=)")
        ->capture_default_str();
    simulate->add_option("--placement", placement_spec,
                         "placement file ('<op> <device>' lines) or round_robin | single | blocks")
        ->capture_default_str();
    simulate->add_option("--devices", num_devices, "number of devices")->capture_default_str()->check(CLI::Range(1, 4096));
    simulate->add_option("--preset", preset, "link and scheduling semantics: baechi | placeto")
        ->capture_default_str()->check(CLI::IsMember({"baechi", "placeto"}));
    simulate->add_option("--device", device_spec,
                         "plain:FLOPS,BYTES_PER_S (default: one K80 die) or a catalogue chip (bf16 roofline)")
        ->capture_default_str();
    simulate->add_option("--memory", memory, "bytes per device (default: unlimited for plain, HBM for chips)");
    simulate->add_option("--trace", trace_path, "write a per-op CSV trace (op,device,start_s,end_s)");
    simulate->add_option("--bench", bench_seconds, "also time repeated runs for this many seconds (ops/s)");
    simulate->add_flag("--json", json, "print JSON instead of text");
    GraphTrainingConfig gtc;
    simulate->add_option("--replicas", gtc.replicas,
                         "data-parallel replicas of the placed graph (adds a ring all-reduce of each "
                         "device's parameter gradients and the update)")
        ->capture_default_str()->check(CLI::Range(1, 1 << 20));
    simulate->add_option("--ring-bw", gtc.ring_bw, "replicas' ring: one-way bytes/s per link")->capture_default_str();
    simulate->add_option("--ring-latency", gtc.ring_hop_latency, "replicas' ring: seconds per hop")
        ->capture_default_str();

    CLI::App* calibrate = app.add_subcommand(
        "calibrate-host", "measure this machine (matmul, memory, 2-process Gloo all-reduce) → catalogue with `host`");
    std::string calib_out = "out/host_catalog.pbtxt";
    int calib_threads = 1;
    double calib_seconds = 0.3;
    calibrate->add_option("--out", calib_out, "catalogue to write (the embedded one + host)")->capture_default_str();
    calibrate->add_option("--threads", calib_threads, "LibTorch threads per process (= one host chip)")
        ->capture_default_str();
    calibrate->add_option("--seconds", calib_seconds, "time budget per probe size")->capture_default_str();

    placerl::cli::Parse(app, argc, argv);

    if (*calibrate) {
      // The LibTorch measurements live in bin/host-calibrate (perf-model stays free of LibTorch).
      std::error_code ec;
      const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
      const std::string tool = (self.parent_path() / "host-calibrate").string();
      if (ec || access(tool.c_str(), X_OK) != 0)
        throw ConfigError("calibrate-host needs " + tool + " (built when LibTorch is found: -DPLACERL_WITH_TORCH=ON)");
      const std::string t = std::to_string(calib_threads), sec = std::to_string(calib_seconds);
      std::vector<const char*> args{tool.c_str(), "--out", calib_out.c_str(), "--threads", t.c_str(),
                                    "--seconds", sec.c_str(), nullptr};
      std::fflush(nullptr);
      execv(tool.c_str(), const_cast<char* const*>(args.data()));
      throw IoError("calibrate-host: cannot run " + tool);
    }

    const Catalog catalog = LoadCatalog(catalog_path);

    if (*simulate) {
      const graphs::ComputeGraph g = graphs::GraphFromSpec(graph_spec).graph;
      const std::vector<int> placement = LoadPlacement(placement_spec, g, num_devices);
      const std::vector<SimDevice> devs(num_devices, MakeSimDevice(device_spec, catalog, memory));
      const SimConfig cfg = preset == "placeto" ? PlacetoConfig(devs) : BaechiConfig(devs);
      Simulator sim(g, cfg);
      const SimResult r = sim.Run(placement);
      const GraphTrainingResult train = EvaluateGraphTraining(&sim, g, placement, cfg, gtc);
      double ops_per_s = 0;
      long runs = 0;
      if (bench_seconds > 0) {
        const auto t0 = std::chrono::steady_clock::now();
        double elapsed = 0, sink = 0;
        while (elapsed < bench_seconds) {
          sink += sim.Run(placement).makespan;
          ++runs;
          elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        }
        ops_per_s = sink >= 0 ? static_cast<double>(g.num_ops()) * runs / elapsed : 0;
      }
      if (!trace_path.empty()) {
        std::string csv = "op,device,start_s,end_s\n";
        char buf[96];
        for (int i = 0; i < g.num_ops(); ++i) {
          std::snprintf(buf, sizeof buf, ",%d,%.9g,%.9g\n", placement[i], r.op_start[i], r.op_end[i]);
          csv += g.names[i] + buf;
        }
        WriteFileAtomic(trace_path, csv);
      }
      std::vector<int> ops_on(num_devices, 0);
      for (int d : placement) ++ops_on[d];
      if (json) {
        nlohmann::json j;
        j["ops"] = g.num_ops();
        j["edges"] = g.num_edges();
        j["preset"] = preset;
        j["makespan_s"] = r.makespan;
        j["busy_until_s"] = r.busy_until;
        j["transfers"] = r.num_transfers;
        j["bytes_transferred"] = r.bytes_transferred;
        j["oom"] = r.oom;
        j["oom_device"] = r.oom_device;
        for (int d = 0; d < num_devices; ++d)
          j["devices"].push_back({{"ops", ops_on[d]}, {"busy_s", r.busy[d]}, {"utilisation", r.utilisation[d]},
                                  {"peak_memory_bytes", r.peak_memory[d]},
                                  {"capacity_bytes", std::isfinite(cfg.devices[d].memory_capacity)
                                                         ? nlohmann::json(cfg.devices[d].memory_capacity)
                                                         : nlohmann::json(nullptr)}});
        if (bench_seconds > 0) j["ops_per_s"] = ops_per_s;
        j["data_parallel"] = {{"replicas", gtc.replicas}, {"step_s", train.step_s}, {"compute_s", train.compute_s},
                              {"allreduce_s", train.allreduce_s}, {"optimizer_s", train.optimizer_s}};
        if (r.oom) {
          const int d = r.oom_device;
          nlohmann::json live = nlohmann::json::array();
          for (const auto& t : sim.LiveAt(d, r.peak_time[d])) {
            if (live.size() == 20) break;
            live.push_back({{"op", g.names[t.op]}, {"what", t.what}, {"bytes", t.bytes}});
          }
          j["oom_report"] = {{"device", d}, {"time_s", r.peak_time[d]}, {"peak_bytes", r.peak_memory[d]},
                             {"capacity_bytes", cfg.devices[d].memory_capacity}, {"largest_live", live}};
        }
        std::cout << j.dump(2) << "\n";
      } else {
        std::printf("graph  %s: %d ops, %d edges\npreset %s, %d devices (%s)\n\n", graph_spec.c_str(),
                    g.num_ops(), g.num_edges(), preset.c_str(), num_devices, device_spec.c_str());
        std::printf("step time (last op end)   %.6g s\nbusy until (gaps, links)   %.6g s\n", r.makespan,
                    r.busy_until);
        std::printf("transfers                 %lld (%.4g bytes)\n", static_cast<long long>(r.num_transfers),
                    r.bytes_transferred);
        std::printf("training step, %d replica(s) %.6g s = graph %.6g + gradient all-reduce %.6g + update %.6g\n\n",
                    gtc.replicas, train.step_s, train.compute_s, train.allreduce_s, train.optimizer_s);
        std::printf("%6s %8s %12s %7s %14s %s\n", "device", "ops", "busy (s)", "util", "peak mem (B)", "");
        for (int d = 0; d < num_devices; ++d) {
          const bool over = r.peak_memory[d] > cfg.devices[d].memory_capacity;
          std::printf("%6d %8d %12.6g %6.1f%% %14.6g %s\n", d, ops_on[d], r.busy[d], 100 * r.utilisation[d],
                      r.peak_memory[d], over ? "OOM" : "");
        }
        for (int d = 0; d < num_devices; ++d) {
          if (!(r.peak_memory[d] > cfg.devices[d].memory_capacity)) continue;
          const auto live = sim.LiveAt(d, r.peak_time[d]);
          std::printf("\nOUT OF MEMORY on device %d: peak %.4g bytes at t = %.6g s, capacity %.4g; %zu live "
                      "tensors, largest:\n", d, r.peak_memory[d], r.peak_time[d], cfg.devices[d].memory_capacity,
                      live.size());
          for (size_t k = 0; k < live.size() && k < 10; ++k)
            std::printf("  %14.6g  %-13s %s\n", live[k].bytes, live[k].what, g.names[live[k].op].c_str());
        }
        if (bench_seconds > 0)
          std::printf("\n%ld runs in %.3g s: %.3g ops scheduled per second (one core)\n", runs, bench_seconds,
                      ops_per_s);
      }
      return r.oom ? 2 : 0;
    }

    if (*run && !run_graph.empty()) {
      const graphs::NamedGraph ng = graphs::GraphFromSpec(run_graph);
      const Mesh mesh = ParseMeshSpec(mesh_spec);
      const Plan plan = ParsePlanSpec(run->count("--plan") ? plan_spec : "");
      const PlanC p = PlanFromProto(plan);
      const GraphRunPlan gp = GraphRunPlanFromPlan(plan, ng.examples);
      const GraphRunResult r = EvaluateGraphOnMesh(ng.graph, mesh, catalog, gp);
      if (p.data > 1 && p.data != r.replicas)
        throw ConfigError("plan: data=" + std::to_string(p.data) + " but the mesh has " +
                          std::to_string(r.replicas) + " devices (one replica each)");
      if (json) {
        nlohmann::json j = {{"graph", run_graph},          {"ops", ng.graph.num_ops()},
                            {"mesh", MeshToString(mesh)},  {"replicas", r.replicas},
                            {"step_s", r.step_s},          {"compute_s", r.compute_s},
                            {"dp_comm_s", r.dp_comm_s},    {"exposed_dp_s", r.exposed_dp_s},
                            {"optimizer_s", r.optimizer_s}, {"examples_per_s", r.examples_per_s},
                            {"bubble_s", r.bubble_s},      {"pipeline_comm_s", r.pipeline_comm_s},
                            {"examples_per_s_per_chip", r.examples_per_s / r.chips},
                            {"flops_per_step", r.flops_per_step}, {"mfu", r.mfu},
                            {"hbm_bytes_per_device", r.hbm_per_device},
                            {"hbm_breakdown", {{"params", r.hbm_params}, {"grads", r.hbm_grads},
                                               {"optimizer", r.hbm_optimizer}, {"activations", r.hbm_activations}}},
                            {"hbm_capacity", r.hbm_capacity}, {"oom", r.oom}};
        std::cout << j.dump(2) << "\n";
      } else {
        std::printf("graph  %s: %d ops\nmesh   %s (%d devices, %d replicas)\n\n", run_graph.c_str(),
                    ng.graph.num_ops(), MeshToString(mesh).c_str(), r.devices, r.replicas);
        std::printf("step time        %.6g s\n  compute        %.6g s (one replica's graph × %d microbatches)\n"
                    "  pipeline comm  %.6g s\n  bubble         %.6g s (%d stages)\n"
                    "  exposed data   %.6g s (gradient %s %.6g s)\n  optimizer      %.6g s\n",
                    r.step_s, r.compute_s, gp.microbatches, r.pipeline_comm_s, r.bubble_s, gp.pipeline,
                    r.exposed_dp_s,
                    gp.shard_optimizer ? "reduce-scatter + weight all-gather" : "all-reduce",
                    r.dp_comm_s, r.optimizer_s);
        if (r.examples_per_s > 0)
          std::printf("examples/s       %.6g (%.6g per chip)\n", r.examples_per_s, r.examples_per_s / r.chips);
        std::printf("MFU              %.2f %%\nHBM per device   %.4g GiB of %.4g GiB%s\n", 100 * r.mfu,
                    r.hbm_per_device / 1073741824.0, r.hbm_capacity / 1073741824.0, r.oom ? "  ** OOM **" : "");
        std::printf("  params %.2f, grads %.2f, optimizer %.2f, activations %.2f GiB\n",
                    r.hbm_params / 1073741824.0, r.hbm_grads / 1073741824.0, r.hbm_optimizer / 1073741824.0,
                    r.hbm_activations / 1073741824.0);
      }
      return r.oom ? 2 : 0;
    }

    if (*infer) {
      const TransformerModel model = ParseModelSpec(model_spec);
      const Mesh mesh = ParseMeshSpec(mesh_spec);
      TrainingEvaluator ev(model, mesh, catalog);
      PlanC p = PlanFromProto(ParsePlanSpec(infer->count("--plan") ? plan_spec : ""));
      if (!infer->count("--plan")) p.tensor = ev.num_devices();
      InferenceQuery q;
      q.batch = inf_batch;
      q.prompt = inf_prompt;
      q.generate = inf_generate;
      Plan dt;
      SetFieldsFromString("param_dtype=" + inf_weights, "--weights", &dt);
      q.weight_dtype = dt.param_dtype();
      q.batch_sharded_kv = inf_batch_kv;
      const InferenceResult r = ev.EvaluateInference(p, q);
      if (!r.valid) throw ConfigError(r.invalid_reason);
      if (json) {
        nlohmann::json j = {{"model", ModelToString(ev.model())}, {"mesh", MeshToString(mesh)},
                            {"prefill_s", r.prefill_s},       {"decode_s", r.decode_s},
                            {"decode_step_s", r.decode_step_s}, {"prefill_comm_s", r.prefill_comm_s},
                            {"decode_comm_s", r.decode_comm_s}, {"prefill_mfu", r.prefill_mfu},
                            {"decode_mfu", r.decode_mfu},     {"hbm_weights", r.hbm_weights},
                            {"hbm_kv", r.hbm_kv},             {"hbm_total", r.hbm_total},
                            {"hbm_capacity", r.hbm_capacity}, {"oom", r.oom}};
        std::cout << j.dump(2) << "\n";
      } else {
        std::printf("model  %s\nmesh   %s (%d devices), tensor %d%s\nquery  batch %g, prompt %g, generate %g, "
                    "weights %s%s\n\n%s",
                    ModelToString(ev.model()).c_str(), MeshToString(mesh).c_str(), ev.num_devices(), p.tensor,
                    p.tensor_x > 1 ? (" as " + std::to_string(p.tensor_x) + "x" + std::to_string(p.tensor / p.tensor_x)).c_str() : "",
                    q.batch, q.prompt, q.generate, DType_Name(q.weight_dtype).c_str(),
                    q.batch_sharded_kv ? ", batch-sharded KV" : "", FormatInference(r).c_str());
      }
      return r.oom ? 2 : 0;
    }

    if (*run || *search || *bench) {
      const TransformerModel model = ParseModelSpec(model_spec);
      const Mesh mesh = ParseMeshSpec(mesh_spec);
      const Plan plan = ParsePlanSpec(plan_spec);
      TrainingEvaluator ev(model, mesh, catalog);
      PlanC base = PlanFromProto(plan);
      if (base.global_batch <= 0) throw ConfigError("plan: global_batch must be > 0");

      if (*run) {
        const StepBreakdown b = ev.Evaluate(base);
        if (json) {
          nlohmann::json j = ToJson(b);
          j["model"] = ModelToString(ev.model());
          j["mesh"] = MeshToString(mesh);
          j["plan"] = PlanToString(plan);
          j["devices"] = ev.num_devices();
          j["params"] = ev.total_params();
          std::cout << j.dump(2) << "\n";
        } else {
          std::printf("model  %s\nmesh   %s (%d devices)\nplan   %s\nparams %.4g\n\n%s",
                      ModelToString(ev.model()).c_str(), MeshToString(mesh).c_str(),
                      ev.num_devices(), PlanToString(plan).c_str(), ev.total_params(),
                      FormatBreakdown(b).c_str());
          if (!b.valid) std::printf("\n");
        }
        return b.valid ? 0 : 2;
      }
      if (*search) {
        SearchStats stats;
        const auto ranked = SearchPlans(ev, base, top, &stats);
        if (json) {
          nlohmann::json j = nlohmann::json::array();
          for (const auto& r : ranked) {
            nlohmann::json e = ToJson(r.result);
            e["plan"] = PlanToString(PlanToProto(r.plan));
            j.push_back(e);
          }
          std::cout << j.dump(2) << "\n";
          return 0;
        }
        std::printf("%ld plans enumerated, %ld valid, %ld fit in HBM\n\n", stats.enumerated,
                    stats.valid, stats.fitting);
        std::printf("%4s %5s %5s %8s %5s %5s %-7s %5s %10s %9s %7s %9s\n", "rank", "data", "fsdp",
                    "tensor", "pipe", "mb", "remat", "shOpt", "step (s)", "tokens/s", "MFU", "HBM GiB");
        int rank = 1;
        for (const auto& r : ranked) {
          const char* remat = r.plan.remat == REMAT_NONE ? "none"
                              : r.plan.remat == REMAT_MINIMAL ? "minimal" : "full";
          const std::string tensor = r.plan.tensor_x > 1 ? std::to_string(r.plan.tensor_x) + "x" +
                                                               std::to_string(r.plan.tensor / r.plan.tensor_x)
                                                         : std::to_string(r.plan.tensor);
          std::printf("%4d %5d %5d %8s %5d %5d %-7s %5s %10.4f %9.4g %6.1f%% %9.2f\n", rank++,
                      r.plan.data, r.plan.fsdp, tensor.c_str(), r.plan.pipeline,
                      r.result.microbatches, remat, r.plan.shard_optimizer ? "yes" : "no",
                      r.result.step_s, r.result.tokens_per_s, 100 * r.result.mfu,
                      r.result.hbm_total / (1024.0 * 1024 * 1024));
        }
        if (ranked.empty()) std::printf("no plan fits in HBM\n");
        return 0;
      }
      // bench: cycle through every enumerated plan so branches are realistic.
      const std::vector<PlanC> plans = EnumeratePlans(ev, base);
      if (plans.empty()) throw ConfigError("bench: no candidate plans for this model and mesh");
      long n = 0;
      double sink = 0;
      const auto t0 = std::chrono::steady_clock::now();
      double elapsed = 0;
      while (elapsed < seconds) {
        for (int i = 0; i < 1000; ++i, ++n) sink += ev.Evaluate(plans[n % plans.size()]).step_s;
        elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      }
      if (json) {
        std::cout << nlohmann::json{{"evaluations", n}, {"seconds", elapsed},
                                    {"evaluations_per_s", n / elapsed}, {"devices", ev.num_devices()},
                                    {"distinct_plans", plans.size()}}.dump(2) << "\n";
      } else {
        std::printf("%ld evaluations in %.3f s = %.0f plan evaluations/s on one core "
                    "(%d devices, %zu distinct plans; checksum %.3g)\n",
                    n, elapsed, n / elapsed, ev.num_devices(), plans.size(), sink);
      }
      return 0;
    }

    // validate
    const MeasurementSet rows = LoadMeasurements(measurements_path);
    Catalog used = catalog;
    if (fit) {
      std::string log;
      used = FitEfficiency(rows, catalog, &log);
      std::printf("%s\n\n", log.c_str());
    }
    const ValidationReport rep = Validate(rows, used);
    std::printf("%s", ReportTable(rep).c_str());
    ValidationReport held_out;
    if (!no_cv) {
      held_out = CrossValidate(rows, catalog);
      std::printf("\nheld out (leave-one-out refits): median |error| %.1f %%, worst %.1f %% (%s)\n",
                  100 * held_out.median_abs_error, 100 * held_out.worst_abs_error,
                  held_out.worst_id.c_str());
    }
    if (!out_path.empty()) {
      WriteFileAtomic(out_path, ReportMarkdown(rep, used, no_cv ? nullptr : &held_out));
      std::printf("wrote %s\n", out_path.c_str());
    }
    return 0;
  });
}
