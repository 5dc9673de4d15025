// What sparcoll-tune measures, on every rank of the run: ping-pong between
// pairs of ranks, the dense collectives with each explicit algorithm, sparse
// allreduce and DSOP with each of theirs, and the neighbourhood probe (naive
// against combining on the complete graph, for the message overhead). Every point is timed the same way
// (timeTogether): warm-up, then runs of back-to-back calls until a time budget
// is spent (at least minRuns, at most maxRuns runs); a run's time per call is
// the maximum over ranks, and the point's time is the median over runs. The
// algorithms of one collective and size take turns, a run each, in an order
// rotated every turn.
#pragma once

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "common/group.h"
#include "common/rank.h"
#include "sparcoll/neighbor.h"

namespace sctune {

struct Point {
  std::string collective;  // "pingpong", "allreduce", "reduce_scatter", "allgather", "broadcast", "sparse_allreduce",
                           // "dsop", "neighbor_allgather" (the probe)
  std::string algorithm;   // the library's name (pingpong: the level, "intra" or "inter")
  size_t count = 0;        // as scEstimateTime takes it (pingpong: bytes)
  double bytes = 0;        // the tuning file's "bytes" (pingpong: message bytes)
  double density = 0;      // sparse allreduce only
  double seconds = 0;      // median over runs (pingpong: one way, half the round trip)
  int runs = 0;
  long batch = 0;  // calls per run
  // neighbor_allgather: the model's terms for this algorithm on the probe's
  // topology (scNbrCostTerms_t: rounds, extra messages, blocks, shared
  // blocks; intra, inter).
  bool hasTerms = false;
  scNbrCostTerms_t terms{};
  // neighbor_allgather: the communicator's own prediction for the point
  // (scTopologyEstimateTime) and auto's pick there, as the run measured it
  // (--validate reports them: that communicator loaded the file).
  double predicted = NAN;
  std::string autoPick = "";
};

struct Plan {
  std::vector<size_t> sizes;        // dense and ping-pong bytes
  std::vector<size_t> sparseSizes;  // sparse allreduce: N x 4 bytes
  std::vector<double> densities;
  std::vector<size_t> dsopSizes;  // n = m
  bool denseOnly = false;
  bool native = true;    // measure `native` (device-local communicators on several GPUs have none)
  double budget = 0.25;  // seconds per point
  int minRuns = 3, maxRuns = 20;
};

// Which machine each rank is on, as a small id (0 = rank 0's), the same on
// every rank: MPI_Comm_split_type(SHARED) under MPI, host names otherwise.
// SPARCOLL_MACHINES=M, which sets the library's count of machines, splits the
// ranks into M blocks of consecutive ranks here too (to try the two-level fit
// on one machine).
std::vector<int> machinesOf(scbench::Group& g, bool mpi);

// The tuning file's names and the library's enums.
const std::vector<std::string>& denseAlgorithms(const std::string& collective);  // without auto
int denseAlgoId(const std::string& name);                                        // scAlgo_t
std::vector<std::string> sparseAlgorithms();                                     // without auto
int sparseAlgoId(const std::string& name);                                       // scSparseAlgo_t
std::vector<std::string> dsopAlgorithms();                                       // without auto
int dsopAlgoId(const std::string& name);                                         // scDsopAlgo_t

// "12.3 us", "4.56 ms"; "1 KiB", "256 MiB", "1000 B" (for printing).
std::string humanTime(double seconds);
std::string humanBytes(double bytes);

class Sweep {
 public:
  Sweep(scbench::Group& g, scbench::RankState& rs, const Plan& plan) : g_(g), rs_(rs), plan_(plan) {}

  // Ping-pong between ranks a and b (a != b), at level "intra" or "inter".
  void pingpong(int a, int b, const std::string& level, std::vector<Point>& out);
  void dense(std::vector<Point>& out);
  void sparse(std::vector<Point>& out);
  void dsop(std::vector<Point>& out);
  // The neighbourhood probe: naive and combining on the complete graph of
  // the communicator's ranks, at the dense sizes of at most kProbeMaxBytes
  // (the smallest dense size when there are none), each point with both
  // algorithms' terms. Measures nothing (a line on rank 0 says so) when
  // combining forms no friend groups there: then it would run naive's
  // messages and tell nothing about a saved one.
  void neighbor(std::vector<Point>& out);
  static constexpr size_t kProbeMaxBytes = 4096;
  // dense, the neighbourhood probe, then (unless the plan is dense-only)
  // sparse and dsop, each under a header line on rank 0: the sweep both
  // modes run.
  void collectives(std::vector<Point>& out);

  // The sizes the dense sweep uses for a collective (count 0 skipped): the
  // count passed to the call and the full vector's bytes per rank.
  static bool denseCount(const std::string& coll, size_t bytes, int P, size_t* count, double* fullBytes);

  // Prints one line per point on rank 0 as the sweep goes (progress).
  bool verbose = true;

  // The points of one collective and size, calls[i] making a call of pts[i]'s
  // algorithm: each one's time, runs and batch filled in. Collective over
  // the group: every rank passes the same points.
  std::vector<Point> timeTogether(std::vector<Point> pts, const std::vector<std::function<void()>>& calls);

 private:
  scbench::Group& g_;
  scbench::RankState& rs_;
  const Plan& plan_;
};

}  // namespace sctune
