// TensorBoard event files written without TensorFlow: `events.out.tfevents.<unix s>.<host>`
// in a run directory, a sequence of TFRecords (uint64 LE length, masked CRC-32C of those 8
// bytes, the serialized Event, masked CRC-32C of it) whose first Event carries
// file_version "brain.Event:2" and the others scalar summaries (tag, simple_value).
// Schema: datasets/proto/tensorboard.proto. Tags are the caller's; use CleanRL's names where
// they apply (charts/episodic_return, losses/value_loss, losses/policy_loss, ...).
// Also a strict reader (both CRCs of every record checked) for tests and tools.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace placerl::run {

using Scalars = std::vector<std::pair<std::string, double>>;

// CleanRL's tag names (ppo.py), so that curves of placerl runs sit next to theirs; a binary
// adds its own under the same prefixes (charts/best_cost, charts/moves_per_s, ...).
namespace tag {
constexpr char kEpisodicReturn[] = "charts/episodic_return";
constexpr char kEpisodicLength[] = "charts/episodic_length";
constexpr char kLearningRate[] = "charts/learning_rate";
constexpr char kStepsPerSecond[] = "charts/SPS";
constexpr char kValueLoss[] = "losses/value_loss";
constexpr char kPolicyLoss[] = "losses/policy_loss";
constexpr char kEntropy[] = "losses/entropy";
constexpr char kOldApproxKl[] = "losses/old_approx_kl";
constexpr char kApproxKl[] = "losses/approx_kl";
constexpr char kClipFraction[] = "losses/clipfrac";
constexpr char kExplainedVariance[] = "losses/explained_variance";
}  // namespace tag

class TensorBoardWriter {
 public:
  // Creates a new event file in the existing directory `dir` (a second file started in the
  // same second on the same host gets a `.<pid>[.<k>]` suffix; TensorBoard reads every file
  // whose name contains "tfevents"). Throws IoError.
  explicit TensorBoardWriter(const std::string& dir);
  ~TensorBoardWriter();
  TensorBoardWriter(const TensorBoardWriter&) = delete;
  TensorBoardWriter& operator=(const TensorBoardWriter&) = delete;

  // One Event with one Summary.Value per scalar, written with one write(2) call before
  // returning, so that a run killed afterwards keeps this step. Values are stored as float
  // (TensorBoard's simple_value). `wall_time` <= 0 means now. Throws IoError.
  void AddScalars(int64_t step, const Scalars& scalars, double wall_time = 0);
  void AddScalar(const std::string& tag, double value, int64_t step) { AddScalars(step, {{tag, value}}); }

  // A SessionLog START event at `step`: TensorBoard then discards the events of earlier
  // files at `step` and after (what a killed run logged after its last checkpoint), so a
  // resumed run's curve has no doubled steps.
  void AddSessionStart(int64_t step);

  const std::string& path() const { return path_; }

 private:
  void WriteRecord(const std::string& data);
  std::string path_;
  int fd_ = -1;
};

// One TFRecord's framing around `data` (exposed for tests and other record writers).
std::string FrameTfRecord(const std::string& data);

struct TensorBoardScalar {
  int64_t step = 0;
  double wall_time = 0;
  std::string tag;
  float value = 0;
};

struct TensorBoardFile {
  std::string file_version;  // of the first record
  int64_t records = 0;
  std::vector<int64_t> session_starts;  // steps of SessionLog START events
  std::vector<TensorBoardScalar> scalars;  // in file order
};

// Reads an event file, verifying the length and data CRC of every record. Throws IoError
// when it cannot be read and ParseError (`path:0: record N at byte B: what`) for a bad CRC,
// a truncated record or an Event that does not parse.
TensorBoardFile ReadTensorBoardFile(const std::string& path);

}  // namespace placerl::run
