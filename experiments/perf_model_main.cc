// perf-model: the TPU performance model from the command line (cost_models/tpu/).
//   run       one model + mesh + plan → step time breakdown, MFU, HBM (--json)
//   search    enumerate valid plans, rank by step time under the HBM limit
//   validate  predicted vs published measurements → table (markdown to --out)
//   bench     plan evaluations per second of the training-run evaluator
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <iostream>

#include "cost_models/tpu/catalog.h"
#include "cost_models/tpu/plan_search.h"
#include "cost_models/tpu/spec.h"
#include "cost_models/tpu/training_eval.h"
#include "cost_models/tpu/validation.h"
#include "datasets/util/errors.h"
#include "datasets/util/files.h"
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

}  // namespace

int main(int argc, char** argv) {
  return placerl::RunMain("perf-model", [&]() -> int {
    CLI::App app{
        "perf-model: analytical TPU/GPU performance model of sharded Transformer training.\n"
        "Models: transformer(layers=24,d_model=2048,d_ff=8192,heads=16,seq=2048,vocab=32000),\n"
        "        moe(...,num_experts=64,top_k=2) or a TransformerModel .pbtxt.\n"
        "Meshes: chip:AxBxC[,slices=N] (e.g. tpu_v5p:4x4x4, a100:8,slices=48) or a Mesh .pbtxt.\n"
        "Plans:  data=,fsdp=,tensor=,pipeline=,microbatches=,expert=,remat=none|minimal|full,\n"
        "        param_dtype=,compute_dtype=,grad_dtype=,optimizer=adam|adafactor,\n"
        "        shard_optimizer=true,global_batch=N (sequences) or a Plan .pbtxt.\n"
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
    CLI::App* search = app.add_subcommand("search", "rank all valid plans by step time");
    add_inputs(search);
    int top = 10;
    search->add_option("--top", top, "how many plans to print")->capture_default_str();

    CLI::App* validate = app.add_subcommand("validate", "predicted vs published measurements");
    std::string measurements_path, out_path = "docs/perf_validation.md";
    bool fit = false;
    validate->add_option("--measurements", measurements_path, "MeasurementSet .pbtxt (default: embedded)");
    validate->add_option("--out", out_path, "markdown output ('' = none)")->capture_default_str();
    validate->add_flag("--fit", fit,
                       "grid-search the global efficiency parameters first and validate with them "
                       "(prints the fitted values; the catalogue is not changed)");

    CLI::App* bench = app.add_subcommand("bench", "plan evaluations per second (one core)");
    add_inputs(bench);
    double seconds = 1.0;
    bench->add_option("--seconds", seconds, "how long to measure")->capture_default_str();

    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      return app.exit(e);
    }

    const Catalog catalog = LoadCatalog(catalog_path);

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
        std::printf("%4s %5s %5s %6s %5s %5s %-7s %5s %10s %9s %7s %9s\n", "rank", "data", "fsdp",
                    "tensor", "pipe", "mb", "remat", "shOpt", "step (s)", "tokens/s", "MFU", "HBM GiB");
        int rank = 1;
        for (const auto& r : ranked) {
          const char* remat = r.plan.remat == REMAT_NONE ? "none"
                              : r.plan.remat == REMAT_MINIMAL ? "minimal" : "full";
          std::printf("%4d %5d %5d %6d %5d %5d %-7s %5s %10.4f %9.4g %6.1f%% %9.2f\n", rank++,
                      r.plan.data, r.plan.fsdp, r.plan.tensor, r.plan.pipeline,
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
    if (!out_path.empty()) {
      WriteFileAtomic(out_path, ReportMarkdown(rep, used));
      std::printf("wrote %s\n", out_path.c_str());
    }
    return 0;
  });
}
