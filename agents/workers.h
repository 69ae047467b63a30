// Several training processes on LibTorch c10d / Gloo, shared by gloo-train and place-train
// --workers: the process group of one rank (rendezvous by a FileStore in a directory, or by
// TCPStore from the usual MASTER_ADDR / MASTER_PORT / RANK / WORLD_SIZE so that the same code
// runs across machines), its collectives (agents::Collective for the learners, plus barrier and
// byte broadcast / gather for configs, checkpoints and best solutions), and the launcher that
// re-executes a binary once per rank, reaps the children, and stops all of them — with one
// line naming the rank — when one fails or makes no progress (heartbeat files) for a timeout.
// No torch include here (c10d's group is only forward-declared for gloo-train's tensors).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "agents/distributed.h"
#include "datasets/util/errors.h"

namespace c10d {
class ProcessGroupGloo;
}

namespace placerl::workers {

struct Rendezvous {
  int rank = 0, world_size = 1;
  std::string store_dir;    // FileStore in this directory (one machine), or
  std::string master_addr;  // TCPStore served by rank 0 at master_addr:master_port
  int master_port = 0;
  double timeout_s = 120;   // rendezvous, every collective and store read
};

// MASTER_ADDR, MASTER_PORT, RANK and WORLD_SIZE from the environment: true when all four are
// set (then `r` is filled, timeout_s untouched), false when none is; ConfigError when only
// some are or one is malformed.
bool RendezvousFromEnvironment(Rendezvous* r);

// A collective failed: a peer died, hung past the timeout, or left.
class PeerFailure : public Error {
 public:
  explicit PeerFailure(const std::string& what) : Error(what) {}
};

class ProcessGroup : public agents::Collective {
 public:
  // Joins the group (blocks until every rank has, or throws Error after timeout_s).
  explicit ProcessGroup(const Rendezvous& r);
  ~ProcessGroup() override;
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const override;
  int world_size() const override;
  void AllReduceSum(float* values, int64_t n) override;
  void AllReduceSum(double* values, int64_t n) override;
  void AllReduceMax(double* values, int64_t n) override;
  void Barrier();
  // `bytes` of rank `root` to every rank.
  void Broadcast(std::string* bytes, int root);
  // Every rank's `bytes`, in rank order, on every rank.
  std::vector<std::string> AllGather(const std::string& bytes);

  // Called about once a second while this rank waits in a collective (launched ranks pass
  // their Heartbeat: waiting for a slow or hung peer is progress; the peer is the one named).
  void SetHeartbeat(std::function<void()> heartbeat);

  c10d::ProcessGroupGloo& gloo();  // for code with tensors of its own (gloo-train)

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Heartbeats of the launched ranks: `dir`/progress.<rank>, rewritten by the rank whenever it
// makes progress; the launcher watches their modification times. No-op when dir is "".
void Heartbeat(const std::string& dir, int rank);

struct LaunchOptions {
  std::string exe;  // the binary to run once per rank (e.g. /proc/self/exe)
  std::string argv0;  // the ranks' argv[0] ("" = exe)
  int world_size = 2;
  std::function<std::vector<std::string>(int rank)> args;  // argv[1..] of rank r
  std::string heartbeat_dir;  // where the ranks call Heartbeat
  double timeout_s = 120;     // a rank without a heartbeat for this long is hung
  double grace_s = 3;         // after the first failure, how long the others may take to exit
};

// Runs the ranks and waits for them. Returns when every rank exited 0; otherwise kills the
// rest and throws Error("rank R exited with status S" / "... was killed by signal S" / "... made
// no progress for T s"; "stopped the other workers"). The children die with the launcher
// (PR_SET_PDEATHSIG).
void Launch(const LaunchOptions& options);

// A fresh directory /tmp/<stem>.XXXXXX, removed (with its files) on destruction.
class TempDirectory {
 public:
  explicit TempDirectory(const std::string& stem);
  ~TempDirectory();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace placerl::workers
