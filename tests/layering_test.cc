// The layer table (DESIGN.md "Layers"): nothing in a lower row includes a higher one. Scans the
// sources (run from the repository root, as every test): python/ takes nothing from experiments/
// (no include, no source compiled a second time by python/CMakeLists.txt), and datasets/,
// cost_models/ and env/ include no higher layer and no LibTorch. Each failure names file:line.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace placerl {
namespace {

namespace fs = std::filesystem;

struct Line {
  std::string file;
  int number = 0;
  std::string text;
};

bool IsSource(const fs::path& p) {
  const std::string e = p.extension().string();
  return e == ".cc" || e == ".h" || e == ".cpp" || e == ".hpp";
}

// Every line of every C++ source below `dir` (recursively) that is an #include.
std::vector<Line> Includes(const std::string& dir) {
  std::vector<Line> out;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file() || !IsSource(entry.path())) continue;
    std::ifstream in(entry.path());
    std::string text;
    for (int n = 1; std::getline(in, text); ++n) {
      const size_t first = text.find_first_not_of(" \t");
      if (first == std::string::npos || text.compare(first, 1, "#") != 0) continue;
      const size_t word = text.find_first_not_of(" \t", first + 1);
      if (word != std::string::npos && text.compare(word, 7, "include") == 0)
        out.push_back({entry.path().generic_string(), n, text});
    }
  }
  return out;
}

// The file named by an include line ("" when it has none).
std::string IncludedPath(const std::string& line) {
  const size_t open = line.find_first_of("\"<");
  if (open == std::string::npos) return "";
  const size_t close = line.find(line[open] == '"' ? '"' : '>', open + 1);
  return close == std::string::npos ? "" : line.substr(open + 1, close - open - 1);
}

bool StartsWith(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

// The lines of a CMake file without their comments.
std::vector<Line> CMakeCode(const std::string& path) {
  std::vector<Line> out;
  std::ifstream in(path);
  std::string text;
  for (int n = 1; std::getline(in, text); ++n) {
    const size_t hash = text.find('#');
    out.push_back({path, n, text.substr(0, hash)});
  }
  return out;
}

TEST(Layering, TheScannerSeesIncludes) {
  EXPECT_EQ(IncludedPath("#include \"experiments/lib/cli.h\""), "experiments/lib/cli.h");
  EXPECT_EQ(IncludedPath("#  include <torch/torch.h>  // x"), "torch/torch.h");
  EXPECT_EQ(IncludedPath("#include"), "");
  // The scan finds the includes of a known file (a scan that saw nothing would pass vacuously).
  bool found = false;
  for (const Line& l : Includes("env"))
    found |= l.file == "env/registry.cc" && IncludedPath(l.text) == "env/registry.h";
  EXPECT_TRUE(found);
}

TEST(Layering, PythonTakesNothingFromExperiments) {
  ASSERT_TRUE(fs::is_directory("python")) << "run from the repository root";
  const std::vector<Line> includes = Includes("python");
  EXPECT_FALSE(includes.empty());
  for (const Line& l : includes)
    EXPECT_FALSE(StartsWith(IncludedPath(l.text), "experiments/"))
        << l.file << ":" << l.number << ": python/ includes experiments/ (DESIGN.md Layers): " << l.text;
  ASSERT_TRUE(fs::is_regular_file("python/CMakeLists.txt"));
  for (const Line& l : CMakeCode("python/CMakeLists.txt"))
    EXPECT_EQ(l.text.find("experiments/"), std::string::npos)
        << l.file << ":" << l.number << ": the module compiles or names experiments/ code: " << l.text;
}

TEST(Layering, LowerLayersIncludeNoHigherLayerNorLibTorch) {
  // Folder → the folders it may include (DESIGN.md); any other project folder is above it.
  const std::vector<std::pair<std::string, std::vector<std::string>>> layers = {
      {"datasets", {"datasets/"}},
      {"cost_models", {"datasets/", "cost_models/"}},
      {"env", {"datasets/", "cost_models/", "env/"}},
  };
  const std::vector<std::string> project = {"datasets/", "cost_models/", "env/",   "encoders/",   "models/",
                                            "agents/",   "search/",      "python/", "experiments/", "tests/"};
  const std::vector<std::string> torch = {"torch/", "ATen/", "c10/", "caffe2/"};
  for (const auto& [dir, allowed] : layers) {
    ASSERT_TRUE(fs::is_directory(dir)) << "run from the repository root";
    for (const Line& l : Includes(dir)) {
      const std::string inc = IncludedPath(l.text);
      for (const std::string& t : torch)
        EXPECT_FALSE(StartsWith(inc, t)) << l.file << ":" << l.number << ": LibTorch in " << dir << "/: " << l.text;
      bool mine = false, ours = false;
      for (const std::string& a : allowed) mine |= StartsWith(inc, a);
      for (const std::string& p : project) ours |= StartsWith(inc, p);
      EXPECT_TRUE(mine || !ours) << l.file << ":" << l.number << ": " << dir << "/ includes a higher layer: " << l.text;
    }
    const std::string cmake = dir + "/CMakeLists.txt";
    if (!fs::is_regular_file(cmake)) continue;
    for (const Line& l : CMakeCode(cmake))
      EXPECT_EQ(l.text.find("TORCH"), std::string::npos) << l.file << ":" << l.number << ": LibTorch linked: " << l.text;
  }
}

}  // namespace
}  // namespace placerl
