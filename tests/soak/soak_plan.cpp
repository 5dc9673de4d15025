#include "soak_plan.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "dense/dense_data.h"

namespace soak {

uint64_t Rng::next() {
  uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t mix2(uint64_t a, uint64_t b) {
  Rng r{a * 0xD1B54A32D192ED03ull ^ b};
  r.next();
  return r.next();
}

const char* apiName(Api a) {
  static const char* n[] = {"allreduce",          "reduce_scatter", "allgather",   "barrier",
                            "sparse_allreduce",   "dsop",           "dsop_sparse", "topk_feedback",
                            "neighbor_allgather", "broadcast"};
  return n[int(a)];
}

namespace {

// Element counts in [0, max], mostly small: zero and the P-related edges
// (1, P-1, P, P+1) now and then, else exp(u^3 ln max), so about one call in
// twenty moves more than a tenth of max while most stay below a thousand.
size_t skewedCount(Rng& g, size_t max, int P, bool allowZero = true) {
  if (max == 0) return 0;
  const double u = g.unit();
  if (allowZero && u < 0.05) return 0;
  if (u < 0.10) {
    const size_t edge[] = {1, size_t(P > 1 ? P - 1 : 1), size_t(P), size_t(P + 1)};
    return std::min(max, g.pick(edge));
  }
  const double w = g.unit();
  return std::min(max, std::max<size_t>(1, size_t(std::exp(w * w * w * std::log(double(max) + 1)))));
}

// DSOP shapes: small, P-edge rows, tall, wide and square, with n*m <= cap.
void dsopShape(Rng& g, int P, size_t cap, size_t* n, size_t* m) {
  const size_t edge[] = {1, size_t(P > 1 ? P - 1 : 1), size_t(P), size_t(P + 1)};
  switch (g.below(5)) {
    case 0:
      *n = 1 + g.below(64);
      *m = 1 + g.below(64);
      break;
    case 1:
      *n = g.pick(edge);
      *m = 1 + g.below(1000);
      break;
    case 2:
      *n = 1 + g.below(4096);
      *m = 1 + g.below(8);
      break;
    case 3:
      *n = 1 + g.below(8);
      *m = 1 + g.below(4096);
      break;
    default: {
      const size_t s = std::max<size_t>(1, size_t(std::sqrt(double(cap))));
      *n = 1 + g.below(s);
      *m = 1 + g.below(s);
    }
  }
  while (*n * *m > cap) (*n > *m ? *n : *m) /= 2;
}

}  // namespace

Plan planCall(uint64_t seed, uint64_t index, int P, size_t maxCount) {
  Rng g{mix2(seed, index)};
  Plan p;
  p.index = index;
  // Weights: dense collectives ~ half of the calls, then sparse, DSOP, top-k, neighbour.
  static const Api kDeck[] = {Api::AllReduce, Api::AllReduce,     Api::AllReduce,     Api::AllReduce,
                              Api::AllReduce, Api::ReduceScatter, Api::ReduceScatter, Api::ReduceScatter,
                              Api::AllGather, Api::AllGather,     Api::AllGather,     Api::Barrier,
                              Api::Sparse,    Api::Sparse,        Api::Sparse,        Api::Sparse,
                              Api::Dsop,      Api::Dsop,          Api::DsopSparse,    Api::Topk,
                              Api::Topk,      Api::Neighbor,      Api::Neighbor,      Api::Broadcast,
                              Api::Broadcast};
  p.api = g.pick(kDeck);
  static const scDataType_t kFloats[] = {scFloat16, scFloat32, scFloat64, scBfloat16};
  p.dt = g.pick(dtest::kAllTypes);
  p.op = g.pick(dtest::kAllOps);
  p.inPlace = g.chance(0.5);
  const size_t perRank = std::max<size_t>(1, maxCount / size_t(P));
  switch (p.api) {
    case Api::AllReduce:
      p.algo = int(g.below(scAlgoNative + 1));  // allreduce's algorithms (auto..native), the draw of older seeds
      p.count = skewedCount(g, maxCount, P);
      break;
    case Api::ReduceScatter: {
      static const scAlgo_t a[] = {scAlgoAuto, scAlgoRing, scAlgoRabenseifner, scAlgoNative};
      p.algo = g.pick(a);
      p.count = skewedCount(g, perRank, P);
      break;
    }
    case Api::AllGather: {
      static const scAlgo_t a[] = {scAlgoAuto, scAlgoRing, scAlgoRecDbl, scAlgoNative};
      p.algo = g.pick(a);
      p.count = skewedCount(g, perRank, P);
      break;
    }
    case Api::Barrier: break;
    case Api::Broadcast: {
      static const scAlgo_t a[] = {scAlgoAuto, scAlgoBinomial, scAlgoScatterAllGather, scAlgoNative};
      p.algo = g.pick(a);
      p.count = skewedCount(g, maxCount, P);
      p.root = int(g.below(uint64_t(P)));
      break;
    }
    case Api::Sparse: {
      static const double dens[] = {0.0, 1e-4, 1e-3, 1e-2, 0.05, 0.3, 1.0};
      p.algo = int(g.below(scNumSparseAlgos));
      p.count = skewedCount(g, maxCount, P);
      p.density = g.pick(dens);
      p.dist = int(g.below(6));
      p.op = g.chance(0.5) ? scSum : scAvg;
      p.it = g.chance(0.5) ? scIndexU32 : scIndexU64;
      p.sparseOut = g.chance(0.5);
      p.withOpts = g.chance(0.3);
      p.shuffled = g.chance(0.15);
      if (p.withOpts) {
        static const double sw[] = {0.0, SC_SPARSE_SWITCH_COMPUTE_AWARE, 0.01, 1.0};
        static const int grp[] = {0, 1, 2, 4, 64};
        p.switchDensity = g.pick(sw);
        p.earlyGroup = g.pick(grp);
      }
      break;
    }
    case Api::Dsop:
    case Api::DsopSparse: {
      static const double dens[] = {0.0, 0.01, 0.1, 0.5, 1.0};
      static const scDsopAlgo_t sparseAlgos[] = {scDsopAuto, scDsopAllGather, scDsopGRabenseifner};
      p.dt = g.pick(kFloats);
      dsopShape(g, P, std::min<size_t>(std::max<size_t>(maxCount, 1), size_t(1) << 18), &p.n, &p.m);
      if (p.api == Api::Dsop) {
        p.algo = int(g.below(scNumDsopAlgos));
        p.real = g.chance(0.25);
      } else {
        p.algo = g.pick(sparseAlgos);
        p.da = g.pick(dens);
        p.db = g.pick(dens);
      }
      break;
    }
    case Api::Topk: {
      static const double frac[] = {0.001, 0.01, 0.1, 0.5, 1.0};
      static const size_t buckets[] = {1, 7, 64, 512, 4096};
      p.dt = g.pick(kFloats);
      p.count = skewedCount(g, std::min<size_t>(std::max<size_t>(maxCount, 1), 32768), P, false);
      p.method = int(g.below(scTopkNumMethods));
      p.k = std::min(p.count, std::max<size_t>(1, size_t(double(p.count) * g.pick(frac))));
      p.bucket = g.pick(buckets);
      p.fixedOut = p.method <= scTopkApproxAtMost && g.chance(0.3);
      p.it = g.chance(0.5) ? scIndexU32 : scIndexU64;
      p.steps = 1 + int(g.below(3));
      p.algo = int(g.below(scNumSparseAlgos));
      break;
    }
    case Api::Neighbor:
      p.graphKind = int(g.below(4));
      p.graphSeed = g.next() % 100000;
      p.nbrCalls = 1 + int(g.below(3));
      break;
  }
  return p;
}

std::string Plan::sig() const {
  std::ostringstream os;
  os << "call=" << index << " api=" << apiName(api);
  switch (api) {
    case Api::AllReduce:
    case Api::ReduceScatter:
    case Api::AllGather:
      os << " algo=" << dtest::algoStr(scAlgo_t(algo)) << " dtype=" << dtest::typeStr(dt);
      if (api != Api::AllGather) os << " op=" << dtest::opStr(op);
      os << " count=" << count << (inPlace ? " in-place" : " out-of-place");
      break;
    case Api::Barrier: break;
    case Api::Broadcast:
      os << " algo=" << dtest::algoStr(scAlgo_t(algo)) << " dtype=" << dtest::typeStr(dt) << " count=" << count
         << " root=" << root;
      break;
    case Api::Sparse:
      os << " algo=" << scSparseAlgoName(scSparseAlgo_t(algo)) << " dtype=" << dtest::typeStr(dt)
         << " op=" << dtest::opStr(op) << " index=" << (it == scIndexU64 ? "u64" : "u32") << " dim=" << count
         << " density=" << density << " dist=" << dist << (sparseOut ? " sparse-out" : " dense-out");
      if (withOpts) os << " switch=" << switchDensity << " group=" << earlyGroup;
      if (shuffled) os << " unsorted+duplicates";
      break;
    case Api::Dsop:
    case Api::DsopSparse:
      os << " algo=" << scDsopAlgoName(scDsopAlgo_t(algo)) << " dtype=" << dtest::typeStr(dt) << " n=" << n
         << " m=" << m;
      if (api == Api::Dsop) os << (real ? " real-valued" : " integer-valued");
      else os << " density_a=" << da << " density_b=" << db;
      break;
    case Api::Topk:
      os << " method=" << scTopkMethodName(scTopkMethod_t(method)) << " dtype=" << dtest::typeStr(dt) << " n=" << count
         << " k=" << k << " bucket=" << bucket << (fixedOut ? " fixed" : " variable")
         << " index=" << (it == scIndexU64 ? "u64" : "u32") << " steps=" << steps
         << " sparse_algo=" << scSparseAlgoName(scSparseAlgo_t(algo));
      break;
    case Api::Neighbor: os << " graph=" << graphKind << " graph_seed=" << graphSeed << " calls=" << nbrCalls; break;
  }
  return os.str();
}

scConfig_t batchConfig(uint64_t seed, uint64_t batch) {
  Rng g{mix2(seed ^ 0x5eed, batch)};
  scConfig_t c = SC_CONFIG_INITIALIZER;
  c.timeoutSeconds = 60;  // a hung schedule fails the call instead of the run
  static const scCheck_t checks[] = {scCheckDefault, scCheckAll, scCheckOff};
  // Ring slices: the default, small ones (many slices per call) and one that
  // is not a multiple of any element size.
  static const size_t slices[] = {0, 0, 1000, 4096, 65536};
  c.check = g.pick(checks);
  c.pipelineBytes = g.pick(slices);
  return c;
}

}  // namespace soak
