// The topologies of the neighbourhood suites, as whole graphs every rank
// builds alike (pure functions of their parameters), and the sequential
// reference of a neighbour allgather on them. Nothing here uses sparcoll.
// A library of its own (sparcoll_nbr_graphs) so that
// bench/neighbor_allgather_perf measures the very graphs the tests check; the
// topology specs and edge-list files of its --topo flag are read here too.
//
// A graph lists, per rank, its out-edges (destinations) and in-edges
// (sources) in declaration order; sources are derived from the destinations
// (so declarations are symmetric), in an order chosen per graph to exercise
// the mapping of blocks to recv slots.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ntest {

struct Graph {
  std::string name;
  int P = 1;
  std::vector<std::vector<int>> dst, src;  // [rank] in declaration order
  // Per-rank block sizes in elements for allgatherv (empty: derived from the
  // call's count, see vcount()).
  std::vector<size_t> blocks;
};

enum class SourceOrder { Ascending, Descending, Shuffled };
// Builds the sources of every rank from the destinations.
Graph fromDestinations(std::string name, int P, std::vector<std::vector<int>> dst,
                       SourceOrder order = SourceOrder::Ascending);

// Grid dimensions for P ranks in d dimensions, as balanced as possible
// (the shape of MPI_Dims_create), largest first.
std::vector<int> gridDims(int P, int d);
// Moore neighbourhood of radius r in d dimensions (every offset in
// [-r, r]^d but 0). Periodic grids wrap, which on short dimensions gives
// repeated edges and self-loops, as an MPI Cartesian neighbourhood does.
Graph moore(int P, int d, int r, bool periodic);
// Directed Erdős–Rényi graph: each edge i -> j (i != j) with probability p.
Graph erdosRenyi(int P, double p, uint64_t seed);
// Rank 0 sends to and receives from every other rank.
Graph star(int P);
// No edges at all; with `some`, only the even ranks have none.
Graph empty(int P, bool some);
// Random multigraph with repeated edges and self-loops.
Graph multiEdges(int P, uint64_t seed);
// Halo of a block-row-distributed sparse matrix (tridiagonal plus random
// off-diagonal entries): rank q receives the x block of every rank owning a
// column its rows touch. blocks = rows per rank (uneven).
Graph halo(int P, uint64_t seed);

// Every graph of the correctness grid for P ranks.
std::vector<Graph> catalogue(int P);

// Rank r's block size for allgatherv with base count n (varies with r).
size_t vcount(const Graph& g, int r, size_t n);

// A topology as a command line names it, for any number of ranks:
//   moore:d=D,r=R[,periodic=0|1]  Moore neighbourhood, D in 1..6, R >= 1
//   random:p=X[,seed=S]           Erdős–Rényi, X in (0, 1], seed >= 0 (default 1)
//   file:PATH                     an edge list: one directed edge "i j" (i sends
//                                 to j) per line; blank lines and '#' comments
//                                 are skipped; repeats and self-loops allowed
// A file's edges are read when the spec is parsed, so a missing or malformed
// file is reported before any rank starts.
struct Spec {
  enum class Kind { Moore, Random, File } kind = Kind::Moore;
  std::string text;  // as given
  int d = 2, r = 1;
  bool periodic = false;
  double p = 0.1;
  uint64_t seed = 1;
  std::vector<std::pair<int, int>> edges;  // file: in file order
  int ranksNeeded = 1;                     // file: 1 + the largest rank named
};
// False with a one-line *err naming the problem.
bool parseSpec(const std::string& text, Spec* spec, std::string* err);
// The spec's graph on P ranks; false with *err when a file names a rank >= P.
bool build(const Spec& spec, int P, Graph* g, std::string* err);

// 64-bit mixing of several words (deterministic pseudo-random numbers).
uint64_t mix(uint64_t a, uint64_t b = 0, uint64_t c = 0);

}  // namespace ntest
