#include "nbr_check.h"

#include <cstring>

namespace ntest {

const scNbrAlgo_t kAllAlgos[5] = {scNbrAuto, scNbrNaive, scNbrCombining, scNbrHierarchical, scNbrNative};

const char* algoStr(scNbrAlgo_t a) {
  static const char* names[] = {"auto", "naive", "combining", "hierarchical", "native"};
  return a >= 0 && a < 5 ? names[a] : "?";
}

std::string Case::label() const {
  return std::string(algoStr(algo)) + (v ? " allgatherv " : " allgather ") + dtest::typeStr(dt) + " count " +
         std::to_string(count);
}

Expected reference(const Graph& g, int rank, const Case& c) {
  const size_t esz = dtest::elemSize(c.dt);
  auto block = [&](int r) { return c.v ? vcount(g, r, c.count) : c.count; };
  const std::vector<int>& src = g.src[size_t(rank)];
  Expected x;
  x.send = dtest::makePayload(rank, block(rank) * esz, c.salt);
  x.counts.resize(src.size());
  x.displs.resize(src.size());
  const size_t gap = c.v ? 1 : 0;
  for (size_t k = 0; k < src.size(); ++k) {
    const size_t e = c.v && rank % 2 ? src.size() - 1 - k : k;  // placement order
    x.counts[e] = block(src[e]);
    x.displs[e] = x.span;
    x.span += x.counts[e] + gap;
  }
  x.span += c.v ? 2 : 0;  // a tail recv must not touch
  x.recv.assign(x.span * esz, kPoison);
  for (size_t e = 0; e < src.size(); ++e) {
    const dtest::Bytes b = dtest::makePayload(src[e], x.counts[e] * esz, c.salt);
    std::copy(b.begin(), b.end(), x.recv.begin() + long(x.displs[e] * esz));
  }
  return x;
}

scTopology_t makeTopology(scComm_t comm, const Graph& g, int rank) {
  scTopology_t t = nullptr;
  const auto& s = g.src[size_t(rank)];
  const auto& d = g.dst[size_t(rank)];
  const scResult_t r = scTopologyCreate(&t, comm, int(s.size()), s.data(), int(d.size()), d.data());
  if (r != scSuccess) {
    ADD_FAILURE() << g.name << ": scTopologyCreate on rank " << rank << ": " << scGetErrorString(r) << ": "
                  << scGetLastError(comm);
    return nullptr;
  }
  return t;
}

bool checkCall(scComm_t comm, scTopology_t topo, const Graph& g, int rank, const Case& c, const Memory& mem) {
  const size_t esz = dtest::elemSize(c.dt);
  const Expected x = reference(g, rank, c);
  void* send = mem.alloc(x.send.size());
  void* recv = mem.alloc(x.recv.size() + 16);
  const dtest::Bytes poison(x.recv.size() + 16, kPoison);
  mem.toMem(send, x.send.data(), x.send.size());
  mem.toMem(recv, poison.data(), poison.size());
  const size_t sendcount = x.send.size() / esz;
  const scResult_t r = c.v ? scNeighborAllGatherV(send, sendcount, recv, x.counts.data(), x.displs.data(), c.dt, c.algo,
                                                  topo, mem.stream)
                           : scNeighborAllGather(send, sendcount, recv, c.dt, c.algo, topo, mem.stream);
  bool ok = r == scSuccess;
  EXPECT_EQ(r, scSuccess) << g.name << ", " << c.label() << ", rank " << rank << ": " << scGetLastError(comm);
  if (ok) {
    dtest::Bytes got(poison.size()), sent(x.send.size());
    mem.fromMem(got.data(), recv, got.size());
    mem.fromMem(sent.data(), send, sent.size());
    dtest::Bytes want = x.recv;
    want.resize(poison.size(), kPoison);
    const std::string bad = dtest::firstMismatch(got.data(), want.data(), want.size() / esz, esz);
    EXPECT_TRUE(bad.empty()) << g.name << ", " << c.label() << ", rank " << rank << ": recv differs from the "
                             << "reference (gaps and the 16 bytes after must stay untouched): " << bad;
    EXPECT_TRUE(sent == x.send) << g.name << ", " << c.label() << ", rank " << rank << ": send was modified";
  }
  mem.release(send);
  mem.release(recv);
  return ok;
}

}  // namespace ntest
