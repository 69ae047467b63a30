#include "experiments/lib/perf_model_cli.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <vector>

#include "cost_models/tpu/catalog.h"
#include "cost_models/tpu/perf_options.h"
#include "datasets/util/errors.h"
#include "experiments/lib/cli.h"

namespace placerl::perf {

const char* const kPerfModelDescription =
    "perf-model: analytical TPU/GPU performance model of sharded Transformer training.\n"
    "Models: transformer(layers=24,d_model=2048,d_ff=8192,heads=16,seq=2048,vocab=32000) (the\n"
    "        defaults of every key not written), moe(...,num_experts=64,top_k=2) or a\n"
    "        TransformerModel .pbtxt (same defaults). Heterogeneous (Brainformer) blocks:\n"
    "        transformer(layers=4,d_model=1024,block=attn:h16+moe:e64:k2:cf1.25+ffn:r4) =\n"
    "        `layers` repetitions of the block; sub-layers attn[:h:kv:hd], ffn[:r|:f],\n"
    "        moe[:r|:f][:e][:k|:ec][:cf] (ec = expert-choice gating; docs/perf_model.md).\n"
    "        dropout=true|false (default true; false: no dropout masks and no dropped-out\n"
    "        attention scores in the activations — memory only; printed only when false).\n"
    "Meshes: chip:AxBxC[,slices=N] (e.g. tpu_v5p:4x4x4, a100:8,slices=48) or a Mesh .pbtxt;\n"
    "        at most 1,048,576 devices.\n"
    "Plans:  data=,fsdp=,tensor=,pipeline=,microbatches=,expert=,\n"
    "        remat=none|minimal|selective|full|save_qkvo (save_qkvo: q, k, v, context and\n"
    "        out-projection kept, the FFN input projections recomputed; AXLearn),\n"
    "        tensor_x= (2-D tensor parallelism: tensor_x × tensor/tensor_x), interleave=,\n"
    "        param_dtype=,compute_dtype=,grad_dtype=,optimizer=adam|adafactor,\n"
    "        shard_optimizer=true,global_batch=N (sequences, default 512) or a Plan .pbtxt.\n"
    "        Degrees not written are 1, except one that takes the devices the others leave:\n"
    "        fsdp (run, search, bench), tensor (infer), data (run --graph).\n"
    "Graphs: run --graph 'resnet(depth=50,batch=128,fused=1)' (any graph, data parallel over the\n"
    "        mesh), simulate --graph G --placement P (placed-graph simulator).\n"
    "Chips:  tpu_v2 tpu_v3 tpu_v4 tpu_v5e tpu_v5p tpu_v6e v100 a100 h100 (--catalog to override).\n"
    "Exit:   0 done, 1 error, 2 ran but infeasible (out of memory, no plan fits).";

CLI::Validator PerfRange(const char* subcommand, const char* option) {
  const OptionRange& r = PerfOptionRange(subcommand, option);
  return CLI::Validator(
      [&r](std::string& s) -> std::string {
        CheckOptionText(r, s);  // throws the library's ConfigError
        return std::string();
      },
      r.Description());
}

CLI::Validator PerfChoice(const char* subcommand, const char* option) {
  const std::string sub = subcommand, opt = option;
  return CLI::Validator(
      [sub, opt](std::string& s) -> std::string {
        CheckOptionChoice(sub, opt, s);  // throws the library's ConfigError
        return std::string();
      },
      ChoicesDescription(PerfOptionChoices(subcommand, option)));
}

namespace {

namespace cli = placerl::cli;

void AddModelInputs(CLI::App* sub, ModelQuery* in, OutputFlags* flags, bool with_json = true) {
  sub->add_option("--model", in->model, "model string or .pbtxt (keys not written take the defaults of perf-model --help)")
      ->capture_default_str();
  sub->add_option("--mesh", in->mesh, "mesh string or .pbtxt")->capture_default_str();
  sub->add_option("--plan", in->plan, "plan string or .pbtxt (keys not written take the defaults of perf-model --help)");
  if (with_json) sub->add_flag("--json", flags->json, "print one JSON document (with the resolved options)");
  sub->add_flag("--verbose", flags->verbose, "print the resolved options first");
}

void AddRun(CLI::App* app, PerfModelCommandLine* c) {
  CLI::App* run = app->add_subcommand("run", "evaluate one plan (exit 2 when it does not fit in HBM)");
  AddModelInputs(run, &c->run.in, &c->run_flags);
  run->add_option("--graph", c->run.graph,
                  "evaluate this graph (one replica's training step) data-parallel over the mesh "
                  "instead of --model: resnet(depth=50,batch=128), layered(...) or a graph file; "
                  "the plan's data (= mesh devices / pipeline), pipeline, microbatches (the graph "
                  "is one microbatch), shard_optimizer, dtypes, optimizer and "
                  "grad_reduce_after_backward apply");
  c->run_cmd = run;
}

void AddSearch(CLI::App* app, PerfModelCommandLine* c) {
  CLI::App* search = app->add_subcommand(
      "search", "rank all valid plans by step time; keys written in --plan stay fixed (exit 2: none fits)");
  AddModelInputs(search, &c->search.in, &c->search_flags);
  search->add_option("--top", c->search.top, "how many plans to print")
      ->capture_default_str()->check(PerfRange("search", "top"));
  search->add_flag("--no-schedules", c->search.no_schedules,
                   "enumerate remat none/minimal/full and the --plan's pipeline schedule only (default: also "
                   "remat=selective, and for pipelines schedule=gpipe and interleaved 1F1B with interleave=2 "
                   "and 4 where the layers divide into pipeline·interleave chunks; about 4x the plans: 2,967 → 11,596 for the default model on tpu_v5e:16x16)");
  c->search_cmd = search;
}

void AddValidate(CLI::App* app, PerfModelCommandLine* c) {
  CLI::App* validate = app->add_subcommand("validate", "predicted vs published measurements");
  validate->add_option("--measurements", c->validate.measurements, "MeasurementSet .pbtxt (default: embedded)");
  validate->add_option("--out", c->validate.out,
                       "also write the markdown page here (default: none; docs/perf_model.md "
                       "regenerates docs/perf_validation.md with --out docs/perf_validation.md)");
  validate->add_flag("--fit", c->validate.fit,
                     "grid-search the global efficiency parameters first and validate with them "
                     "(prints the fitted values; the catalogue is not changed)");
  validate->add_flag("--no-held-out", c->validate.no_held_out,
                     "skip the leave-one-out table (each row predicted with parameters "
                     "fitted on the other rows) and the leave-one-paper-out table (each paper's "
                     "rows predicted with parameters fitted on the other papers' rows; a chip "
                     "measured only by the held-out paper takes the median matmul efficiency of "
                     "the fitted chips); together a few seconds");
  validate->add_option("--lopo-prior", c->validate.lopo_prior,
                       "leave-one-paper-out: the matmul efficiency of a chip measured only by the held-out paper — "
                       "global (the median of all fitted chips') or vendor (the median of the fitted chips of its "
                       "vendor: TPU or GPU; global when there is none) or era (the median of the fitted chips "
                       "measured by the papers closest in publication year, the year in the paper's name: a "
                       "software-stack generation)")
      ->capture_default_str()->check(PerfChoice("validate", "lopo-prior"));
  validate->add_flag("--json", c->validate_flags.json, "print one JSON document (rows, errors, options)");
  validate->add_flag("--verbose", c->validate_flags.verbose, "print the resolved options first");
  c->validate_cmd = validate;
}

void AddInfer(CLI::App* app, PerfModelCommandLine* c) {
  CLI::App* infer = app->add_subcommand(
      "infer", "inference latency (prefill + decode) on a tensor-parallel layout (Pope et al.)");
  AddModelInputs(infer, &c->infer.in, &c->infer_flags);
  infer->add_option("--batch", c->infer.batch, "sequences")
      ->capture_default_str()->check(PerfRange("infer", "batch"));
  infer->add_option("--prompt", c->infer.prompt, "prompt tokens per sequence (prefill)")
      ->capture_default_str()->check(PerfRange("infer", "prompt"));
  infer->add_option("--generate", c->infer.generate, "tokens generated per sequence")
      ->capture_default_str()->check(PerfRange("infer", "generate"));
  infer->add_option("--weights", c->infer.weights, "weight dtype: bf16, int8, fp8, int4")->capture_default_str();
  infer->add_option("--layout", c->infer.layout,
                    "ws: the plan's weight-stationary tensor layout (1-D, or 2-D with tensor_x); wg-x, wg-xy, "
                    "wg-xyz: Pope et al.'s weight-gathered layouts - each layer's weights all-gathered over the "
                    "chips of the mesh's first 1, 2, 3 axes (N), the tokens split N-way, the other chips keeping "
                    "1-D stationary shards; assumed: the gather is exposed beyond tp_overlap x compute, no "
                    "prefetch of the next layer's weights; for large-batch prefill")
      ->capture_default_str()
      ->check(PerfChoice("infer", "layout"));
  infer->add_flag("--batch-sharded-kv", c->infer.batch_sharded_kv,
                  "shard attention over the batch (multi-query models) instead of the heads");
  infer->add_flag("--energy", c->infer.energy,
                  "also Wh and gCO2e per request: every chip busy for prefill + decode at its system power "
                  "at the phase's utilisation (MFU; P(u) = P̄·(1 + β·(u − ū)) from the energy table, a fit "
                  "[D] — or a flat --power-w), + --idle-capacity idle chips at P(0), x PUE, shared by the batch");
  infer->add_option("--idle-capacity", c->infer.idle_capacity,
                    "with --energy: idle provisioned chips per busy chip, drawing idle power P(0) (0..10; "
                    "the Gemini breakdown [S] puts idle machines at 10 % of a prompt's energy)")
      ->capture_default_str()->check(PerfRange("infer", "idle-capacity"));
  infer->add_option("--power-w", c->infer.power_w, "with --energy: system power per chip, W")
      ->check(PerfRange("infer", "power-w"));
  infer->add_option("--pue", c->infer.pue, "with --energy: data-centre PUE")->capture_default_str()->check(PerfRange("infer", "pue"));
  infer->add_option("--grid", c->infer.grid, "with --energy: grid intensity, kgCO2e/kWh")
      ->capture_default_str()->check(PerfRange("infer", "grid"));
  c->infer_cmd = infer;
}

void AddBench(CLI::App* app, PerfModelCommandLine* c) {
  CLI::App* bench = app->add_subcommand("bench", "plan evaluations per second (one core)");
  AddModelInputs(bench, &c->bench.in, &c->bench_flags);
  bench->add_option("--seconds", c->bench.seconds, "how long to measure")
      ->capture_default_str()->check(PerfRange("bench", "seconds"));
  c->bench_cmd = bench;
}

void AddMlperf(CLI::App* app, PerfModelCommandLine* c) {
  CLI::App* mlperf = app->add_subcommand(
      "mlperf", "MLPerf time to train, predicted vs published, for the MLPerf configurations of the notes");
  mlperf->add_flag("--json", c->mlperf_flags.json, "print one JSON document (with the options)");
  mlperf->add_flag("--verbose", c->mlperf_flags.verbose, "print the options first");
  mlperf->add_option("--out", c->mlperf.out,
                     "also write the markdown table here (e.g. docs/perf_mlperf.md). Published (ResNet-50 v0.6): MLPerf's "
                     "benchmark result from the five runs (fastest and slowest dropped, the mean of the other three), "
                     "result_0 next to it. Assumptions: epochs to target "
                     "from the logs (convergence is not predicted) x 1,281,167 ImageNet images / the graph run's "
                     "throughput; evaluation and first-epoch overhead not modelled; initialisation outside the "
                     "timed run; 4096-chip v3 multipod runs not evaluated (beyond the catalogue's v3 ICI domain)");
  c->mlperf_cmd = mlperf;
}

void AddFailures(CLI::App* app, PerfModelCommandLine* c) {
  CLI::App* failures = app->add_subcommand(
      "failures",
      "step time and throughput per chip of one run with 0..--max-failed failed chips on a one-slice "
      "torus/mesh (Mesh failed=N). Assumes the holes leave the job, each in its own row and column, and "
      "every ICI ring through a hole is routed around it (no wraparound, half the axis bandwidth, +2 "
      "hops per hole); with --model the fill axis (fsdp) takes the healthy devices");
  AddModelInputs(failures, &c->failures.in, &c->failures_flags);
  failures->add_option("--graph", c->failures.graph, "a graph run (data parallel over the healthy devices) instead of --model");
  failures->add_option("--max-failed", c->failures.max_failed, "failed chips 0..N")
      ->capture_default_str()->check(PerfRange("failures", "max-failed"));
  failures->add_option("--out", c->failures.out, "also write the markdown table here (e.g. docs/perf_failures.md)");
  c->failures_cmd = failures;
}

void AddDiloco(CLI::App* app, PerfModelCommandLine* c) {
  CLI::App* diloco = app->add_subcommand(
      "diloco",
      "DiLoCo islands: M islands (this model/mesh/plan each) run H inner steps, then all-reduce "
      "the outer gradient over the inter-island network; mean step time, traffic and break-even H "
      "vs synchronous data parallelism over the same network. Assumes a ring all-reduce between "
      "islands at --dcn-gbps per island (default: the catalogue's DCN of the island's chips x "
      "dcn_bw efficiency) and the chip's DCN latency per ring step; convergence per step is not "
      "modelled");
  AddModelInputs(diloco, &c->diloco.in, &c->diloco_flags);
  diloco->add_option("--islands", c->diloco.islands, "comma list of island counts M (2..1e6)")->capture_default_str();
  diloco->add_option("--inner-steps", c->diloco.inner_steps, "comma list of H (1..1e9)")->capture_default_str();
  diloco->add_option("--dcn-gbps", c->diloco.dcn_gbps, "inter-island bandwidth per island, Gbit/s")
      ->check(PerfRange("diloco", "dcn-gbps"));
  diloco->add_option("--outer", c->diloco.outer, "outer-gradient format on the wire (fp32, bf16, e2m1, ...)")
      ->capture_default_str();
  diloco->add_option("--overlap-steps", c->diloco.overlap_steps,
                     "inner steps the outer all-reduce runs under (streaming / eager DiLoCo)")
      ->capture_default_str()->check(PerfRange("diloco", "overlap-steps"));
  diloco->add_option("--straggler", c->diloco.straggler,
                     "one island's inner step is this many times the others' (1..100; with it or "
                     "--failed-islands a second table: synchronous DiLoCo and DP wait for the slowest island, "
                     "Decoupled DiLoCo runs every island at its own pace, each paying its own exposed outer "
                     "sync per H steps)")
      ->capture_default_str()->check(PerfRange("diloco", "straggler"));
  diloco->add_option("--failed-islands", c->diloco.failed_islands,
                     "islands lost for good (0..M-1): every variant continues on the survivors (outer ring of "
                     "M-F); decoupled loses each failed island's steps since its last push (H/2 on average), "
                     "the synchronous variants stop --restart-s per failure, synchronous DiLoCo also loses H/2")
      ->capture_default_str()->check(PerfRange("diloco", "failed-islands"));
  diloco->add_option("--restart-s", c->diloco.restart_s,
                     "seconds the synchronous variants stop per failure (assumed: detection, restart, reload of "
                     "the last checkpoint; not from a paper)")
      ->capture_default_str()->check(PerfRange("diloco", "restart-s"));
  diloco->add_option("--out", c->diloco.out, "also write the markdown table here (e.g. docs/perf_diloco.md)");
  c->diloco_cmd = diloco;
}

void AddFormats(CLI::App* app, PerfModelCommandLine* c) {
  CLI::App* formats = app->add_subcommand(
      "formats",
      "HBM and step time of one plan across eXmY number formats (bytes per value = bits/8 for the "
      "chosen tensors: HBM, HBM traffic, their collectives). Assumes values are decoded to the "
      "plan's compute dtype before the matmuls: no compute speed-up from the format (an 8-bit "
      "rate needs compute_dtype=int8/fp8 in --plan); an fp32 master copy with weights < 32 bits");
  AddModelInputs(formats, &c->formats.in, &c->formats_flags);
  formats->add_option("--formats", c->formats.formats,
                      "comma list: eXmY (1+X+Y bits), fp32, bf16, fp16, fp8, int8, int4 or a width 2..32")
      ->capture_default_str();
  formats->add_option("--tensors", c->formats.tensors, "which tensors take the format: weights, grads, optimizer, activations")
      ->capture_default_str();
  formats->add_option("--out", c->formats.out, "also write the markdown table here (e.g. docs/perf_formats.md)");
  c->formats_cmd = formats;
}

void AddEnergy(CLI::App* app, PerfModelCommandLine* c) {
  CLI::App* energy = app->add_subcommand(
      "energy",
      "energy and CO2e of a training run (Patterson et al. 2021): MWh = hours x accelerators x P "
      "x PUE, tCO2e = MWh x grid kgCO2e/kWh. Assumes P = the mean measured SYSTEM power per "
      "accelerator (chip + HBM + host share + network; Patterson Table 3 for v2/v3/P100/V100, "
      "[S] for v4; none published for A100/H100/v5+: give --power-w), scaled with the run's "
      "hardware utilisation u where known: P(u) = P̄·(1 + β·(u − ū)) = idle + (peak − idle)·u, "
      "ū the mean utilisation of the runs P̄ was measured on, β one slope fitted on Patterson's "
      "runs (no idle power is published: idle and peak are the fit's); u = --utilisation, or "
      "the plan's HFU with --tokens; unknown u or a chip without ū: P̄. No embodied emissions. "
      "Time from --days/--hours, or from --tokens with the evaluator's predicted tokens/s for "
      "--model/--mesh/--plan. --validate: the published runs (docs/perf_energy.md)");
  AddModelInputs(energy, &c->energy.in, &c->energy_flags);
  energy->add_option("--chip", c->energy.chip, "accelerator (a power-table chip: tpu_v2, tpu_v3, tpu_v4, p100, v100)");
  energy->add_option("--chips", c->energy.chips, "accelerators")->check(PerfRange("energy", "chips"));
  energy->add_option("--days", c->energy.days, "wall-clock days")->check(PerfRange("energy", "days"));
  energy->add_option("--hours", c->energy.hours, "wall-clock hours")->check(PerfRange("energy", "hours"));
  energy->add_option("--tokens", c->energy.tokens,
                     "training tokens: time = tokens / predicted tokens/s of --model/--mesh/--plan")
      ->check(PerfRange("energy", "tokens"));
  energy->add_option("--pue", c->energy.pue, "data-centre power usage effectiveness")
      ->capture_default_str()->check(PerfRange("energy", "pue"));
  energy->add_option("--grid", c->energy.grid, "gross grid intensity, kgCO2e/kWh (default: US average 2020)")
      ->capture_default_str()->check(PerfRange("energy", "grid"));
  energy->add_option("--net-grid", c->energy.net_grid,
                     "net intensity after carbon-free-energy purchases, kgCO2e/kWh (default: = --grid)")
      ->check(PerfRange("energy", "net-grid"));
  energy->add_option("--power-w", c->energy.power_w, "mean system power per accelerator, W (default: the power table)")
      ->check(PerfRange("energy", "power-w"));
  energy->add_option("--utilisation", c->energy.utilisation,
                     "with --chip/--chips: the run's hardware utilisation (achieved ÷ peak FLOP/s, 0..1) "
                     "for the power model (default: unknown → the table's mean power)")
      ->check(PerfRange("energy", "utilisation"));
  energy->add_option("--idle-capacity", c->energy.idle_capacity,
                     "idle provisioned accelerators per busy one, each at idle power P(0) of the power model "
                     "(0..10; with --power-w: that power)")
      ->capture_default_str()->check(PerfRange("energy", "idle-capacity"));
  energy->add_option("--energy-table", c->energy.table, "EnergyTable .pbtxt (default: embedded)");
  energy->add_flag("--validate", c->energy.validate, "predict the published runs' MWh and tCO2e");
  energy->add_option("--out", c->energy.out, "with --validate: also write the markdown page here");
  c->energy_cmd = energy;
}

void AddSimulate(CLI::App* app, PerfModelCommandLine* c) {
  CLI::App* simulate = app->add_subcommand(
      "simulate", "placed-graph simulator: graph + placement → step time, utilisation, memory (exit 2: OOM)");
  simulate->add_option("--graph", c->simulate.graph,
                       "graph file (docs/simulator.md) or layered(ops=,width=,fan_in=,seed=) / chain(ops=)")
      ->capture_default_str();
  simulate->add_option("--placement", c->simulate.placement,
                       "placement file ('<op> <device>' lines) or round_robin | single | blocks")
      ->capture_default_str();
  CLI::Option* sim_machine = simulate->add_option(
      "--machine", c->simulate.machine,
      "a machine: k80(gpus=4,cpu=1,memory_fraction=1) | baechi(...) | tpu(...) | gpu(...) | a machine .pbtxt "
      "(place-baseline --env device's; replaces --devices/--preset/--device/--memory)");
  sim_machine->check(cli::NonEmpty());
  simulate->add_option("--devices", c->simulate.devices, "number of devices")
      ->capture_default_str()->check(PerfRange("simulate", "devices"))->excludes(sim_machine);
  simulate->add_option("--preset", c->simulate.preset, "link and scheduling semantics: baechi | placeto")
      ->capture_default_str()->check(PerfChoice("simulate", "preset"))->excludes(sim_machine);
  simulate->add_option("--device", c->simulate.device,
                       "plain:FLOPS,BYTES_PER_S (default: one K80 die) or a catalogue chip (bf16 roofline)")
      ->capture_default_str()->excludes(sim_machine);
  simulate->add_option("--memory", c->simulate.memory, "bytes per device (default: unlimited for plain, HBM for chips)")
      ->check(PerfRange("simulate", "memory"))->excludes(sim_machine);
  simulate->add_option("--trace", c->simulate.trace, "write a per-op CSV trace (op,device,start_s,end_s)");
  simulate->add_option("--bench", c->simulate.bench_seconds, "also time repeated runs for this many seconds (ops/s)")
      ->check(PerfRange("simulate", "bench"));
  simulate->add_flag("--json", c->simulate_flags.json, "print one JSON document (with the resolved options)");
  simulate->add_flag("--verbose", c->simulate_flags.verbose, "print the resolved options first");
  simulate->add_option("--replicas", c->simulate.training.replicas,
                       "data-parallel replicas of the placed graph (adds a ring all-reduce of each "
                       "device's parameter gradients and the update)")
      ->capture_default_str()->check(PerfRange("simulate", "replicas"));
  simulate->add_option("--ring-bw", c->simulate.training.ring_bw, "replicas' ring: one-way bytes/s per link")
      ->capture_default_str()->check(PerfRange("simulate", "ring-bw"));
  simulate->add_option("--ring-latency", c->simulate.training.ring_hop_latency, "replicas' ring: seconds per hop")
      ->capture_default_str()->check(PerfRange("simulate", "ring-latency"));
  c->simulate_cmd = simulate;
}

void AddCalibrate(CLI::App* app, PerfModelCommandLine* c) {
  CLI::App* calibrate = app->add_subcommand(
      "calibrate-host", "measure this machine (matmul, memory, 2-process Gloo all-reduce) → catalogue with `host`");
  calibrate->add_option("--out", c->calibrate.out, "catalogue to write (the embedded one + host)")->capture_default_str();
  calibrate->add_option("--threads", c->calibrate.threads, "LibTorch threads per process (= one host chip)")
      ->capture_default_str()->check(PerfRange("calibrate-host", "threads"));
  calibrate->add_option("--seconds", c->calibrate.seconds, "time budget per probe size")
      ->capture_default_str()->check(PerfRange("calibrate-host", "seconds"));
  c->calibrate_cmd = calibrate;
}

[[noreturn]] void CalibrateHost(const CalibrateHostQuery& o) {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::string tool = (self.parent_path() / "host-calibrate").string();
  if (ec || access(tool.c_str(), X_OK) != 0)
    throw ConfigError("calibrate-host needs " + tool + " (built when LibTorch is found: -DPLACERL_WITH_TORCH=ON)");
  const std::string t = std::to_string(o.threads), sec = std::to_string(o.seconds);
  std::vector<const char*> args{tool.c_str(), "--out", o.out.c_str(), "--threads", t.c_str(),
                                "--seconds", sec.c_str(), nullptr};
  std::fflush(nullptr);
  execv(tool.c_str(), const_cast<char* const*>(args.data()));
  throw IoError("calibrate-host: cannot run " + tool);
}

}  // namespace

void AddPerfModelCommands(CLI::App* app, PerfModelCommandLine* c) {
  app->require_subcommand(1);
  app->add_option("--catalog", c->catalog_path, "hardware catalogue .pbtxt (default: embedded)");
  app->add_flag("--one-matmul-constant", c->one_matmul_constant,
                "Transformer evaluator without the shape-dependent matmul efficiency (MXU/tensor-core "
                "tile padding, wave quantisation over the matrix units, systolic fill; backward GEMM "
                "shapes): one matmul constant per chip, as the library default and the NAS step-time "
                "model use");
  AddRun(app, c);
  AddSearch(app, c);
  AddValidate(app, c);
  AddInfer(app, c);
  AddBench(app, c);
  AddMlperf(app, c);
  AddFailures(app, c);
  AddDiloco(app, c);
  AddFormats(app, c);
  AddEnergy(app, c);
  AddSimulate(app, c);
  AddCalibrate(app, c);
}

int RunPerfModelCommand(PerfModelCommandLine* c) {
  if (*c->calibrate_cmd) CalibrateHost(c->calibrate);
  for (ModelQuery* q : {&c->run.in, &c->search.in, &c->infer.in, &c->bench.in, &c->failures.in, &c->diloco.in,
                        &c->formats.in, &c->energy.in})
    q->one_matmul_constant = c->one_matmul_constant;
  const Catalog catalog = PerfModelCatalog(c->catalog_path, c->one_matmul_constant);
  std::ostream& out = std::cout;
  if (*c->run_cmd) return PrintRun(c->run, c->run_flags, catalog, out);
  if (*c->search_cmd) return PrintSearch(c->search, c->search_flags, catalog, out);
  if (*c->infer_cmd) return PrintInfer(c->infer, c->infer_flags, catalog, out);
  if (*c->bench_cmd) return PrintBench(c->bench, c->bench_flags, catalog, out);
  if (*c->simulate_cmd) return PrintSimulate(c->simulate, c->simulate_flags, catalog, out);
  if (*c->energy_cmd) return PrintEnergy(c->energy, c->energy_flags, catalog, out);
  if (*c->formats_cmd) return PrintFormats(c->formats, c->formats_flags, catalog, out);
  if (*c->diloco_cmd) return PrintDiloco(c->diloco, c->diloco_flags, catalog, out);
  if (*c->failures_cmd) return PrintFailures(c->failures, c->failures_flags, catalog, out);
  if (*c->mlperf_cmd) return PrintMlperf(c->mlperf, c->mlperf_flags, catalog, out);
  return PrintValidate(c->validate, c->validate_flags, catalog, out);
}

}  // namespace placerl::perf
