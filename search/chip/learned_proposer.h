// The learned proposal distribution of simulated annealing ("Neural SA": Correia, Worrall &
// Bondesan, AISTATS 2023; docs/learned_sa.md). SA keeps its Metropolis acceptance and its
// cooling schedule; what it proposes next is a policy: which kind of move, as a function of
// where the run is (the fraction of the budget spent) and how often recent proposals were
// accepted. The policy is a softmax over the move kinds with logits linear in a few context
// features — small enough to cost ≈ 0.1 µs per proposal against the move's own ≈ 20 µs — and
// learns by REINFORCE during the run (and, run after run, across designs: pretraining) on the
// annealer's own reward, the exact cost decrease of each proposal divided by the temperature.
//
// Move kinds (the first five are TILOS's, the last three are placerl's):
//   swap, shift, mirror, move, shuffle — TILOS SA's hard-macro actions;
//   soft_shift — one soft macro by up to sa_soft_move_cells cells per axis (uniform; `sa-soft`);
//   soft_pull  — one soft macro a random fraction of the way (at most sa_soft_move_cells cells
//                per axis) towards the point its nets pull it to (the net-weighted mean of the
//                centres of the bounding boxes of each net's other pins; with median_pull the
//                point of least wirelength);
//   hard_pull  — one hard macro to the legal cell nearest the point its nets pull it to.
// A kind that cannot apply (no soft macros; fewer than two / four hard macros) is masked: its
// probability is 0 and the others are renormalised.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace placerl::search {

struct ProposerWeights {
  static constexpr int kKinds = 8;
  static constexpr int kFeatures = 4;  // 1, progress, progress², recent acceptance rate
  // logit[k] = Σ_f w[k·kFeatures + f] · feature[f]; all zero = uniform over the legal kinds.
  std::array<double, kKinds * kFeatures> w{};
  // Which soft macro a soft move takes: among kCandidates drawn uniformly, the one sampled from
  // a softmax of Σ_f select[f] · feature[f] over the candidates' features (the congestion and the
  // density of its grid cell ÷ the map's largest, and the congestion's fourth power: hot spots);
  // all zero = uniform.
  static constexpr int kCandidates = 4;
  static constexpr int kSelectFeatures = 3;
  std::array<double, kSelectFeatures> select{};
  // Which hard macro a one-macro move (shift, move, hard_pull) takes (off unless `hard_select_on`;
  // session 40): among kCandidates movable macros drawn uniformly, the one sampled from a softmax
  // of Σ_f hard_select[f] · feature[f] — the distance from its centre to the point its nets pull
  // it to ÷ the largest such distance, and the congestion and the density of its centre's cell ÷
  // the maps' largest (all re-read every 256 picks). Off: one macro drawn uniformly (every file
  // before session 40, to the bit); on with all zero: uniform too, by another draw.
  static constexpr int kHardSelectFeatures = 3;
  bool hard_select_on = false;
  std::array<double, kHardSelectFeatures> hard_select{};
  // Where a `move` takes its hard macro (off unless `target_select_on`; session 41): among
  // kCandidates legal cells drawn uniformly, the one sampled from a softmax of
  // Σ_f target_select[f] · feature[f] — how much nearer the cell is to the point the macro's nets
  // pull it to than the macro is now ((d_now − d_cell) ÷ (d_now + a cell's diagonal), within
  // [−4, 1]), and the congestion and the density of the cell ÷ the maps' largest (the pull points
  // and maps re-read every 256 picks). Off: one legal cell drawn uniformly (every file before
  // session 41, to the bit); on with all zero: uniform too, by another draw.
  static constexpr int kTargetSelectFeatures = 3;
  bool target_select_on = false;
  std::array<double, kTargetSelectFeatures> target_select{};
  // The kinds' late adjustment (off unless `late_kinds_on`; session 42): from the late start h
  // (ProposerLateStart: the controller's handover, else kDefaultHandover) on, the logit of kind k
  // gains late_kinds[k] · (p − h) ÷ (1 − h), so the mixture is the file's own up to h, to the bit,
  // and has moved by late_kinds at the end. Two runs of one seed whose files differ only here are
  // identical up to h (with sa.max_evaluations, which makes p follow the evaluations): a paired
  // measure of what the second half proposes. REINFORCE (sa.proposer_lr > 0) does not change
  // these weights; train-proposer --set late_kinds=true searches them. Each within ±30.
  bool late_kinds_on = false;
  std::array<double, kKinds> late_kinds{};
  // The annealing schedule's adjustments (searched by train-proposer with schedule=true; all zero:
  // the annealer's own schedule, to the bit): at progress p the temperature is multiplied by
  // exp(s[0] + s[1]·p + s[2]·p²) and the soft moves' largest step (sa.soft_move_cells) by
  // exp(s[3] + s[4]·p + s[5]·p²). Each within ±kMaxSchedule.
  static constexpr int kScheduleWeights = 6;
  static constexpr double kMaxSchedule = 5;
  std::array<double, kScheduleWeights> schedule{};
  // The acceptance controller (off unless `control_on`; docs/learned_sa.md): the temperature is
  // further multiplied by exp(u), where u integrates, every kControlWindow evaluated proposals,
  // gain · (log target(p) − log acceptance of that window); target(p) = exp(c[0] + c[1]·p +
  // c[2]·p²) within [kMinTarget, kMaxTarget], gain = kControlGain · exp(c[3]). So the run holds
  // an acceptance profile rather than a temperature profile: TILOS's temperatures are absolute
  // proxy-cost units, set for Ariane133, and the same multiplier is a different acceptance on every
  // design. Each weight within ±kMaxControl; u within ±kMaxControlU.
  static constexpr int kControlWeights = 4;
  static constexpr double kMaxControl = 10;
  bool control_on = false;
  std::array<double, kControlWeights> control{};
  // Where the controller hands the temperature back to the schedule (progress in (0, 1]; 1 =
  // never): from there on u no longer integrates and falls log-linearly to 0 at the end of the
  // run, so the run ends at the schedule's own temperature (cold) whatever the controller held.
  double control_handover = 1;
  // With the controller's handover (control_on, control_handover < 1): whether the schedule's
  // temperature adjustment (schedule[0..2]) hands over too — from the handover on, its log falls
  // linearly from its value there to 0 at the end, so the run ends at the annealer's own final
  // temperature (sa_t_min). false (the default, every file before session 37): the adjustment
  // keeps following exp(s[0] + s[1]·p + s[2]·p²) to the end (e.g. 1.93× sa_t_min at p = 1 for
  // the held-out sky130hd file).
  bool schedule_handover = false;
  // The controller's state term (off unless `control_state_on`; session 27): the target is further
  // multiplied by exp(control_state · d), where d = the log of the share of the run's recent
  // hard-macro proposals that lowered the cost (a moving average over control windows) minus
  // its value in the first window — 0 while the hard macros improve as often as at the start, −2.3
  // once they improve 10× less often. So one policy can stay hot while the hard macros still
  // move (a bad start) and cool once they settle (a good start). Within ±kMaxControl. Searched
  // by train-proposer (--set control=true) when the start has it.
  bool control_state_on = false;
  double control_state = 0;
  // The run-length term (off unless `length_on`; session 46): with λ = ln(E ÷ kLengthReference)
  // clamped to [0, kMaxLengthLog], E the evaluations the run gets (sa.max_evaluations when set,
  // else estimated as the evaluations so far ÷ the progress, from progress kLengthEstimateFrom on;
  // λ = 0 before), the controller's log target gains λ · (length[0] + length[1] · p) and the
  // schedule's log temperature factor λ · (length[2] + length[3] · p). Runs of at most
  // kLengthReference evaluations (what every file before session 46 was trained on) follow the file
  // without the term, to the bit; a longer run is no longer the short one stretched. Each within
  // ±kMaxLength. Searched by train-proposer --set length=true.
  static constexpr int kLengthWeights = 4;
  static constexpr double kMaxLength = 3;
  static constexpr double kLengthReference = 1e6, kMaxLengthLog = 10, kLengthEstimateFrom = 0.01;
  bool length_on = false;
  std::array<double, kLengthWeights> length{};
  // Where soft_pull takes its soft macro (session 47): false (every file before, to the bit) —
  // towards the net-weighted mean of the centres of its nets' bounding boxes (without its own
  // pins); true — towards the point where those nets' half-perimeter wirelength is least (per axis
  // the net-weighted median of the boxes' ends; within the interval of minima the point nearest the
  // macro's centre): the exact coordinate-descent step for the wirelength, the one cost term still
  // moving at the end of a long run. File key "soft_pull_point": "median" (or "mean", the default).
  bool median_pull = false;
  // Cluster shifts (session 50): from this fraction of the run on, a `shift` (a hard macro one
  // cell) carries along the soft macros that share a net with the macro and whose centres lie
  // within its rectangle grown by shift_carry_cells grid cells on each side: each moves by the same vector (kept
  // inside the canvas), and the whole move is accepted or undone at once. The assembly of a hard
  // macro and its standard-cell clusters moves where single moves each go uphill. > 1 = never (every
  // file before, to the bit). File key "shift_carry_from": a number in [0, 1].
  double shift_carry_from = 2;
  // How far around the macro's rectangle a cluster shift reaches, in grid cells (file key
  // "shift_carry_cells", in (0, 10]; default 1).
  double shift_carry_cells = 1;
  bool shift_carry_on() const { return shift_carry_from <= 1; }
  // Which relocating kinds carry (session 51; bit k for ProposalKind k, of swap, shift, move,
  // shuffle, hard_pull): each macro the move relocates takes along the soft macros that share a net
  // with it and lie within its old rectangle grown by shift_carry_cells cells, by its own vector (a
  // soft macro attached to two moved macros goes with the first). Default: shift only (every file
  // before, to the bit). File key "carry_kinds": a non-empty list of those kinds' names.
  uint32_t carry_kinds = 1u << 1;  // (kShift)
  bool carries(int kind) const { return shift_carry_on() && ((carry_kinds >> kind) & 1u); }
  // Hot-net soft moves (session 51): from this fraction of the run on, a share hot_soft_share of
  // the soft_shift proposals takes its soft macro among those on a net whose pins' bounding box (in
  // grid cells) covers a cell the congestion cost counts (the top 5 % of the vertical and
  // horizontal values; refreshed every kHotRefresh picks) — the nets that can route around the
  // hottest cells — instead of uniformly, with a step of up to hot_soft_cells grid cells per axis
  // (0: the run's own soft step). > 1 = never (every file before, to the bit). File keys
  // "hot_soft_from" (in [0, 1]), "hot_soft_share" (in (0, 1], default 0.5), "hot_soft_cells"
  // (in [0, 10], default 0).
  static constexpr int kHotRefresh = 1024;
  double hot_soft_from = 2;
  double hot_soft_share = 0.5;
  double hot_soft_cells = 0;
  bool hot_soft_on() const { return hot_soft_from <= 1; }
  // Hot-macro moves (session 51): from this fraction of the run on, a share hot_macro_share of the
  // one-macro hard moves (shift, move, hard_pull) takes a hard macro that overlaps one of the counted
  // congestion cells whose net routing is at least the counted cells' mean (the busy channels over
  // macros; refreshed every kHotRefresh picks) instead of the usual pick. > 1 = never (every file
  // before, to the bit). File keys "hot_macro_from" (in [0, 1]), "hot_macro_share" (in (0, 1],
  // default 0.5).
  double hot_macro_from = 2;
  double hot_macro_share = 0.5;
  bool hot_macro_on() const { return hot_macro_from <= 1; }
  // Designs these weights were trained on, each once, in the order first trained (provenance;
  // empty = untrained; add with AddTrainedOn). How much training: proposals_trained.
  std::vector<std::string> trained_on;
  int64_t proposals_trained = 0;
};

// Appends `design` to w->trained_on unless it is listed already.
void AddTrainedOn(ProposerWeights* w, const std::string& design);

enum ProposalKind { kSwap = 0, kShift, kMirror, kMove, kShuffle, kSoftShift, kSoftPull, kHardPull };
const char* ProposalKindName(int kind);
const char* ProposerFeatureName(int feature);
const char* ProposerSelectFeatureName(int feature);
const char* ProposerHardSelectFeatureName(int feature);
const char* ProposerTargetSelectFeatureName(int feature);
// The schedule's multipliers at progress p ∈ [0, 1] (ProposerWeights::schedule): exactly 1 when
// the schedule weights are zero; the temperature's follows ProposerWeights::schedule_handover.
// `length_log`: λ of ProposerWeights::length (0: the file without the run-length term).
double ProposerTemperatureFactor(const ProposerWeights& w, double progress, double length_log = 0);
// λ of ProposerWeights::length for a run that gets `evaluations` evaluations (0 without the term).
double ProposerLengthLog(const ProposerWeights& w, double evaluations);
double ProposerSoftStepFactor(const ProposerWeights& w, double progress);
// Where ProposerWeights::late_kinds starts acting: the controller's handover when the weights have
// one (control_on, control_handover < 1), else kDefaultHandover.
double ProposerLateStart(const ProposerWeights& w);

// A start for the acceptance controller (train-proposer --set control=true from weights without
// one): `sa-soft`'s own acceptance on Ariane133 (1 CPU-minute, seed 1: 0.35 early, 0.02 late),
// the gain at kControlGain.
inline constexpr std::array<double, ProposerWeights::kControlWeights> kDefaultControl = {-0.9, -5.0, 2.0, 0.0};
// The handover of a controller the search adds (ProposerWeights::control_handover): half-way
// (docs/learned_sa.md, session 25: a controller that holds its target to the end ends 5 times hotter
// than the schedule and loses on the designs that need a cold end).
inline constexpr double kDefaultHandover = 0.5;

// The acceptance controller of ProposerWeights::control: fed the outcome of every evaluated
// proposal, it returns the factor exp(u) on the temperature.
class AcceptanceController {
 public:
  static constexpr int kControlWindow = 256;
  static constexpr double kControlGain = 0.05;
  static constexpr double kMinTarget = 1e-4, kMaxTarget = 0.9, kMaxControlU = 7;
  // The state term's moving average: the weight of each closed window's log share.
  static constexpr double kStateDecay = 0.05;
  explicit AcceptanceController(const ProposerWeights& w) : w_(w) {}
  // One evaluated proposal at `progress`; true when the factor changed (a window closed). After
  // the handover it only counts. `hard`: a hard-macro move; `improved`: it lowered the cost (for
  // the state term).
  bool Feedback(bool accepted, double progress, bool hard = false, bool improved = false);
  // The factor on the temperature at `progress`: exp(u) up to the handover, then exp(u · (1 − p) ÷
  // (1 − handover)).
  double factor(double progress) const;
  // The target acceptance at `progress` in the run's current state (the state term's d as it is now).
  double target(double progress) const;
  // λ of ProposerWeights::length for the target (0 until set: the file without the term).
  void set_length_log(double length_log) { length_log_ = length_log; }
  double length_log() const { return length_log_; }
  double state() const { return state_ - state0_; }  // d of ProposerWeights::control_state (0 before the first window)
  // The first window's log share of improving hard-macro proposals (d's reference); NaN before it
  // closes or without the state term.
  double first_log_share() const { return state_seen_ ? state0_ : std::numeric_limits<double>::quiet_NaN(); }

 private:
  const ProposerWeights& w_;
  int evaluated_ = 0, accepted_ = 0, hard_ = 0, hard_improved_ = 0;
  double u_ = 0, length_log_ = 0;
  bool state_seen_ = false;
  double state_ = 0, state0_ = 0;
};

// One line of JSON per file (format "placerl-sa-proposer", version 1; "schedule_weights" only when
// they are not all zero, so files without them read as the annealer's own schedule), written atomically.
// Load throws ParseError naming the file and what is wrong (not a proposer file, wrong sizes,
// non-finite weights).
// `path` kShippedProposer ("shipped") is the proposer shipped with placerl: `sa-soft`'s kinds with the
// ES-trained schedule and acceptance controller (with its state term) and, since session 44, the
// kinds' late adjustment (late_kinds) of kShippedProposerFile (trained on the four flows designs,
// never on Ariane133; docs/learned_sa.md), embedded in the binaries at build time
// (ShippedProposerText). The session-32 file without the late adjustment stays committed as
// experiments/results/learned_sa/schedule_control_state_four_flows_proposer.json.
void SaveProposerWeights(const std::string& path, const ProposerWeights& w);
ProposerWeights LoadProposerWeights(const std::string& path);
ProposerWeights ParseProposerWeights(const std::string& text, const std::string& label);  // label names it in errors
inline constexpr const char* kShippedProposer = "shipped";
inline constexpr const char* kShippedProposerFile = "experiments/results/learned_sa/schedule_control_state_late_four_flows_proposer.json";
const std::string& ShippedProposerText();  // generated: search/CMakeLists.txt
std::string ProposerWeightsJson(const ProposerWeights& w);  // the file's content

// The uniform proposer's mixture as log-probabilities per kind: a soft move (soft_shift) with
// probability soft_prob, else TILOS's five by `action_probs` (swap, shift, mirror, move, shuffle);
// the pull kinds get `floor` (they are not in that mixture; > 0 so that a KL towards it is finite).
std::array<double, ProposerWeights::kKinds> MixtureLogPrior(double soft_prob, const std::vector<double>& action_probs,
                                                           double floor = 0.01);
// Weights whose policy is that prior at every context (bias = log-probability, other weights 0).
ProposerWeights WeightsOfPrior(const std::array<double, ProposerWeights::kKinds>& log_prior);

struct ProposerOptions {
  double learning_rate = 0.01;  // REINFORCE step on the normalised advantage; 0 = frozen
  int batch = 256;              // proposals per update
  // Entropy bonus (per proposal, on the normalised advantage's scale): keeps every kind
  // proposed now and then, so that a kind that stops paying can be unlearned. With a prior, the
  // bonus is −KL(π ‖ prior) instead of π's entropy: the policy is held near the prior rather than
  // near uniform.
  double entropy_coef = 0.05;
  // The prior's log-probabilities per kind (up to a constant; masked kinds ignored); all zero =
  // uniform, the plain entropy bonus.
  std::array<double, 8> log_prior{};
  double acceptance_decay = 1e-3;  // EMA weight of the recent acceptance rate feature
  // per_proposal: the reward as given. per_second: the reward minus ρ × the kind's mean time per
  // proposal, ρ = the running reward per second (the average-reward form of "improvement per CPU
  // second"): a kind that pays little for its time is proposed less. Its timings (steady clock)
  // make a run depend on the machine's speed.
  bool reward_per_second = false;
};

class LearnedProposer {
 public:
  // `legal[k]` false masks kind k. At least one kind must be legal (ConfigError otherwise).
  LearnedProposer(const ProposerWeights& w, const ProposerOptions& o, const std::array<bool, ProposerWeights::kKinds>& legal);

  // Samples the next kind for a run at `progress` ∈ [0, 1]. The context is refreshed every
  // 64 proposals (the features change slowly), so a proposal costs a uniform draw and a scan.
  int Sample(double progress, std::mt19937_64& rng);
  // The outcome of the last sampled proposal: `evaluated` false for a proposal that changed
  // nothing (illegal target, no-op); `accepted`; `reward` = (cost before − cost after) ÷ T
  // (0 when rejected or not evaluated).
  // `seconds`: how long the proposal took (used with reward_per_second; ignored when < 0).
  void Feedback(bool evaluated, bool accepted, double reward, double seconds = -1);
  // The kinds' mean time per proposal (reward_per_second; 0 before the first timing).
  double kind_seconds(int kind) const { return kind_seconds_[kind]; }
  // For the current proposal: picks one of `count` (≤ kCandidates) candidates whose features
  // are phi[i·kSelectFeatures + f]; the choice learns from the proposal's Feedback.
  int Select(const double* phi, int count, std::mt19937_64& rng);
  // For a one-macro hard move (ProposerWeights::hard_select): picks one of `count` (≤ kCandidates)
  // candidates whose features are phi[i·kHardSelectFeatures + f]. Frozen (trained by ES only).
  int SelectHard(const double* phi, int count, std::mt19937_64& rng) const;
  // For a `move`'s target cell (ProposerWeights::target_select): picks one of `count`
  // (≤ kCandidates) candidate cells whose features are phi[i·kTargetSelectFeatures + f]. Frozen.
  int SelectTarget(const double* phi, int count, std::mt19937_64& rng) const;

  // π(k | context) for a run at `progress` with acceptance rate `acceptance` (masked kinds 0).
  std::array<double, ProposerWeights::kKinds> Probabilities(double progress, double acceptance) const;
  const ProposerWeights& weights() const { return w_; }
  double acceptance_rate() const { return acceptance_; }
  struct KindStats {
    int64_t proposed = 0, evaluated = 0, accepted = 0;
    double reward = 0;  // Σ reward
  };
  const std::array<KindStats, ProposerWeights::kKinds>& stats() const { return stats_; }
  int64_t updates() const { return updates_; }

 private:
  void Refresh(double progress);
  void Update();
  ProposerWeights w_;
  ProposerOptions o_;
  std::array<bool, ProposerWeights::kKinds> legal_;
  std::array<double, ProposerWeights::kFeatures> features_{};
  std::array<double, ProposerWeights::kKinds> prob_{}, cumulative_{};
  std::array<double, ProposerWeights::kKinds> entropy_grad_{};  // ∂H/∂logit_k at the current context
  int since_refresh_ = 1 << 30;
  int last_kind_ = -1;
  double acceptance_ = 0.5;
  // REINFORCE: Σ over the batch of (advantage) · ∇ log π, with a running mean and variance of
  // the reward as baseline and scale.
  std::array<double, ProposerWeights::kKinds * ProposerWeights::kFeatures> grad_{};
  std::array<double, ProposerWeights::kSelectFeatures> select_grad_{};
  // ∇ log p(chosen candidate) of the current proposal (φ_chosen − Σ p_j φ_j); valid if selected_.
  std::array<double, ProposerWeights::kSelectFeatures> select_score_{};
  bool selected_ = false;
  int in_batch_ = 0;
  double reward_mean_ = 0, reward_var_ = 1;
  bool reward_seen_ = false;
  std::array<double, ProposerWeights::kKinds> kind_seconds_{};
  double rate_reward_ = 0, rate_seconds_ = 0;  // running means of the raw reward and of the seconds
  int64_t updates_ = 0;
  std::array<KindStats, ProposerWeights::kKinds> stats_{};
};

}  // namespace placerl::search
