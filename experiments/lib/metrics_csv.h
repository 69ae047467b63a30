// metrics.csv of a run directory: one row per logged step, comma-separated, with a header.
//   - The header is fixed by the first row's keys, in that row's order (or by the existing
//     header when appending). A later row may leave columns out (empty cell: e.g. an episode
//     return logged only when an episode ends) but may not bring a new key: that is an error
//     (placerl::Error naming the key and the header), never a silently shifted column —
//     log every column in the first row (NaN is fine) if it appears later.
//   - Numbers are written in the shortest form that reads back to the same double
//     (std::to_chars): 0.1 → "0.1", 1000 → "1000", NaN → "nan", infinities → "inf"/"-inf".
//   - Every row is one write(2) call: a killed run keeps all rows written before.
//   - Append mode (resume) keeps the existing rows; a partial last line left by a kill is cut
//     off, and the rows written afterwards must fit the existing header.
// Keys may not contain ',', '"', CR or LF (no quoting needed, readable by any CSV reader).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace placerl::run {

using MetricRow = std::vector<std::pair<std::string, double>>;

class MetricsCsv {
 public:
  enum class Mode {
    kCreate,  // a new file (an existing one is truncated)
    kAppend,  // keep an existing file's rows and header (created when missing)
  };
  // Throws IoError; in append mode ParseError when the existing header is unusable.
  MetricsCsv(const std::string& path, Mode mode);
  ~MetricsCsv();
  MetricsCsv(const MetricsCsv&) = delete;
  MetricsCsv& operator=(const MetricsCsv&) = delete;

  // Writes one row (and the header first, if the file has none). Throws placerl::Error for a
  // key that is not in the header, a repeated key or a key with a forbidden character, and
  // IoError when writing fails.
  void Write(const MetricRow& row);

  const std::vector<std::string>& columns() const { return columns_; }
  const std::string& path() const { return path_; }

 private:
  void WriteAll(const std::string& text);
  std::string path_;
  int fd_ = -1;
  std::vector<std::string> columns_;  // empty until the header exists
};

// The shortest decimal text that parses back to exactly `v`.
std::string ShortestDouble(double v);

// A whole metrics.csv, numbers parsed (an empty cell is NaN), e.g. to redraw the curve of a
// resumed run. Throws IoError / ParseError(`path:line: what`).
struct MetricsTable {
  std::vector<std::string> columns;
  std::vector<std::vector<double>> rows;  // rows[i][j] = value of columns[j]
  // Index of `column`, or -1.
  int Find(const std::string& column) const;
};
MetricsTable ReadMetricsCsv(const std::string& path);

}  // namespace placerl::run
