// C API of the neighbourhood collectives: topology handles, argument checks
// before any message, the algorithm (auto: model.cpp), the schedule.
//
// Handles are numbers that are never reused, looked up in a table: a
// destroyed handle is then an error, not a use of freed memory. A call holds
// its topology as it holds the communicator: a collective through the
// communicator (scCall), which scTopologyDestroy holds too, so neither can
// free the topology under the other; a query through a count that
// scTopologyDestroy, and the destruction of the communicator, wait for.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <unordered_map>

#include "core/api_guard.h"
#include "core/hot_tls.h"
#include "neighbor/create.h"
#include "neighbor/meta.h"

namespace sc::nbr {
namespace {

// A live topology: its communicator (null once that was destroyed, and the
// topology freed with it: retireTopologiesOf) and its queries in flight.
struct Entry {
  std::unique_ptr<Topology> t;
  scComm* comm = nullptr;
  int queries = 0;
};
std::mutex gMutex;
std::condition_variable gQueriesEnded;
std::unordered_map<uintptr_t, Entry> gLive;
uintptr_t gLast = 0x5C000000;

scTopology_t adopt(std::unique_ptr<Topology> t) {
  std::lock_guard<std::mutex> lk(gMutex);
  gLast += 16;
  scComm* comm = t->comm;
  gLive.emplace(gLast, Entry{std::move(t), comm, 0});
  return reinterpret_cast<scTopology_t>(gLast);
}

// Each thread remembers the last topology it looked up and its communicator,
// with the number of destructions (and retirements) seen then; while none
// happened since, it is still live (a call's look-up without the lock).
std::atomic<uint64_t> gDestroyed{0};
struct Found {
  scTopology_t h = nullptr;
  Topology* t = nullptr;
  scComm* comm = nullptr;
  uint64_t epoch = 0;
};
thread_local Found tlsFound SC_HOT_TLS;

bool cached(scTopology_t h) { return h == tlsFound.h && tlsFound.epoch == gDestroyed.load(std::memory_order_acquire); }

// h's entry, with a usable topology; under gMutex.
Entry& find(scTopology_t h) {
  SC_ARG(h != nullptr, "topology is NULL");
  auto it = gLive.find(reinterpret_cast<uintptr_t>(h));
  SC_ARG(it != gLive.end(), "topology ", static_cast<const void*>(h), " was destroyed or never created");
  SC_REQUIRE(it->second.comm, scInvalidUsage, "topology ", static_cast<const void*>(h),
             ": its communicator was destroyed (destroy a topology before its communicator)");
  return it->second;
}

Entry& remember(scTopology_t h) {
  Entry& e = find(h);
  tlsFound = {h, e.t.get(), e.comm, gDestroyed.load(std::memory_order_relaxed)};
  return e;
}

// The communicator of a collective call on h, before the call holds it.
scComm* commOf(scTopology_t h) {
  if (h && cached(h)) return tlsFound.comm;
  std::lock_guard<std::mutex> lk(gMutex);
  return remember(h).comm;
}

// h's topology in a call that holds comm: none can be destroyed meanwhile
// (scTopologyDestroy holds the communicator too, and scCommDestroy is
// refused). A destruction since commOf looked is seen here: it moved the
// count before it let the communicator go.
Topology& held(scTopology_t h, const scComm* comm) {
  if (cached(h) && tlsFound.comm == comm) return *tlsFound.t;
  std::lock_guard<std::mutex> lk(gMutex);
  Entry& e = remember(h);
  SC_REQUIRE(e.comm == comm, scInvalidUsage, "topology ", static_cast<const void*>(h),
             ": its communicator was destroyed (destroy a topology before its communicator)");
  return *e.t;
}

// A collective call on a topology: held through its communicator.
template <typename F>
scResult_t collective(scTopology_t h, const char* name, F&& body) {
  scComm* comm = nullptr;
  const scResult_t found = scGuard(nullptr, [&] { comm = commOf(h); });
  if (found != scSuccess) return found;
  return scCall(
      comm, [&] { body(held(h, comm)); }, name);
}

// A query on a topology (failures recorded per thread): counted while it
// runs, and its communicator held as a query.
template <typename F>
scResult_t query(scTopology_t h, F&& body) {
  Entry* e = nullptr;
  const scResult_t found = scGuard(nullptr, [&] {
    std::lock_guard<std::mutex> lk(gMutex);
    e = &find(h);
    ++e->queries;
  });
  if (found != scSuccess) return found;
  struct Release {
    Entry* e;
    ~Release() {
      std::lock_guard<std::mutex> lk(gMutex);
      if (--e->queries == 0) gQueriesEnded.notify_all();
    }
  } release{e};
  return scGuard(e->comm, [&] { body(*e->t); });
}

const char* const kAlgoNames[] = {"auto", "naive", "combining", "hierarchical", "native"};

[[noreturn]] void tooLarge(size_t elems, scDataType_t dt, const char* what) {
  SC_THROW(scInvalidArgument, what, " of ", elems, " elements of ", dtypeName(dt),
           " exceeds the largest possible buffer");
}

// elems elements of esz bytes (dt's), refused past the largest possible
// buffer. Checked without a division: it runs on every call.
inline size_t bytesOf(size_t elems, size_t esz, scDataType_t dt, const char* what) {
  size_t bytes = 0;
  if (__builtin_mul_overflow(elems, esz, &bytes) || bytes > size_t(PTRDIFF_MAX)) tooLarge(elems, dt, what);
  return bytes;
}

void checkCall(const Topology& t, scDataType_t dt, scNbrAlgo_t algo, void* stream) {
  checkComm(t.comm);
  checkDtype(dt);
  SC_ARG(algo >= 0 && algo < scNumNbrAlgos, "unknown neighbourhood algorithm ", int(algo));
  if (!t.comm->device()) SC_ARG(stream == nullptr, "stream must be NULL on a host communicator");
}

void checkBuffer(const Topology& t, const void* p, size_t elems, const char* what) {
  if (!elems) return;
  SC_ARG(p != nullptr, what, " is NULL with a non-zero count on rank ", t.rank);
  t.comm->backend->checkPointer(p, what);
}

// The allgather's checks, each argument's in turn.
[[gnu::noinline]] void checkAllGatherArgs(Topology& t, const void* send, size_t sendcount, const void* recv,
                                          scDataType_t dt, scNbrAlgo_t algo, void* stream) {
  checkCall(t, dt, algo, stream);
  const size_t in = t.sources.size(), esz = dtypeSize(dt);
  size_t total = 0;
  SC_ARG(!__builtin_mul_overflow(sendcount, in, &total), "sendcount ", sendcount, " times indegree ", in, " overflows");
  bytesOf(sendcount, esz, dt, "sendcount");
  bytesOf(total, esz, dt, "recv");
  checkBuffer(t, send, sendcount, "send");
  checkBuffer(t, recv, total, "recv");
  t.checked = {{send, recv, sendcount, int(dt)}, int(algo), stream};
}

// A call that repeats the last checked call's arguments (a training loop's
// halo exchange) is known to pass them, but for the communicator's state:
// its buffers' memory kind (looked up through the CUDA runtime where a
// context may exist) is taken to stay what it was while the same pointers
// come back. The full checks stay out of line: inlined here, their spills
// cost every call.
inline void checkAllGather(Topology& t, const void* send, size_t sendcount, const void* recv, scDataType_t dt,
                           scNbrAlgo_t algo, void* stream) {
  if (t.checked == Topology::Checked{{send, recv, sendcount, int(dt)}, int(algo), stream}) return checkComm(t.comm);
  checkAllGatherArgs(t, send, sendcount, recv, dt, algo, stream);
}

// The blocks of recv must lie apart: sorted by start, each ends before the next.
void checkDisjoint(const Layout& L) {
  std::vector<size_t> order(L.counts.size());
  for (size_t e = 0; e < order.size(); ++e) order[e] = e;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return L.displs[a] < L.displs[b]; });
  size_t end = 0, prev = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    const size_t e = order[i];
    if (!L.counts[e]) continue;
    SC_ARG(i == 0 || L.displs[e] >= end, "recv blocks ", prev, " and ", e, " overlap");
    end = L.displs[e] + L.counts[e];
    prev = e;
  }
}

void run(Topology& t, scNbrAlgo_t algo, const void* send, void* recv, const Layout& L, scDataType_t dt, void* stream,
         size_t blockBytes) {
  if (algo == scNbrAuto) algo = chooseAlgo(t, uint64_t(blockBytes));  // blockBytes <= PTRDIFF_MAX: kept
  Call k(t, dt, stream);
  switch (algo) {
    case scNbrNaive: naive(k, send, recv, L); break;
    case scNbrCombining: combining(k, send, recv, L); break;
    case scNbrHierarchical: hierarchical(k, send, recv, L); break;
    case scNbrNative: native(k, send, recv, L); break;
    default: SC_THROW(scInternalError, "unresolved neighbourhood algorithm ", int(algo));
  }
}

}  // namespace
}  // namespace sc::nbr

using namespace sc;
using namespace sc::nbr;

extern "C" scResult_t scTopologyCreate(scTopology_t* topo, scComm_t comm, int indegree, const int* sources,
                                       int outdegree, const int* destinations) {
  if (topo) *topo = nullptr;
  return scCall(comm, [&] {
    checkComm(comm);
    setCall(*comm, {"scTopologyCreate", CallSig::kNoCount});
    std::unique_ptr<Topology> t = create(*comm, {sources, indegree, destinations, outdegree, topo == nullptr});
    *topo = adopt(std::move(t));
  });
}

// Held as a call on the topology's communicator, so that no collective on
// the topology is inside meanwhile; its queries are waited for.
extern "C" scResult_t scTopologyDestroy(scTopology_t topo) {
  scComm* comm = nullptr;
  const scResult_t found = scGuard(nullptr, [&] {
    SC_ARG(topo != nullptr, "topology is NULL");
    std::lock_guard<std::mutex> lk(gMutex);
    auto it = gLive.find(reinterpret_cast<uintptr_t>(topo));
    SC_ARG(it != gLive.end(), "topology ", static_cast<const void*>(topo), " was destroyed or never created");
    comm = it->second.comm;
    if (!comm) gLive.erase(it);  // freed with its communicator: nothing can use it
  });
  if (found != scSuccess || !comm) return found;
  return scCall(
      comm,
      [&] {
        std::unique_ptr<Topology> dead;
        {
          std::unique_lock<std::mutex> lk(gMutex);
          auto it = gLive.find(reinterpret_cast<uintptr_t>(topo));
          SC_ARG(it != gLive.end(), "topology ", static_cast<const void*>(topo), " was destroyed or never created");
          Entry& e = it->second;  // stays put: only a holder of comm erases it
          if (e.comm == comm) gQueriesEnded.wait(lk, [&] { return e.queries == 0; });
          dead = std::move(e.t);  // e.comm != comm: freed with its communicator meanwhile
          gLive.erase(reinterpret_cast<uintptr_t>(topo));
          gDestroyed.fetch_add(1, std::memory_order_release);
        }
      },
      "scTopologyDestroy");
}

extern "C" scResult_t scTopologyDegrees(scTopology_t topo, int* indegree, int* outdegree) {
  return query(topo, [&](Topology& t) {
    if (indegree) *indegree = int(t.sources.size());
    if (outdegree) *outdegree = int(t.destinations.size());
  });
}

extern "C" scResult_t scTopologyFriendGroup(scTopology_t topo, int* k, int* theta, int* size, int* members) {
  return query(topo, [&](Topology& t) {
    if (k) *k = t.comb.k;
    if (theta) *theta = t.comb.theta;
    if (size) *size = int(t.comb.group.size());
    if (members) std::copy(t.comb.group.begin(), t.comb.group.end(), members);
  });
}

extern "C" scResult_t scTopologyCostTerms(scTopology_t topo, scNbrAlgo_t algo, scNbrCostTerms_t* terms) {
  return query(topo, [&](Topology& t) {
    SC_ARG(terms != nullptr, "terms output is NULL");
    SC_ARG(algo > scNbrAuto && algo < scNumNbrAlgos, "algorithm ", int(algo),
           algo == scNbrAuto ? " (auto): the terms are an explicit algorithm's" : " is not a neighbourhood algorithm");
    *terms = costTerms(t, algo);
  });
}

extern "C" scResult_t scNeighborAlgoFor(scTopology_t topo, size_t bytes, scNbrAlgo_t* algo) {
  return query(topo, [&](Topology& t) {
    SC_ARG(algo != nullptr, "algo output is NULL");
    *algo = chooseAlgo(t, double(bytes));
  });
}

extern "C" scResult_t scTopologyEstimateTime(scTopology_t topo, size_t bytes, scNbrAlgo_t algo, double* seconds,
                                             scNbrAlgo_t* autoAlgo) {
  return query(topo, [&](Topology& t) {
    SC_ARG(seconds != nullptr, "seconds output is NULL");
    SC_ARG(algo >= 0 && algo < scNumNbrAlgos, "unknown neighbourhood algorithm ", int(algo));
    const scNbrAlgo_t pick = chooseAlgo(t, double(bytes));
    *seconds = predictSeconds(t, algo == scNbrAuto ? pick : algo, double(bytes));
    if (autoAlgo) *autoAlgo = pick;
  });
}

extern "C" scResult_t scNeighborAllGather(const void* send, size_t sendcount, void* recv, scDataType_t dt,
                                          scNbrAlgo_t algo, scTopology_t topo, void* stream) {
  return collective(topo, "scNeighborAllGather", [&](Topology& t) {
    checkAllGather(t, send, sendcount, recv, dt, algo, stream);
    setCall(*t.comm, {"scNeighborAllGather", sendcount, dt, -1, kAlgoNames[algo]});
    if (sendcount == 0) return;  // every rank passes the same sendcount: nothing moves anywhere
    Layout& L = t.uniform;       // sendcount 0 returned above, so the first call builds it
    if (L.sendcount != sendcount) {
      const size_t in = t.sources.size();
      L.sendcount = sendcount;
      L.counts.assign(in, sendcount);
      L.displs.clear();
      for (size_t e = 0; e < in; ++e) L.displs.push_back(e * sendcount);
    }
    run(t, algo, send, recv, L, dt, stream, sendcount * dtypeSize(dt));
  });
}

extern "C" scResult_t scNeighborAllGatherV(const void* send, size_t sendcount, void* recv, const size_t* recvcounts,
                                           const size_t* displs, scDataType_t dt, scNbrAlgo_t algo, scTopology_t topo,
                                           void* stream) {
  return collective(topo, "scNeighborAllGatherV", [&](Topology& t) {
    checkCall(t, dt, algo, stream);
    const size_t in = t.sources.size(), esz = dtypeSize(dt);
    if (in) SC_ARG(recvcounts && displs, "recvcounts and displs must not be NULL with indegree ", in);
    size_t blockBytes = bytesOf(sendcount, esz, dt, "sendcount"), span = 0;
    Layout L;
    L.uniform = false;
    L.sendcount = sendcount;
    for (size_t e = 0; e < in; ++e) {
      SC_ARG(recvcounts[e] <= SIZE_MAX - displs[e], "displs[", e, "] + recvcounts[", e, "] overflows");
      blockBytes = std::max(blockBytes, bytesOf(recvcounts[e], esz, dt, "a recvcount"));
      span = std::max(span, displs[e] + recvcounts[e]);
      L.counts.push_back(recvcounts[e]);
      L.displs.push_back(displs[e]);
    }
    bytesOf(span, esz, dt, "recv");
    checkBuffer(t, send, sendcount, "send");
    checkBuffer(t, recv, span, "recv");
    checkDisjoint(L);
    // Counts differ by rank: the signature holds what all ranks pass alike.
    setCall(*t.comm, {"scNeighborAllGatherV", CallSig::kNoCount, dt, -1, kAlgoNames[algo]});
    if (algo == scNbrAuto) {
      // Blocks differ between ranks: agree on the largest, so all choose alike.
      std::vector<uint64_t> largest{uint64_t(blockBytes)};
      Meta(*t.comm, stream, &t.nodeOf).allReduce(largest, scMax);
      blockBytes = size_t(largest[0]);
    }
    run(t, algo, send, recv, L, dt, stream, blockBytes);
  });
}

// scCommDestroy's step after retireComm (core/entry.h): no call holds comm
// or can, so only queries of its topologies may still run; once they end,
// each topology is freed, its handle kept for scTopologyDestroy.
void sc::retireTopologiesOf(const scComm* comm) {
  std::vector<std::unique_ptr<Topology>> dead;
  {
    std::unique_lock<std::mutex> lk(gMutex);
    std::vector<uintptr_t> mine;
    for (const auto& [h, e] : gLive)
      if (e.comm == comm) mine.push_back(h);
    for (uintptr_t h : mine) {  // by key: a wait lets other topologies in, which may rehash
      Entry& e = gLive.at(h);
      gQueriesEnded.wait(lk, [&] { return e.queries == 0; });
      e.comm = nullptr;
      dead.push_back(std::move(e.t));
    }
    if (!mine.empty()) gDestroyed.fetch_add(1, std::memory_order_release);
  }
}
