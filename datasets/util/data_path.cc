#include "datasets/util/data_path.h"

#include <filesystem>
#include <system_error>

namespace placerl {

namespace fs = std::filesystem;

std::vector<std::string> DefaultDataCandidates(const std::string& relative) {
  const fs::path rel(relative);
  if (relative.empty() || rel.is_absolute()) return {relative};
  std::vector<std::string> out = {relative};
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec || exe.empty()) return out;
  for (fs::path dir = exe.parent_path(); !dir.empty(); dir = dir.parent_path()) {
    out.push_back((dir / rel).lexically_normal().string());
    if (dir == dir.root_path()) break;
  }
  // An install: <prefix>/bin/x → <prefix>/share/placerl/<relative without its leading "..">.
  fs::path inside;
  for (const fs::path& part : rel)
    if (!(inside.empty() && (part == ".." || part == "."))) inside /= part;
  if (!inside.empty()) out.push_back((exe.parent_path().parent_path() / "share" / "placerl" / inside).string());
  return out;
}

std::string FindDefaultData(const std::string& relative) {
  for (const std::string& c : DefaultDataCandidates(relative)) {
    std::error_code ec;
    if (!c.empty() && fs::exists(c, ec)) {
      const fs::path abs = fs::absolute(c, ec);
      return ec ? c : abs.lexically_normal().string();
    }
  }
  return relative;
}

}  // namespace placerl
