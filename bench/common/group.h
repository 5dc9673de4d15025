// The benchmark's own coordination between ranks, independent of sparcoll:
// barriers before timing, combining per-rank times / error counts / traffic,
// gathering the per-rank device lines. MPI ranks use MPI_COMM_WORLD; the local
// transport's ranks are threads of this process sharing a ThreadHub.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/options.h"

namespace scbench {

class Group {
 public:
  virtual ~Group() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Every rank gets every rank's string, in rank order. Collective: all ranks call it.
  virtual std::vector<std::string> allgather(const std::string& mine) = 0;

  void barrier() { allgather(std::string()); }
  // Combines one value per rank (every rank gets the result).
  double combine(double v, Combine how);
  double sum(double v);
  double max(double v) { return combine(v, Combine::Max); }
};

// Shared state of the threads of the local transport.
class ThreadHub {
 public:
  explicit ThreadHub(int nthreads) : n_(nthreads), slots_(nthreads) {}
  std::vector<std::string> allgather(int rank, const std::string& mine);
  int size() const { return n_; }

 private:
  const int n_;
  std::mutex m_;
  std::condition_variable cv_;
  int arrived_ = 0;
  uint64_t generation_ = 0;
  std::vector<std::string> slots_, result_;
};

class ThreadGroup final : public Group {
 public:
  ThreadGroup(ThreadHub& hub, int rank) : hub_(hub), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return hub_.size(); }
  std::vector<std::string> allgather(const std::string& mine) override { return hub_.allgather(rank_, mine); }

 private:
  ThreadHub& hub_;
  int rank_;
};

// MPI_COMM_WORLD (MPI must be initialised). Null without an MPI build.
std::unique_ptr<Group> makeMpiGroup();

}  // namespace scbench
