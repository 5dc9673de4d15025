// Neighbour allgather and allgatherv against the sequential reference, on
// every topology of the catalogue (Moore d = 1..3, r = 1..2, periodic and
// not; Erdős–Rényi p = 0.05..0.6; a star; degree 0; multi-edges and
// self-loops; a sparse-matrix halo) with every algorithm, for P = 1..9 (one P
// per mpirun entry). Virtual nodes make hierarchical cut blocks into chunks
// on one machine; the knobs force friend groups of several sizes.
#include "dense/dense_util.h"
#include "nbr_check.h"

namespace ntest {
namespace {

class NbrGrid : public testing::TestWithParam<int> {};

// Runs `cases` on every graph, every algorithm, each graph's topology created once.
void runGrid(int P, const std::vector<Graph>& graphs, const std::vector<Case>& cases) {
  const scConfig_t cfg = dtest::config(60);
  sctest::run(
      P,
      [&](scComm_t comm, int rank) {
        for (const Graph& g : graphs) {
          scTopology_t topo = makeTopology(comm, g, rank);
          if (!topo) return;
          bool ok = true;
          for (scNbrAlgo_t a : kAllAlgos)
            for (Case c : cases) {
              c.algo = a;
              if (ok) ok = checkCall(comm, topo, g, rank, c);
            }
          EXPECT_EQ(scTopologyDestroy(topo), scSuccess);
          if (!ok) return;
        }
      },
      &cfg);
}

const std::vector<Case> kSmallCases = {
    {scNbrAuto, scInt8, 1, false, 1},      {scNbrAuto, scFloat32, 5, true, 2}, {scNbrAuto, scFloat64, 0, false, 3},
    {scNbrAuto, scBfloat16, 33, false, 4}, {scNbrAuto, scUint32, 0, true, 5},
};

TEST_P(NbrGrid, Catalogue) {
  const int P = GetParam();
  DT_SKIP_UNLESS_RUNS(P);
  runGrid(P, catalogue(P), kSmallCases);
}

// The catalogue once per value of a knob.
void runPerKnob(int P, const char* knob, std::vector<const char*> values, const std::vector<Case>& cases) {
  for (const char* value : values) {
    SCOPED_TRACE(std::string(knob) + "=" + value);
    dtest::ScopedEnv env(knob, value);
    runGrid(P, catalogue(P), cases);
  }
}

// Virtual nodes of 2 and 3 ranks: hierarchical's three levels with chunks.
TEST_P(NbrGrid, VirtualNodes) {
  const int P = GetParam();
  DT_SKIP_UNLESS_RUNS(P);
  runPerKnob(P, "SPARCOLL_RANKS_PER_NODE", {"2", "3"},
             {{scNbrAuto, scInt32, 7, false, 6}, {scNbrAuto, scUint8, 3, true, 7}});
}

// Friend groups forced to form: k = 2..4 with theta 0, and k = 1 (none).
TEST_P(NbrGrid, FriendGroupKnobs) {
  const int P = GetParam();
  DT_SKIP_UNLESS_RUNS(P);
  dtest::ScopedEnv theta("SPARCOLL_NBR_THETA", "0");
  runPerKnob(P, "SPARCOLL_NBR_K", {"1", "2", "3", "4"},
             {{scNbrAuto, scFloat16, 2, false, 8}, {scNbrAuto, scInt64, 3, true, 9}});
}

// Every dtype through every algorithm, on graphs with repeats and self-loops.
TEST_P(NbrGrid, EveryDtype) {
  const int P = GetParam();
  DT_SKIP_UNLESS_RUNS(P);
  std::vector<Case> cases;
  for (scDataType_t dt : dtest::kAllTypes)
    for (bool v : {false, true}) cases.push_back({scNbrAuto, dt, 13, v, uint64_t(dt) + 100});
  dtest::ScopedEnv env("SPARCOLL_RANKS_PER_NODE", "2");
  runGrid(P, {moore(P, 2, 1, true), multiEdges(P, 9)}, cases);
}

// Large blocks: chunk boundaries inside elements of every size, weights by load.
TEST_P(NbrGrid, LargeBlocks) {
  const int P = GetParam();
  DT_SKIP_UNLESS_RUNS(P);
  dtest::ScopedEnv env("SPARCOLL_RANKS_PER_NODE", "3");
  runGrid(P, {moore(P, 2, 1, false), erdosRenyi(P, 0.6, 4), halo(P, 8)},
          {{scNbrAuto, scFloat64, 100003, false, 10}, {scNbrAuto, scUint8, 65537, true, 11}});
}

// A loop's calls hand the same buffers back: the call checks and the
// messages kept from the last call (api_neighbor.cpp, naive.cpp) must follow
// every change of content, count, type, layout (allgatherv between
// allgathers), algorithm and buffer. Two fixed arenas stand in for the
// caller's buffers; `swap` exchanges which one is send and which recv.
TEST_P(NbrGrid, RepeatedBuffers) {
  const int P = GetParam();
  DT_SKIP_UNLESS_RUNS(P);
  const scConfig_t cfg = dtest::config(60);
  sctest::run(
      P,
      [&](scComm_t comm, int rank) {
        std::vector<char> arena[2] = {std::vector<char>(1 << 16), std::vector<char>(1 << 16)};
        bool swap = false;
        int next = 0;  // checkCall allocates send, then recv
        Memory mem;
        mem.alloc = [&](size_t n) -> void* {
          EXPECT_LE(n, arena[0].size());
          return arena[(next++ + int(swap)) % 2].data();
        };
        mem.release = [](void*) {};
        for (const Graph& g : {erdosRenyi(P, 0.3, 7), multiEdges(P, 9)}) {
          scTopology_t topo = makeTopology(comm, g, rank);
          if (!topo) return;
          const Case steps[] = {
              {scNbrNaive, scInt32, 3, false, 1},   {scNbrNaive, scInt32, 3, false, 1},   // the same call again
              {scNbrNaive, scInt32, 3, false, 2},   {scNbrNaive, scInt32, 5, false, 3},   // new content; count
              {scNbrNaive, scFloat64, 5, false, 4}, {scNbrNaive, scInt32, 5, true, 5},    // type; allgatherv
              {scNbrNaive, scInt32, 5, false, 6},   {scNbrNative, scInt32, 5, false, 7},  // back; native
              {scNbrAuto, scInt32, 5, false, 8},    {scNbrCombining, scInt32, 5, false, 9},
              {scNbrNaive, scUint8, 20, false, 10}, {scNbrNaive, scUint8, 20, false, 10},
          };
          bool ok = true;
          for (int pass = 0; pass < 2 && ok; ++pass) {
            swap = pass == 1;  // the second pass: send and recv trade buffers
            for (const Case& c : steps)
              if (ok) ok = checkCall(comm, topo, g, rank, c, mem);
          }
          EXPECT_EQ(scTopologyDestroy(topo), scSuccess);
          if (!ok) return;
        }
      },
      &cfg);
}

INSTANTIATE_TEST_SUITE_P(Neighbor, NbrGrid, testing::Range(1, 10),
                         [](const testing::TestParamInfo<int>& i) { return "P" + std::to_string(i.param); });

}  // namespace
}  // namespace ntest
