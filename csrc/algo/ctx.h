// What a schedule sees: the primitives send/recv (in rounds), reduce, copy and
// scratch memory, bound to one call (dtype, op, stream, deadline). Traffic is
// counted here, once, whatever the transport. A planned call's primitives
// are recorded here (CallPlan) and run at its end (Ctx::run).
#pragma once

#include <algorithm>
#include <memory>
#include <vector>

#include "core/comm.h"
#include "topology/comm_topo.h"

namespace sc {

// count units split into `parts` contiguous blocks, sizes differing by at most one
// unit; offsets and lengths are in elements, a unit being `unit` elements (e.g.
// a matrix row of DSOP's row blocks; 1 for plain vectors).
struct Blocks {
  size_t count;
  size_t parts;
  size_t unit = 1;
  size_t off(size_t i) const { return unit * (i * (count / parts) + std::min(i, count % parts)); }
  size_t len(size_t i) const { return unit * (count / parts + (i < count % parts ? 1 : 0)); }
};

class Ctx {
 public:
  // planned: the schedule may be recorded and run at the end (run()) where
  // the transport plans calls (Transport::plans): only for schedules whose
  // steps never depend on the data they move (the dense ones).
  Ctx(scComm& c, scDataType_t dt, scRedOp_t op, void* stream, bool planned = false)
      : comm(c),
        dt(dt),
        op(op),
        esz(dtypeSize(dt)),
        rank(c.rank()),
        size(c.size()),
        stream(stream),
        dl(c.callDeadline()),
        ringOrder_(c.topo ? c.topo->order.data() : nullptr),
        ringPos_(c.topo ? c.topo->pos.data() : nullptr) {
    if (planned && c.transport->plans()) {
      plan_ = &c.plan;
      plan_->clear();
      c.holdScratch(true);
    }
  }
  // A planned call's scratch buffers that grew during it go back now, in the
  // stream's order after the work that used them (scComm::holdScratch).
  ~Ctx() {
    if (plan_) comm.holdScratch(false, stream);
  }
  // A copy (a Ctx returned by value) is of an unplanned one: a plan has one owner.
  Ctx(const Ctx& o) : Ctx(o.comm, o.dt, o.op, o.stream) {
    SC_REQUIRE(!o.plan_, scInternalError, "a planned call's context was copied");
    nodeOf = o.nodeOf;
  }
  Ctx& operator=(const Ctx&) = delete;

  scComm& comm;
  const scDataType_t dt;
  const scRedOp_t op;
  const size_t esz;
  const int rank, size;
  void* const stream;
  const Deadline dl;
  // Node of every rank, when the schedule knows them: post() then counts the
  // messages that cross nodes (scStats_t.interNode*).
  const std::vector<int>* nodeOf = nullptr;

  // The ring order (topology/topology.h): the rank at ring position i (any
  // integer, taken mod size) and rank r's position. Without a topology file
  // both are the identity. A ring schedule runs in positions: its right
  // neighbour is ringRank(ringPos(rank) + 1), and the block a position holds
  // is named by the rank there, so block r still ends on rank r.
  int ringRank(int i) const;
  int ringPos(int r) const { return ringPos_ ? ringPos_[r] : r; }

  // Where the schedule is, named in the errors of its rounds (a timeout then
  // says "ring reduce-scatter step 2/3 of scAllReduce(...)" and whom the rank
  // was waiting for). step counts from 0; steps 0: no step numbers.
  void phase(const char* phase, int step = 0, int steps = 0) {
    phase_ = phase;
    step_ = step;
    steps_ = steps;
  }
  std::string where() const;

  // Element pointer arithmetic on untyped buffers.
  char* at(void* base, size_t elem) const { return static_cast<char*>(base) + elem * esz; }
  const char* at(const void* base, size_t elem) const { return static_cast<const char*>(base) + elem * esz; }

  // Posts a round; zero-byte messages are dropped (both sides derive sizes from
  // the same layout, so they agree on which messages exist).
  std::unique_ptr<Round> post(std::vector<P2POp> ops);
  // Posts a round and waits for it. An lvalue's vector is left to its owner
  // for reuse (a schedule that posts a round per call keeps its capacity),
  // with its zero-byte messages removed.
  void exchange(std::vector<P2POp>& ops);
  void exchange(std::vector<P2POp>&& ops) { exchange(ops); }
  // One send and one receive in a round (either may be skipped with peer < 0).
  void sendrecv(int to, const void* sbuf, size_t selems, int from, void* rbuf, size_t relems) {
    exchange({send(to, sbuf, selems), recv(from, rbuf, relems)});
  }
  // A round with one send, or one receive, of n elements.
  void sendTo(int peer, const void* buf, size_t n) { exchange({send(peer, buf, n)}); }
  void recvFrom(int peer, void* buf, size_t n) { exchange({recv(peer, buf, n)}); }
  P2POp send(int to, const void* buf, size_t elems) const {
    return {P2POp::Send, to, const_cast<void*>(buf), to < 0 ? 0 : elems * esz};
  }
  P2POp recv(int from, void* buf, size_t elems) const { return {P2POp::Recv, from, buf, from < 0 ? 0 : elems * esz}; }

  // Whether a receive from `from` can be reduced on arrival (recvReduce): the
  // transport reads the sender's buffer itself. A schedule that can use it
  // needs no staging buffer and makes one pass over the data instead of two.
  bool fusesReduce(int from) const { return from >= 0 && comm.transport->fusesReduce(from); }
  // A receive of elems elements reduced into dst on arrival: dst = message op
  // own (own op message when ownFirst), the order reduce() would take. Only
  // where fusesReduce(from); dst must not overlap what the round sends.
  P2POp recvReduce(int from, void* dst, const void* own, bool ownFirst, size_t elems) const {
    P2POp o = recv(from, dst, elems);
    o.fuse = {comm.backend.get(), own, dt, op, ownFirst};
    return o;
  }

  // dst = a op b over n elements.
  void reduce(void* dst, const void* a, const void* b, size_t n) {
    if (!n) return;
    if (plan_) return planLocal(CallPlan::Reduce, dst, a, b, n);
    comm.backend->reduce(dst, a, b, n, dt, op, stream);
  }
  void copy(void* dst, const void* src, size_t n) {
    if (!n || dst == src) return;
    if (plan_) return planLocal(CallPlan::Copy, dst, src, nullptr, n * esz);
    comm.backend->copy(dst, src, n * esz, stream);
  }
  // buf /= divisor over n elements (avg's one division).
  void divide(void* buf, size_t n, int divisor) {
    if (!n) return;
    if (plan_) return planLocal(CallPlan::Divide, buf, nullptr, nullptr, n, divisor);
    comm.backend->divide(buf, n, dt, divisor, stream);
  }
  // The end of the schedule: a planned call runs now (Transport::runPlan);
  // otherwise everything was enqueued as it went.
  void run() {
    if (plan_) runPlan();
  }
  // The plan's step of `kind` at the schedule's current phase.
  CallPlan::Step planStep(CallPlan::Kind kind) const {
    CallPlan::Step s{kind};
    s.phase = phase_;
    s.step = step_;
    s.steps = steps_;
    return s;
  }
  // The communicator's scratch buffer of `slot`, with room for elems elements.
  char* scratch(Scratch slot, size_t elems) { return comm.scratch(slot, std::max<size_t>(elems * esz, 1), stream); }
  // Elements per pipeline slice (ring schedules).
  size_t sliceElems() const { return std::max<size_t>(1, comm.pipelineBytes() / esz); }

 private:
  // Counts the round's traffic, records it and posts it (zero-byte messages dropped).
  std::unique_ptr<Round> postRaw(std::vector<P2POp>& ops);
  void planLocal(CallPlan::Kind kind, void* dst, const void* a, const void* b, size_t n, int divisor = 1);
  void runPlan();
  CallPlan* plan_ = nullptr;
  const char* phase_ = nullptr;
  int step_ = 0, steps_ = 0;
  const int* const ringOrder_;
  const int* const ringPos_;
};

// a mod p in [0, p) for any sign of a: ring neighbours and block numbers.
inline int mod(int a, int p) { return ((a % p) + p) % p; }

inline int Ctx::ringRank(int i) const { return ringOrder_ ? ringOrder_[mod(i, size)] : mod(i, size); }

// Largest power of two <= p.
inline int pow2Floor(int p) {
  int q = 1;
  while (q * 2 <= p) q *= 2;
  return q;
}

}  // namespace sc
