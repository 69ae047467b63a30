#include "experiments/lib/metrics_csv.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <set>

#include "datasets/util/errors.h"
#include "datasets/util/files.h"

namespace placerl::run {
namespace {

std::vector<std::string> SplitLine(const std::string& line) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    out.push_back(line.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
  return s;
}

}  // namespace

std::string ShortestDouble(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, r.ptr);
}

MetricsCsv::MetricsCsv(const std::string& path, Mode mode) : path_(path) {
  int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC;
  if (mode == Mode::kCreate) flags |= O_TRUNC;
  if (mode == Mode::kAppend) {
    std::string existing;
    if (::access(path.c_str(), F_OK) == 0) existing = ReadFile(path);
    const size_t last_newline = existing.rfind('\n');
    const size_t keep = last_newline == std::string::npos ? 0 : last_newline + 1;
    if (keep < existing.size()) {
      // A partial line left by a killed run: cut it off before appending.
      if (::truncate(path.c_str(), static_cast<off_t>(keep)) != 0) {
        throw IoError(path + ": cannot cut off the partial last line (" + std::strerror(errno) + ")");
      }
      existing.resize(keep);
    }
    if (!existing.empty()) {
      std::string header = existing.substr(0, existing.find('\n'));
      if (!header.empty() && header.back() == '\r') header.pop_back();
      columns_ = SplitLine(header);
      std::set<std::string> seen;
      for (const std::string& c : columns_) {
        if (c.empty() || !seen.insert(c).second) {
          throw ParseError(path, 1, "header has an empty or repeated column name ('" + c + "')");
        }
      }
    }
  }
  fd_ = ::open(path.c_str(), flags, 0644);
  if (fd_ < 0) throw IoError(path + ": cannot open for writing (" + std::strerror(errno) + ")");
}

MetricsCsv::~MetricsCsv() {
  if (fd_ >= 0) ::close(fd_);
}

void MetricsCsv::Write(const MetricRow& row) {
  std::string text;
  if (columns_.empty()) {
    std::set<std::string> seen;
    for (const auto& kv : row) {
      const std::string& key = kv.first;
      if (key.empty() || key.find_first_of(",\"\r\n") != std::string::npos) {
        throw Error(path_ + ": column name '" + key + "' is empty or has one of , \" CR LF");
      }
      if (!seen.insert(key).second) throw Error(path_ + ": column '" + key + "' appears twice in one row");
    }
    if (row.empty()) throw Error(path_ + ": the first row has no columns");
    for (const auto& kv : row) columns_.push_back(kv.first);
    std::vector<std::string> header = columns_;
    for (size_t i = 0; i < header.size(); ++i) text += (i ? "," : "") + header[i];
    text += '\n';
  }
  std::vector<std::string> cells(columns_.size());
  std::vector<bool> set(columns_.size(), false);
  for (const auto& [key, value] : row) {
    size_t j = 0;
    while (j < columns_.size() && columns_[j] != key) ++j;
    if (j == columns_.size()) {
      throw Error(path_ + ": column '" + key + "' is not in the header (" + Join(columns_) +
                  "); every column must appear in the first row");
    }
    if (set[j]) throw Error(path_ + ": column '" + key + "' appears twice in one row");
    set[j] = true;
    cells[j] = ShortestDouble(value);
  }
  for (size_t j = 0; j < cells.size(); ++j) text += (j ? "," : "") + cells[j];
  text += '\n';
  WriteAll(text);
}

void MetricsCsv::WriteAll(const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw IoError(path_ + ": write failed (" + std::strerror(errno) + ")");
    done += static_cast<size_t>(n);
  }
}

int MetricsTable::Find(const std::string& column) const {
  for (size_t j = 0; j < columns.size(); ++j) {
    if (columns[j] == column) return static_cast<int>(j);
  }
  return -1;
}

MetricsTable ReadMetricsCsv(const std::string& path) {
  const std::string text = ReadFile(path);
  MetricsTable t;
  size_t pos = 0;
  int line_no = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line_no == 1) {
      t.columns = SplitLine(line);
      continue;
    }
    if (line.empty()) continue;
    const std::vector<std::string> cells = SplitLine(line);
    if (cells.size() != t.columns.size()) {
      throw ParseError(path, line_no, std::to_string(cells.size()) + " cells, header has " +
                                          std::to_string(t.columns.size()));
    }
    std::vector<double> row(cells.size());
    for (size_t j = 0; j < cells.size(); ++j) {
      const std::string& c = cells[j];
      if (c.empty()) {
        row[j] = std::nan("");
        continue;
      }
      char* e = nullptr;
      row[j] = std::strtod(c.c_str(), &e);
      if (e != c.c_str() + c.size()) {
        throw ParseError(path, line_no, "column '" + t.columns[j] + "': '" + c + "' is not a number");
      }
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

}  // namespace placerl::run
