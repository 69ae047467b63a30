// The two tabular NAS benchmarks in ../shared/datasets/nas/ (docs/nas.md) and their encodings:
//   - NAS-Bench-201 / NATS-Bench tss (`nats_bench_tss.csv`): 15,625 cells, 6 edges × 5 ops; the
//     CSV holds only the 200-epoch TEST accuracies on CIFAR-10, CIFAR-100 and ImageNet16-120
//     (no validation accuracies, no FLOPs): a search that selects on them selects on the test
//     set (see docs/nas.md for what that means next to published numbers);
//   - NAS-Bench-Macro (`nas_bench_macro_cifar10.json`): 6,561 networks, 8 layers × 3 blocks,
//     mean CIFAR-10 test accuracy of 3 runs, parameters and FLOPs.
// Both are held as flat arrays indexed by the architecture's code (base-5 / base-3 digits,
// first decision most significant), which is the index of the architecture in the search
// spaces nb201 / nas_bench_macro (datasets/nas/spaces/). Readers throw ParseError
// `file:line: what` on malformed rows.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace placerl::nas {

inline constexpr int32_t kNb201Edges = 6;
inline constexpr int32_t kNb201Ops = 5;
inline constexpr int32_t kNb201Cells = 15625;  // 5^6
// In the benchmark's order (index = choice in the nb201 space).
extern const std::array<const char*, kNb201Ops> kNb201OpNames;  // none, skip_connect, nor_conv_1x1, …

enum class Nb201Dataset : int32_t { kCifar10 = 0, kCifar100 = 1, kImageNet16 = 2 };
// "cifar10", "cifar100", "imagenet16-120".
const char* Nb201DatasetName(Nb201Dataset d);
// Throws ConfigError naming the three for another name.
Nb201Dataset Nb201DatasetFromName(const std::string& name);

// The 6 op indices ↔ the benchmark's string "|nor_conv_3x3~0|+|none~0|skip_connect~1|+|…~0|…~1|…~2|".
std::string Nb201ArchString(const int32_t* ops);
// Empty string when `s` is well formed (ops filled); otherwise what is wrong.
std::string ParseNb201ArchString(const std::string& s, int32_t* ops);
int32_t Nb201Code(const int32_t* ops);           // Σ ops[e]·5^(5−e)
void Nb201Ops(int32_t code, int32_t* ops);
// Multiply-accumulates of the CIFAR-10 network built from the cell (3 stages × 5 cells with 16,
// 32, 64 channels at 32², 16², 8², the ResNet reduction blocks, stem and classifier), in
// millions: convolutions and pooling windows; BN/ReLU not counted. From 7.78 (all none/skip)
// to 220.12 (all conv 3×3), the range the NAS-Bench-201 API reports as "flops" [M]. The
// step-time proxy of the nb201 space when no performance model applies.
double Nb201MegaMacs(const int32_t* ops);

struct Nb201Table {
  // Accuracy in % by code and dataset; NaN where the file had no row.
  std::array<std::vector<float>, 3> test_accuracy;
  int32_t rows = 0;
  float Accuracy(Nb201Dataset d, int32_t code) const { return test_accuracy[static_cast<int>(d)][code]; }
};

struct TableReadOptions {
  bool require_all = true;  // every architecture of the space must have a row
};

// Reads nats_bench_tss.csv: a header naming at least CIFAR10TestAccuracy200Epochs,
// CIFAR100TestAccuracy200Epochs, ImageNetTestAccuracy200Epochs and ArchitectureString (other
// columns ignored), then one row per cell. Errors (ParseError with the row's line): wrong
// field count, an accuracy that is not a number in [0, 100], a malformed architecture string,
// a cell given twice; with require_all, missing cells (line 0).
Nb201Table ReadNb201Csv(const std::string& path, const TableReadOptions& options = {});

inline constexpr int32_t kMacroLayers = 8;
inline constexpr int32_t kMacroChoices = 3;
inline constexpr int32_t kMacroNetworks = 6561;  // 3^8

// "01201122" (layer 0 first) ↔ 8 choice indices.
std::string MacroArchString(const int32_t* choices);
std::string ParseMacroArchString(const std::string& s, int32_t* choices);  // "" when fine
int32_t MacroCode(const int32_t* choices);

struct MacroTable {
  std::vector<float> mean_accuracy;  // % by code; NaN where absent
  std::vector<float> std_accuracy;
  std::vector<int64_t> params, flops;
  int32_t rows = 0;
};

// Reads nas_bench_macro_cifar10.json: one object keyed by the 8-digit string, each value an
// object with mean_acc (number in [0, 100]), params and flops (whole numbers ≥ 0), std
// (optional, ≥ 0). Errors name the line of the key (the file is one line: line 1) or of a JSON
// syntax error.
MacroTable ReadNasBenchMacroJson(const std::string& path, const TableReadOptions& options = {});

}  // namespace placerl::nas
