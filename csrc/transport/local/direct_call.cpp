// The one-device direct call's meeting (transport/local/world.h,
// DirectCall): one rendezvous per call, whatever the collective and the
// rank count; the kernel is the last arriving rank's to enqueue, so nobody
// waits for a rank that is not there yet once all are.
#include <exception>

#include "core/dtype.h"
#include "transport/local/device.h"
#include "transport/local/direct.h"
#include "transport/local/world.h"

namespace sc::local {
namespace {

DirectSpec specOf(const World& w, const DirectCall& d) {
  const NativeSig& s = d.sig[0];
  switch (s.kind) {
    case 0: return directAllReduce(w.P, d.send.data(), d.recv.data(), s.count, s.dt, s.op);
    case 1: return directReduceScatter(w.P, d.send.data(), d.recv.data(), s.count, s.dt, s.op);
    case 2: return directAllGather(w.P, d.send.data(), d.recv.data(), s.count, s.dt);
    default: return directBroadcast(w.P, d.recv.data(), s.count, s.dt, s.root);
  }
}

std::string nativeSigText(const NativeSig& s) {
  static const char* kinds[] = {"allreduce", "reduce-scatter", "allgather", "broadcast"};
  std::string t = cat(kinds[s.kind], "(count=", s.count, ", ", dtypeName(s.dt));
  if (s.kind < 2) t += cat(", op ", int(s.op));
  if (s.kind == 3) t += cat(", root ", s.root);
  return t + cat(") as call #", s.seq);
}

}  // namespace

std::string nativeMismatch(const std::vector<NativeSig>& sig) {
  for (size_t q = 1; q < sig.size(); ++q)
    if (!(sig[q] == sig[0]))
      return cat("mismatched native calls: rank ", q, " called ", nativeSigText(sig[q]), ", rank 0 called ",
                 nativeSigText(sig[0]));
  return {};
}

void directCall(World& w, int rank, int device, const std::shared_ptr<EventPool>& pool, const DirectArgs& a,
                const Deadline& dl, Transport& owner) {
  if (w.P == 1) {  // nobody to meet: an allgather's copy at most
    if (a.sig.kind == 2 && a.send != a.recv) {
      void* recv = a.recv;
      localdev::direct(device, directAllGather(1, &a.send, &recv, a.sig.count, a.sig.dt), a.stream);
    }
    return;
  }
  owner.countRendezvous();
  void* ready = pool->record(a.stream, owner);
  std::unique_lock<std::mutex> lk(w.m);
  if (w.abortedElsewhere(rank)) {
    pool->put(ready);
    w.throwIfAbortedElsewhere(rank);
  }
  DirectCall& d = w.direct;
  if (d.sig.empty()) {
    d.send.resize(size_t(w.P));
    d.recv.resize(size_t(w.P));
    d.ready.resize(size_t(w.P));
    d.pool.resize(size_t(w.P));
    d.sig.resize(size_t(w.P));
  }
  const auto q = size_t(rank);
  d.send[q] = a.send;
  d.recv[q] = a.recv;
  d.ready[q] = ready;
  d.pool[q] = pool;
  d.sig[q] = a.sig;
  const bool last = w.arrive(d.meet, lk, rank, a.sig.seq, dl, "a native call", [&] {
    d.sig[q] = NativeSig{};
    pool->put(ready);
  });
  if (!last) {
    waitDone(d.meet, lk, device, a.stream);
    return;
  }
  // The last to arrive: every rank's point is recorded, so its stream can
  // wait for all of them, run the kernel, and mark the point after it. The
  // table is read under the lock; nobody writes it before the call completes.
  std::string error = nativeMismatch(d.sig);
  const DirectSpec spec = error.empty() ? specOf(w, d) : DirectSpec{};
  void* readyOf[kDirectMaxRanks];
  EventPool* poolOf[kDirectMaxRanks];
  for (int r = 0; r < w.P; ++r) {
    readyOf[r] = d.ready[size_t(r)];
    poolOf[r] = d.pool[size_t(r)].get();
  }
  lk.unlock();
  void* done = nullptr;
  std::exception_ptr failed;
  if (error.empty()) {
    try {
      for (int r = 0; r < w.P; ++r)
        if (r != rank) localdev::streamWait(device, a.stream, readyOf[r]);
      localdev::direct(device, spec, a.stream);
      done = pool->record(a.stream, owner);
    } catch (const std::exception& e) {
      failed = std::current_exception();
      error = cat("rank ", rank, " could not enqueue the native call: ", e.what());
    }
  }
  // Every wait on the ranks' points is enqueued (or none will be).
  for (int r = 0; r < w.P; ++r) poolOf[r]->put(readyOf[r]);
  lk.lock();
  w.complete(d.meet, error, done, pool);
  lk.unlock();
  if (failed) std::rethrow_exception(failed);
  SC_REQUIRE(error.empty(), scRemoteError, error);
}

}  // namespace sc::local
