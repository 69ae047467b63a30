// host-calibrate: measures this machine with LibTorch (matmul, memory, tiny op, 2-process
// Gloo all-reduce) and writes the embedded catalogue plus a `host` chip. Users run it as
// `perf-model calibrate-host`, which executes this binary: perf-model itself does not link
// LibTorch (loading it costs ~1 s per start). See docs/host_calibration.md.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>

#include "cost_models/tpu/catalog.h"
#include "datasets/util/files.h"
#include "experiments/lib/cli.h"
#include "models/host_calibration.h"

int main(int argc, char** argv) {
  return placerl::RunMain("perf-model calibrate-host", [&]() -> int {
    CLI::App app{
        "perf-model calibrate-host: measure this machine (fp32/bf16 matmul, memory bandwidth, tiny-op\n"
        "overhead, 2-process c10d Gloo all-reduce on loopback) and write a catalogue = the embedded\n"
        "one + a `host` chip (one process with --threads threads = one chip)."};
    std::string out = "out/host_catalog.pbtxt";
    int threads = 1;
    double seconds = 0.3;
    app.add_option("--out", out, "catalogue to write (the embedded one + host)")->capture_default_str();
    app.add_option("--threads", threads, "LibTorch threads per process (= one host chip)")->capture_default_str();
    app.add_option("--seconds", seconds, "time budget per probe size")->capture_default_str();
    placerl::cli::Parse(app, argc, argv);
    placerl::host::CalibrationOptions o;
    o.threads = threads;
    o.seconds_per_probe = seconds;
    const placerl::host::Measurements m = placerl::host::MeasureHost(o, [](const std::string& line) {
      std::printf("%s\n", line.c_str());
      std::fflush(stdout);
    });
    const std::string text = placerl::host::HostCatalogText(m);
    placerl::perf::ParseCatalog(text, out);  // never write a catalogue that does not load
    const std::filesystem::path parent = std::filesystem::path(out).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent);
    placerl::WriteFileAtomic(out, text);
    std::printf("\n%s\nwrote %s (use: perf-model --catalog %s run --mesh host:2 ...)\n",
                placerl::host::HostChipText(m).c_str(), out.c_str(), out.c_str());
    return 0;
  });
}
