// Neighbourhood collectives on local communicators of 1-4 ranks: a fuzzed
// multigraph (self-loops, repeats) declared by every rank, optionally broken
// on one rank (negative degree, NULL list, rank out of range, an edge only one
// end declares: every rank must then fail), then scNeighborAllGather(V) with
// any dtype and algorithm, the queries, destroy twice and use after destroy.
#include <algorithm>

#include "fuzz_util.h"

namespace {

struct Graph {
  std::vector<std::vector<int>> src, dst;  // per rank: in-edges, out-edges
};

Graph drawGraph(FuzzedDataProvider& p, int P) {
  Graph g{std::vector<std::vector<int>>(P), std::vector<std::vector<int>>(P)};
  const int edges = p.ConsumeIntegralInRange<int>(0, 16);
  for (int e = 0; e < edges; ++e) {
    const int from = p.ConsumeIntegralInRange<int>(0, P - 1), to = p.ConsumeIntegralInRange<int>(0, P - 1);
    g.dst[from].push_back(to);
    g.src[to].push_back(from);
  }
  for (int r = 0; r < P; ++r) {  // any order is allowed
    if (p.ConsumeBool()) std::reverse(g.src[r].begin(), g.src[r].end());
    if (p.ConsumeBool()) std::reverse(g.dst[r].begin(), g.dst[r].end());
  }
  return g;
}

// Breaks rank `who`'s declaration; returns the degrees it declares.
void corrupt(FuzzedDataProvider& p, Graph& g, int P, int who, int* in, int* out, bool* nullSrc, bool* nullDst) {
  switch (p.ConsumeIntegralInRange<int>(0, 5)) {
    case 0: *in = -p.ConsumeIntegralInRange<int>(1, 3); break;
    case 1: *out = -1; break;
    case 2:
      if (*in > 0) *nullSrc = true;
      else g.src[who].push_back(P);
      break;
    case 3: g.dst[who].push_back(p.ConsumeBool() ? P : -1); break;
    case 4: g.src[who].push_back(p.ConsumeIntegralInRange<int>(0, P - 1)); break;  // asymmetric
    default:
      if (!g.dst[who].empty()) g.dst[who].pop_back();
      else g.dst[who].push_back(who);
      break;
  }
  if (*in >= 0) *in = int(g.src[who].size());
  if (*out >= 0) *out = int(g.dst[who].size());
  (void)nullDst;
}

void queries(FuzzedDataProvider& p, scTopology_t t) {
  int in, out, k = 0, theta, sz;
  scNbrAlgo_t a;
  double s;
  const bool nul = p.ConsumeIntegralInRange<int>(0, 7) == 0;
  fz::expectClean("scTopologyDegrees", scTopologyDegrees(t, nul ? nullptr : &in, &out));
  const size_t bytes = p.ConsumeBool() ? p.ConsumeIntegral<size_t>() : p.ConsumeIntegralInRange<size_t>(0, 1 << 20);
  fz::expectClean("scNeighborAlgoFor", scNeighborAlgoFor(t, bytes, nul ? nullptr : &a));
  fz::expectClean("scTopologyEstimateTime",
                  scTopologyEstimateTime(t, bytes, fz::pickEnum<scNbrAlgo_t>(p, scNumNbrAlgos), nul ? nullptr : &s,
                                         p.ConsumeBool() ? &a : nullptr));
  fz::expectClean("scTopologyFriendGroup", scTopologyFriendGroup(t, &k, &theta, &sz, nullptr));
  std::vector<int> members(k > 0 ? k : 1);  // room for k entries, as documented
  fz::expectClean("scTopologyFriendGroup", scTopologyFriendGroup(t, p.ConsumeBool() ? &k : nullptr, nullptr, nullptr,
                                                                 k > 0 ? members.data() : nullptr));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider p(data, size);
  const int P = p.ConsumeIntegralInRange<int>(1, 4);
  scComm_t* comms = fz::localComms(P);
  Graph g = drawGraph(p, P);
  std::vector<int> in(P), out(P);
  std::vector<char> nullSrc(P, 0), nullDst(P, 0);
  for (int r = 0; r < P; ++r) {
    in[r] = int(g.src[r].size());
    out[r] = int(g.dst[r].size());
  }
  const bool bad = p.ConsumeIntegralInRange<int>(0, 5) == 0;
  if (bad) {
    const int who = p.ConsumeIntegralInRange<int>(0, P - 1);
    bool ns = false, nd = false;
    corrupt(p, g, P, who, &in[who], &out[who], &ns, &nd);
    nullSrc[who] = ns;
  }
  std::vector<scTopology_t> topo(P, nullptr);
  std::vector<scResult_t> rc(P);
  fz::onRanks(P, [&](int r) {
    rc[r] = scTopologyCreate(&topo[r], comms[r], in[r], nullSrc[r] ? nullptr : g.src[r].data(), out[r],
                             nullDst[r] ? nullptr : g.dst[r].data());
  });
  fz::expectAgree("scTopologyCreate", rc, comms);
  if (rc[0] != scSuccess) return 0;
  queries(p, topo[0]);

  // One neighbour allgather, the same arguments on every rank.
  const scDataType_t dt = fz::pickEnum<scDataType_t>(p, scNumTypes);
  const scNbrAlgo_t algo = fz::pickEnum<scNbrAlgo_t>(p, scNumNbrAlgos);
  const bool vee = p.ConsumeBool(), stream = p.ConsumeIntegralInRange<int>(0, 15) == 0;
  const size_t esz = fz::elemSize(dt);
  std::vector<size_t> count(P);  // rank r's sendcount (allgather: all equal)
  const size_t common = fz::pickCount(p, 512);
  for (int r = 0; r < P; ++r) count[r] = vee ? fz::pickCount(p, 512, false) : common;
  const bool huge = common > 4096 && !vee;
  const bool allIn = std::all_of(in.begin(), in.end(), [](int d) { return d > 0; });
  const bool allSend = std::all_of(count.begin(), count.end(), [](size_t c) { return c > 0; });
  const bool nullSend = allSend && p.ConsumeIntegralInRange<int>(0, 15) == 0;
  const bool nullRecv = allIn && allSend && p.ConsumeIntegralInRange<int>(0, 15) == 0;
  const int gap = p.ConsumeIntegralInRange<int>(0, 2);  // displs: 0 packed, 1 gaps, 2 reversed
  std::vector<std::vector<uint8_t>> send(P), recv(P);
  std::vector<std::vector<size_t>> rcounts(P), displs(P);
  for (int r = 0; r < P; ++r) {
    send[r] = fz::filled(p, huge ? 1 : count[r] * esz);
    size_t total = 0;
    for (int e = 0; e < in[r]; ++e) {
      rcounts[r].push_back(count[g.src[r][e]]);
      displs[r].push_back(total + size_t(gap == 1));
      total += count[g.src[r][e]] + size_t(gap == 1);
    }
    if (gap == 2) {  // blocks in reverse order of their sources
      size_t at = 0;
      for (int e = in[r] - 1; e >= 0; --e) {
        displs[r][e] = at;
        at += rcounts[r][e];
      }
    }
    recv[r].assign(huge ? 1 : (total ? total : 1) * esz, 0);
  }
  fz::onRanks(P, [&](int r) {
    const void* s = nullSend ? nullptr : send[r].data();
    void* d = nullRecv ? nullptr : recv[r].data();
    void* st = stream ? fz::bogusStream() : nullptr;
    rc[r] = vee ? scNeighborAllGatherV(s, count[r], d, rcounts[r].data(), displs[r].data(), dt, algo, topo[r], st)
                : scNeighborAllGather(s, count[r], d, dt, algo, topo[r], st);
  });
  fz::expectAgree("neighbour allgather", rc, comms);

  for (int r = 0; r < P; ++r) fz::expectClean("scTopologyDestroy", scTopologyDestroy(topo[r]));
  if (p.ConsumeBool()) {  // dead handles are refused, not read
    const scResult_t r1 = scTopologyDestroy(topo[0]);
    int a, b;
    const scResult_t r2 = scTopologyDegrees(topo[0], &a, &b);
    if (r1 != scInvalidArgument || r2 != scInvalidArgument) fz::fail("destroyed topology", r1, scGetLastError(nullptr));
    fz::expectClean("scTopologyDestroy(NULL)", scTopologyDestroy(nullptr));
  }
  return 0;
}
