// neighbor_allgather_perf: the neighbour allgather of sparcoll/neighbor.h on
// a graph topology, in nccl-tests' format, on the shared driver
// (bench/common/driver.h). The graphs are the test catalogue's
// (tests/neighbor/graphs/nbr_graphs.h), named by --topo.
//
// Per data type (-d) and block size (-b..-e, x -f; the bytes each rank sends,
// count = size / element size), every algorithm of -A runs -r repetitions of
// -n calls. The algorithms of one repetition run back to back, in an order
// rotated every repetition, so drift and background load hit them alike. A
// repetition's time is the mean per call, combined over ranks with -a (max by
// default); the reported time is the median over repetitions, and a time
// ratio (/mpi, else /native) the median over repetitions of the two
// algorithms' times in the same repetition, which cancels load that drifts
// between them. One more call per algorithm is counted (scCommGetStats:
// messages, bytes, inter-node bytes sent per rank; native's and mpi's traffic
// is MPI's and not counted) and, with -c, checked against the sequential
// reference: block e of rank q's recv must hold rank sources[e]'s block exactly.
//
// The baseline "mpi" (mpi transport) is the MPI library alone: the blocking
// MPI_Neighbor_allgather on a dist-graph communicator this tool creates with
// the same edges, called directly, with none of sparcoll's dispatch, deadline
// or checks. "native" is sparcoll's call of MPI_Ineighbor_allgatherv, as users
// get it. The driver turns the mismatch check off unless SPARCOLL_CHECK says
// otherwise, so native is timed without the check's extra exchange.
//
//   mpirun -np 16 bench/neighbor_allgather_perf --topo moore:d=2,r=1 -b 8 -e 4M -f 4 -J out.jsonl
//   mpirun -np 16 bench/neighbor_allgather_perf --topo random:p=0.3 --ranks-per-node 4 -A naive,hierarchical
//   bench/neighbor_allgather_perf -t local -p 9 --topo file:edges.txt -d all -c 1
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <climits>
#include <map>

#ifdef SPARCOLL_HAVE_MPI
#include <mpi.h>
#endif

#include "common/driver.h"
#include "common/json.h"
#include "common/report.h"
#include "common/table.h"
#include "common/timing.h"
#include "nbr_graphs.h"
#include "sparcoll/neighbor.h"

namespace {

using namespace scbench;

// scNbrAlgo_t order, then the MPI library's own call (mpi transport).
const std::vector<std::string> kAlgos{"auto", "naive", "combining", "hierarchical", "native", "mpi"};
const std::string kMpi = "mpi";

scNbrAlgo_t algoOf(const std::string& name) {
  return scNbrAlgo_t(std::find(kAlgos.begin(), kAlgos.end(), name) - kAlgos.begin());
}

// Element k of rank q's block: integers in [1, 100], exact in every type and
// never 0, so a block left unwritten (recv is zeroed first) is caught.
double value(int q, uint64_t k, uint64_t seed) { return double(1 + mix(k, seed * 1000003 + uint64_t(q)) % 100); }

// One (type, size, algorithm): its times over the repetitions, its traffic
// per rank (mean and max over ranks) and its check.
struct Row {
  scDataType_t dtype;
  size_t bytes = 0, count = 0;
  std::string algo, autoChoice;
  // algo resolved once: the timed loop compares no strings (they cost the
  // library's calls tens of instructions each that the baseline's did not).
  bool mpi = false;
  scNbrAlgo_t id = scNbrAuto;
  uint64_t seed = 0;  // of the data
  std::vector<double> repUs;
  double timeUs = 0, algbw = 0;
  int iters = 0;
  double msgsAvg = 0, msgsMax = 0, sentAvg = 0, interAvg = 0, interMax = 0, interMsgsAvg = 0;
  long long wrong = -1;
  bool counted() const { return algo != "native" && algo != kMpi; }
};

// nccl-tests' columns (the out-of-place side; busbw = algbw, there is no bus
// factor for a neighbourhood), then the traffic and auto's choice.
const Table kBlock({{"size", 12, 0},
                    {"count", 12, 2},
                    {"type", 8, 2},
                    {"redop", 6, 2},
                    {"root", 6, 2},
                    {"time", 7, 2},
                    {"algbw", 6, 2},
                    {"busbw", 6, 2},
                    {"#wrong", 5, 2, false, 1},
                    {"msgs", 8, 2},
                    {"inter(B)", 12, 2},
                    {"auto", 12, 2, true}});
// The summary's ratio column is the time over the baseline's: mpi where it ran, else native.
Table summaryTable(const std::string& base) {
  return Table({{"size", 12, 0},
                {"type", 8, 2},
                {"algorithm", 17, 2, true},
                {"time(us)", 9, 1},
                {"min", 9, 1},
                {"max", 9, 1},
                {"/" + base, 8, 1},
                {"msgs", 7, 1},
                {"naive/msgs", 10, 1},
                {"inter(B)", 11, 1},
                {"naive/inter", 11, 1},
                {"#wrong", 6, 1}});
}

// A table line without the blanks a left-aligned last column leaves.
std::string trimmed(std::string line) {
  line.erase(line.find_last_not_of(' ') + 1);
  return line;
}

std::string fmtSeconds(double s) { return fmt("%g s", s); }

std::string ratio(double num, double den) { return num > 0 && den > 0 ? fmt("%.2f", num / den) : "-"; }

// a's time over b's, paired by repetition (the two ran back to back), the median over repetitions.
double pairedRatio(const Row& a, const Row& b) {
  std::vector<double> q;
  for (size_t i = 0; i < a.repUs.size() && i < b.repUs.size(); ++i)
    if (b.repUs[i] > 0) q.push_back(a.repUs[i] / b.repUs[i]);
  return median(q);
}

class NeighborAllGather final : public Tool {
 public:
  ToolSpec spec() const override {
    return {"neighbor_allgather_perf",
            "NeighborAllGather",
            kAlgos,
            /*hasOp=*/false,
            "native",
            /*flags=*/"befnwcdatpDTJA",
            {scTransportMpi, scTransportNccl, scTransportLocal},
            /*types: all*/ {},
            /*oneType=*/false,
            "(neighbour allgather on a graph topology; sizes accept K/M/G)"};
  }

  void addFlags(FlagSet& f, Options& o) override {
    o.minBytes = 8;
    o.maxBytes = size_t(4) << 20;
    o.stepFactor = 4;
    o.warmupIters = 2;
    o.algorithms = kAlgos;
    f.add({'b', "", "", "smallest block each rank sends, bytes (default 8)", nullptr});
    f.add({'e', "", "", "largest block each rank sends, bytes (default 4M)", nullptr});
    f.add({'f', "", "", "factor between sizes (default 4)", nullptr});
    f.add({'n', "", "", "calls per repetition (default 20)", nullptr});
    f.add({'w', "", "", "untimed calls per algorithm and size, before the repetitions (default 2)", nullptr});
    f.add(
        {'c', "", "", "check one call per algorithm and size against the reference (default 1; 0: no check)", nullptr});
    f.add({'a', "", "", "combine each repetition's per-rank times: rank0, mean, min, max (default 3 = max)", nullptr});
    f.add({'A', "", "",
           "comma-separated: auto naive combining hierarchical native mpi (default: all;\n"
           "mpi = MPI_Neighbor_allgather called directly, mpi transport only)",
           nullptr});
    f.add({'J', "", "", "JSON lines, one per (type, size, algorithm)", nullptr});
    f.add({0, "inject-error", "", "", [this](const std::string&) { inject_ = true; }, true});
    f.section("neighbourhood options:");
    f.add({0, "topo", "<spec>",
           "moore:d=D,r=R[,periodic=1] | random:p=X[,seed=S] | file:PATH (edge list,\n"
           "one 'i j' per line for the edge i -> j) (default moore:d=2,r=1)",
           [this](const std::string& v) { topoText_ = v; }});
    f.add({0, "ranks-per-node", "<k>", "virtual nodes of k consecutive ranks (SPARCOLL_RANKS_PER_NODE)",
           [this](const std::string& v) { ranksPerNode_ = int(parseInt(v, "--ranks-per-node", 1, 1 << 20)); }});
    f.add({'r', "reps", "<n>", "repetitions; the reported time is their median (default 5)",
           [this](const std::string& v) { reps_ = int(parseInt(v, "-r (reps)", 1, 1 << 20)); }});
    f.add({0, "rep-time", "<s>",
           "at most this many seconds per repetition of one algorithm at one size:\n"
           "fewer than -n calls where the warm-up calls say -n would take longer (default 0: off)",
           [this](const std::string& v) { repTime_ = parseNumber(v, "--rep-time", 0, 3600); }});
    f.add({0, "min-rep-time", "<s>",
           "at least this many seconds per repetition of one algorithm at one size:\n"
           "more than -n calls where the warm-up calls say -n would take less (default 0: off;\n"
           "a repetition shorter than the scheduler's tick is one context switch from 1.5x)",
           [this](const std::string& v) { minRepTime_ = parseNumber(v, "--min-rep-time", 0, 3600); }});
  }

  void validate(Options& o) override {
    if (repTime_ > 0 && minRepTime_ > repTime_)
      throw UsageError{"--min-rep-time " + fmtSeconds(minRepTime_) + " exceeds --rep-time " + fmtSeconds(repTime_)};
    std::string err;
    if (!ntest::parseSpec(topoText_, &spec_, &err)) throw UsageError{err};
    // mpi, the MPI library's own call, exists on the mpi transport only: left out of the
    // default list elsewhere, an error when asked for.
    if (const auto m = std::find(o.algorithms.begin(), o.algorithms.end(), kMpi); m != o.algorithms.end()) {
#ifdef SPARCOLL_HAVE_MPI
      const bool available = o.transport == scTransportMpi;
#else
      const bool available = false;
#endif
      if (!available && o.algorithms != kAlgos)
        throw UsageError{"-A mpi (MPI_Neighbor_allgather called directly) needs the mpi transport (-t mpi)"};
      if (!available) o.algorithms.erase(m);
    }
    base_ = std::find(o.algorithms.begin(), o.algorithms.end(), kMpi) != o.algorithms.end() ? kMpi : "native";
    if (base_ == kMpi && o.maxBytes > size_t(INT_MAX))
      throw UsageError{"-A mpi: -e " + std::to_string(o.maxBytes) + " exceeds MPI's int counts (at most " +
                       std::to_string(INT_MAX) + " bytes per block)"};
    for (scDataType_t t : o.dtypes)
      if (o.minBytes < sc::dtypeSize(t))
        throw UsageError{"-b " + std::to_string(o.minBytes) + " is less than one " + typeName(t) +
                         " element: a block needs at least one"};
    if (ranksPerNode_ > 0 && setenv("SPARCOLL_RANKS_PER_NODE", std::to_string(ranksPerNode_).c_str(), 1) != 0)
      throw UsageError{"cannot set SPARCOLL_RANKS_PER_NODE"};
    // The ranks an edge list needs, where the run's size is known before it starts.
    const char* world = std::getenv("OMPI_COMM_WORLD_SIZE");
    if (!world) world = std::getenv("PMI_SIZE");
    const int P = o.transport == scTransportLocal ? o.localRanks : world ? std::atoi(world) : 0;
    ntest::Graph g;
    if (P > 0 && !ntest::build(spec_, P, &g, &err)) throw UsageError{err};
  }

  double hostBytesPerRank(const Options& o, int nranks) const override {
    ntest::Graph g;
    std::string err;
    if (!ntest::build(spec_, nranks, &g, &err)) return 0;  // reported by runRank
    size_t in = 0;
    for (const auto& s : g.src) in = std::max(in, s.size());
    // send, recv (indegree blocks) and, for device buffers, the host copy of recv for the check.
    return double(o.maxBytes) * double(1 + in + (o.deviceBuffers ? in : 0));
  }

  long long runRank(Group& g, RankState& rs, const Context& ctx) override;

 private:
  // One rank's run (local ranks are threads sharing this tool).
  struct Run {
    ntest::Graph graph;
    scTopology_t topo = nullptr;
    double meanIn = 0;  // mean in-degree over ranks: the blocks a rank receives
#ifdef SPARCOLL_HAVE_MPI
    MPI_Comm graphComm = MPI_COMM_NULL;  // the baseline's dist-graph communicator (-A mpi)
#endif
  };
  // One call of r's algorithm: sparcoll's, or MPI's own for the baseline.
  void callOnce(RankState& rs, const Run& run, const Row& r, const void* send, void* recv) const;
  void header(Group& g, RankState& rs, const Context& ctx, const Run& run, double createSeconds) const;
  Row measureTraffic(Group& g, RankState& rs, const Options& o, const Run& run, Row r, const void* send,
                     void* recv) const;
  void summaryRows(const std::vector<Row>& rows) const;
  void blocks(const Context& ctx, const std::vector<Row>& rows) const;
  void writeJson(const Context& ctx, const Run& run, const std::vector<Row>& rows) const;

  std::string topoText_ = "moore:d=2,r=1";
  std::string base_ = "native";  // the ratios' baseline: mpi where it runs
  ntest::Spec spec_;
  int ranksPerNode_ = 0, reps_ = 5;
  double repTime_ = 0, minRepTime_ = 0;
  static constexpr double kMaxRepCalls = 1e6;  // --min-rep-time's most calls per repetition
  bool inject_ = false;
};

long long NeighborAllGather::runRank(Group& g, RankState& rs, const Context& ctx) {
  const Options& o = ctx.o;
  std::string err;
  Run run;
  if (!ntest::build(spec_, rs.nranks, &run.graph, &err)) throw UsageError{err};
  const auto& src = run.graph.src[size_t(rs.rank)];
  const auto& dst = run.graph.dst[size_t(rs.rank)];
  size_t edges = 0;
  for (const auto& s : run.graph.src) edges += s.size();
  run.meanIn = double(edges) / rs.nranks;

  g.barrier();
  const double t0 = now();
  if (const scResult_t r =
          scTopologyCreate(&run.topo, rs.comm, int(src.size()), src.data(), int(dst.size()), dst.data());
      r != scSuccess)
    callFailed(rs, "scTopologyCreate (" + run.graph.name + ")", r);
  const double createSeconds = g.max(now() - t0);
#ifdef SPARCOLL_HAVE_MPI
  if (base_ == kMpi) {
    int none = 0;
    const int rc = MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, int(src.size()), src.empty() ? &none : src.data(),
                                                  MPI_UNWEIGHTED, int(dst.size()), dst.empty() ? &none : dst.data(),
                                                  MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &run.graphComm);
    if (rc != MPI_SUCCESS) fatal("MPI_Dist_graph_create_adjacent failed (the -A mpi baseline)");
  }
#endif
  header(g, rs, ctx, run, createSeconds);

  Buffer send = rs.alloc(o.maxBytes), recv = rs.alloc(std::max<size_t>(1, src.size() * o.maxBytes));
  std::vector<Row> rows;
  uint64_t seed = 1;
  for (scDataType_t dt : o.dtypes) {
    const size_t esz = sc::dtypeSize(dt);
    for (size_t size : sweepSizes(o)) {
      const size_t count = size / esz;
      rs.write(send.data(), count, dt, [&](uint64_t k) { return value(rs.rank, k, seed); });
      std::vector<Row> here;
      for (const auto& name : o.algorithms) {
        Row r;
        r.dtype = dt;
        r.count = count;
        r.bytes = count * esz;
        r.algo = name;
        r.mpi = name == kMpi;
        r.id = algoOf(name);
        r.seed = seed;
        here.push_back(r);
      }
      auto call = [&](const Row& r) { callOnce(rs, run, r, send.data(), recv.data()); };
      // Warm-up, which also sizes each algorithm's repetitions under --rep-time
      // and --min-rep-time (the cap wins; every rank takes the slowest rank's
      // time per call, so all make the same number of calls).
      for (Row& r : here) {
        r.iters = o.iters;
        if (o.warmupIters == 0) continue;
        g.barrier();
        const double w0 = now();
        for (int i = 0; i < o.warmupIters; ++i) call(r);
        rs.sync();
        const double perCall = g.max((now() - w0) / o.warmupIters);
        if (perCall <= 0) continue;
        double n = o.iters;
        if (minRepTime_ > 0) n = std::max(n, std::min(minRepTime_ / perCall, kMaxRepCalls));
        if (repTime_ > 0) n = std::min(n, std::max(repTime_ / perCall, 1.0));
        r.iters = int(n);
      }
      for (int rep = 0; rep < reps_; ++rep)
        for (size_t j = 0; j < here.size(); ++j) {
          Row& r = here[(j + size_t(rep)) % here.size()];
          r.repUs.push_back(timeCalls(g, rs, r.iters, o.combine, [&] { call(r); }).timeUs);
        }
      for (Row& r : here) {
        r.timeUs = median(r.repUs);
        r.algbw = r.timeUs > 0 ? run.meanIn * double(r.bytes) / (r.timeUs * 1e3) : 0;
        scNbrAlgo_t chosen = scNbrAuto;
        if (r.algo == "auto" && scNeighborAlgoFor(run.topo, r.bytes, &chosen) == scSuccess)
          r.autoChoice = kAlgos[chosen];
        r = measureTraffic(g, rs, o, run, r, send.data(), recv.data());
        rows.push_back(r);
      }
      if (g.rank() == 0) summaryRows(here);
      ++seed;
    }
  }
  if (const scResult_t r = scTopologyDestroy(run.topo); r != scSuccess) callFailed(rs, "scTopologyDestroy", r);
#ifdef SPARCOLL_HAVE_MPI
  if (run.graphComm != MPI_COMM_NULL) MPI_Comm_free(&run.graphComm);
#endif
  long long wrong = 0;
  for (const Row& r : rows) wrong += std::max(0LL, r.wrong);
  if (g.rank() == 0) {
    blocks(ctx, rows);
    if (!o.jsonFile.empty()) writeJson(ctx, run, rows);
  }
  return wrong;
}

void NeighborAllGather::callOnce(RankState& rs, const Run& run, const Row& r, const void* send, void* recv) const {
  if (r.mpi) {
#ifdef SPARCOLL_HAVE_MPI
    const size_t bytes = r.count * sc::dtypeSize(r.dtype);  // at most -e, checked against int in validate()
    char none = 0;                                          // MPI rejects NULL buffers even for zero bytes
    if (MPI_Neighbor_allgather(send ? send : &none, int(bytes), MPI_BYTE, recv ? recv : &none, int(bytes), MPI_BYTE,
                               run.graphComm) != MPI_SUCCESS)
      fatal("MPI_Neighbor_allgather failed (the -A mpi baseline)");
#endif
    return;
  }
  const scResult_t rc = scNeighborAllGather(send, r.count, recv, r.dtype, r.id, run.topo, rs.stream);
  if (rc != scSuccess)
    callFailed(rs,
               "scNeighborAllGather (" + r.algo + ", " + typeName(r.dtype) + ", " + std::to_string(r.count) +
                   " elements)",
               rc);
}

// One counted call of r's algorithm on a zeroed recv, then its check.
Row NeighborAllGather::measureTraffic(Group& g, RankState& rs, const Options& o, const Run& run, Row r,
                                      const void* send, void* recv) const {
  const auto& src = run.graph.src[size_t(rs.rank)];
  const size_t n = r.count, esz = sc::dtypeSize(r.dtype);
  rs.zero(recv, std::max<size_t>(1, src.size() * n * esz));
  g.barrier();
  scCommResetStats(rs.comm);
  callOnce(rs, run, r, send, recv);
  rs.sync();
  scStats_t st{};
  scCommGetStats(rs.comm, &st);
  r.msgsAvg = g.combine(double(st.msgsSent), Combine::Avg);
  r.msgsMax = g.max(double(st.msgsSent));
  r.sentAvg = g.combine(double(st.bytesSent), Combine::Avg);
  r.interAvg = g.combine(double(st.interNodeBytesSent), Combine::Avg);
  r.interMax = g.max(double(st.interNodeBytesSent));
  r.interMsgsAvg = g.combine(double(st.interNodeMsgsSent), Combine::Avg);
  if (!o.check) return r;
  // --inject-error: one element of the last rank's recv flipped, to prove the check works.
  if (inject_ && rs.rank == rs.nranks - 1 && !src.empty()) {
    char* p = static_cast<char*>(recv) + (src.size() * n / 2) * esz;
    char b = 0;
    copyFromBuffer(&b, p, 1, rs.device);
    b ^= 0x41;
    copyToBuffer(p, &b, 1, rs.device);
  }
  const uint64_t bad =
      rs.countWrong(recv, src.size() * n, r.dtype, [&](uint64_t i) { return value(src[i / n], i % n, r.seed); });
  r.wrong = (long long)g.sum(double(bad));
  return r;
}

void NeighborAllGather::header(Group& g, RankState& rs, const Context& ctx, const Run& run,
                               double createSeconds) const {
  const Options& o = ctx.o;
  int k = 0, theta = 0, group = 1;
  scTopologyFriendGroup(run.topo, &k, &theta, &group, nullptr);
  const auto lines = g.allgather(rankLine(rs, ctx.info));
  const auto groups = g.allgather(std::to_string(group));
  if (g.rank() != 0) return;
  Report(o, ctx.info).header(lines);
  size_t edges = 0, maxOut = 0, maxIn = 0;
  for (size_t q = 0; q < run.graph.dst.size(); ++q) {
    edges += run.graph.dst[q].size();
    maxOut = std::max(maxOut, run.graph.dst[q].size());
    maxIn = std::max(maxIn, run.graph.src[q].size());
  }
  std::map<int, int> bySize;  // group size -> ranks in such groups
  for (const auto& s : groups) ++bySize[std::stoi(s)];
  std::string grouped;
  for (const auto& [size, ranks] : bySize)
    if (size > 1) grouped += fmt("%s%d in groups of %d", grouped.empty() ? "" : ", ", ranks, size);
  const char* rpn = std::getenv("SPARCOLL_RANKS_PER_NODE");
  const char* machines = std::getenv("SPARCOLL_MACHINES");
  std::printf(
      "# topology: %s (--topo %s): %zu edges, out-degree mean %.2f max %zu, in-degree max %zu;\n"
      "#   created in %.2f ms (max over ranks)\n",
      run.graph.name.c_str(), spec_.text.c_str(), edges, run.meanIn, maxOut, maxIn, createSeconds * 1e3);
  std::printf("# nodes: %s\n",
              rpn && *rpn ? fmt("%s consecutive ranks each (SPARCOLL_RANKS_PER_NODE)", rpn).c_str()
              : machines && *machines
                  ? fmt("%s blocks of consecutive ranks, each a machine (SPARCOLL_MACHINES)", machines).c_str()
                  : "the machine's (MPI shared-memory split, else the host name)");
  std::printf("# combining: k = %d, theta = %d; ranks in friend groups: %s\n", k, theta,
              grouped.empty() ? "none" : grouped.c_str());
  std::printf(
      "# time: median over %d repetitions of the mean of -n calls (%s over ranks per repetition); "
      "algbw = mean in-degree x size / time;\n# msgs, inter(B): messages and inter-node bytes sent per rank "
      "per call (mean over ranks; native, mpi: MPI's own, not counted);\n"
      "# mpi: MPI_Neighbor_allgather called directly on a dist-graph communicator of the same edges\n#\n",
      reps_,
      o.combine == Combine::Max   ? "max"
      : o.combine == Combine::Avg ? "mean"
      : o.combine == Combine::Min ? "min"
                                  : "rank 0's");
  std::printf(
      "# Summary, size by size: time(us) median [min, max] over repetitions; /%s: time over %s's\n"
      "# in the same repetition, the median over repetitions;\n"
      "# naive/msgs, naive/inter: naive's messages and inter-node bytes per rank over this algorithm's\n",
      base_.c_str(), base_.c_str());
  std::printf("%s\n", summaryTable(base_).titles("# ").c_str());
}

void NeighborAllGather::summaryRows(const std::vector<Row>& rows) const {
  const Row* base = nullptr;
  const Row* naive = nullptr;
  const Table summary = summaryTable(base_);
  for (const Row& r : rows) {
    if (r.algo == base_) base = &r;
    if (r.algo == "naive") naive = &r;
  }
  for (const Row& r : rows) {
    const auto [lo, hi] = std::minmax_element(r.repUs.begin(), r.repUs.end());
    const std::string name = r.algo == "auto" ? "auto>" + r.autoChoice : r.algo;
    std::printf("%s\n", summary
                            .row({fmt("%zu", r.bytes), typeName(r.dtype), name, Report::formatTime(r.timeUs),
                                  Report::formatTime(*lo), Report::formatTime(*hi),
                                  r.algo == base_ || !base ? "-" : fmt("%.2f", pairedRatio(r, *base)),
                                  r.counted() ? fmt("%.2f", r.msgsAvg) : "-",
                                  r.counted() && naive ? ratio(naive->msgsAvg, r.msgsAvg) : "-",
                                  r.counted() ? fmt("%.0f", r.interAvg) : "-",
                                  r.counted() && naive ? ratio(naive->interAvg, r.interAvg) : "-",
                                  r.wrong >= 0 ? fmt("%lld", r.wrong) : "N/A"},
                                 "# ")
                            .c_str());
  }
}

// nccl-tests' blocks, one per algorithm.
void NeighborAllGather::blocks(const Context& ctx, const std::vector<Row>& rows) const {
  Report report(ctx.o, ctx.info);
  std::printf("#\n");
  for (const auto& algo : ctx.o.algorithms) {
    std::printf("# Algorithm: %s\n#\n%s\n", algo.c_str(), trimmed(kBlock.titles("# ")).c_str());
    std::printf("%s\n", trimmed(kBlock.row({"(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(/rank)",
                                            "(/rank)", ""},
                                           "# "))
                            .c_str());
    long long wrong = 0;
    double bw = 0;
    int n = 0;
    for (const Row& r : rows) {
      if (r.algo != algo) continue;
      wrong += r.wrong > 0;
      bw += r.algbw;
      ++n;
      std::printf("%s\n",
                  trimmed(kBlock.row(
                              {fmt("%zu", r.bytes), fmt("%zu", r.count), typeName(r.dtype), "none", "-1",
                               Report::formatTime(r.timeUs), fmt("%.2f", r.algbw), fmt("%.2f", r.algbw),
                               r.wrong >= 0 ? fmt("%lld", r.wrong) : "N/A", r.counted() ? fmt("%.2f", r.msgsAvg) : "-",
                               r.counted() ? fmt("%.0f", r.interAvg) : "-", r.algo == "auto" ? r.autoChoice : ""}))
                      .c_str());
    }
    report.endBlock(wrong, n ? bw / n : 0.0);
  }
}

void NeighborAllGather::writeJson(const Context& ctx, const Run& run, const std::vector<Row>& rows) const {
  const char* rpn = std::getenv("SPARCOLL_RANKS_PER_NODE");
  std::map<std::pair<int, size_t>, const Row*> native, mpi, naive;
  for (const Row& r : rows) {
    if (r.algo == "native") native[{int(r.dtype), r.bytes}] = &r;
    if (r.algo == kMpi) mpi[{int(r.dtype), r.bytes}] = &r;
    if (r.algo == "naive") naive[{int(r.dtype), r.bytes}] = &r;
  }
  std::vector<JsonObject> lines;
  for (const Row& r : rows) {
    const auto [lo, hi] = std::minmax_element(r.repUs.begin(), r.repUs.end());
    JsonObject j;
    j.add("tool", "neighbor_allgather_perf").add("transport", transportName(ctx.info.transport));
    j.add("nranks", ctx.info.nranks).add("device_buffers", ctx.info.device);
    j.add("topo", spec_.text).add("topology", run.graph.name).add("ranks_per_node", rpn ? std::atoi(rpn) : 0);
    j.add("type", typeName(r.dtype)).add("size_bytes", r.bytes).add("count", r.count).add("algorithm", r.algo);
    j.add("auto_choice", r.autoChoice).add("time_us", r.timeUs).add("time_us_min", *lo).add("time_us_max", *hi);
    // Every repetition's time, in the run's order: the algorithms of a repetition ran back to
    // back, so ratios paired by repetition cancel the load that drifts between repetitions.
    std::string reps;
    for (double us : r.repUs) reps += (reps.empty() ? "" : ",") + fmt("%.2f", us);
    j.add("reps", int(r.repUs.size())).add("rep_us", reps).add("iters", r.iters).add("algbw_gbps", r.algbw);
    j.add("traffic_counted", r.counted()).add("msgs_per_rank_avg", r.msgsAvg).add("msgs_per_rank_max", r.msgsMax);
    j.add("bytes_sent_per_rank_avg", r.sentAvg).add("inter_node_bytes_per_rank_avg", r.interAvg);
    j.add("inter_node_bytes_per_rank_max", r.interMax).add("inter_node_msgs_per_rank_avg", r.interMsgsAvg);
    if (r.wrong >= 0) j.add("wrong", r.wrong);
    else j.add("wrong", nullptr);
    const auto n = native.find({int(r.dtype), r.bytes});
    if (n != native.end() && r.algo != "native") j.add("time_ratio_to_native", pairedRatio(r, *n->second));
    const auto m = mpi.find({int(r.dtype), r.bytes});
    if (m != mpi.end() && r.algo != kMpi) j.add("time_ratio_to_mpi", pairedRatio(r, *m->second));
    const auto v = naive.find({int(r.dtype), r.bytes});
    if (v != naive.end() && r.counted() && r.msgsAvg > 0) j.add("msgs_naive_over_this", v->second->msgsAvg / r.msgsAvg);
    if (v != naive.end() && r.counted() && r.interAvg > 0)
      j.add("inter_bytes_naive_over_this", v->second->interAvg / r.interAvg);
    lines.push_back(std::move(j));
  }
  std::string err;
  if (!writeJsonLines(ctx.o.jsonFile, lines, &err)) fatal(err);
  std::printf("# JSON lines written to %s\n", ctx.o.jsonFile.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  NeighborAllGather tool;
  return scbench::run(argc, argv, tool);
}
