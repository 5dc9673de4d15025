// Dense collective schedules. Each is written once over Ctx's primitives and
// runs on every transport/backend pair. Buffers are untyped; counts are in
// elements of ctx.dt. avg is reduced as sum here; the entry points divide once.
#pragma once

#include <iterator>

#include "algo/ctx.h"
#include "model/dense.h"

namespace sc {

// --- ring (Patarasuk & Yuan) -------------------------------------------------
// Ring reduce-scatter over the P blocks of L: reads src (never written unless it
// aliases work); on return work's block `rank` holds the reduction of that block.
void ringReduceScatter(Ctx& c, const void* src, void* work, const Blocks& L);
// Ring allgather: buf's block `rank` is filled on entry; on return all are.
// own (optional): the same bytes as that block, sent from there at the first
// step (the caller's input: read faster than a block just written).
void ringAllGather(Ctx& c, void* buf, const Blocks& L, const void* own = nullptr);
void ringAllReduce(Ctx& c, const void* send, void* recv, size_t count);

// --- Rabenseifner: recursive halving + recursive doubling, any P -------------
void rabenseifnerAllReduce(Ctx& c, const void* send, void* recv, size_t count);
void halvingReduceScatter(Ctx& c, const void* send, void* recv, size_t recvcount);
void doublingAllGather(Ctx& c, const void* send, void* recv, size_t sendcount);

// --- recursive doubling on the whole vector (small messages) ----------------
void recdblAllReduce(Ctx& c, const void* send, void* recv, size_t count);

// --- broadcast (broadcast.cpp): in place on buf, root's buf the source -------
void binomialBroadcast(Ctx& c, void* buf, size_t count, int root);
// Binomial scatter of Blocks{count, P} (rank r gets block r), ring allgather.
void scatterAllGatherBroadcast(Ctx& c, void* buf, size_t count, int root);

// --- the cost model behind scAlgoAuto (model/dense.h), on the communicator's model
// Predicted seconds of `algo` for `bytes` (the full vector) on this communicator.
inline double predictSeconds(const scComm& comm, Coll coll, scAlgo_t algo, size_t bytes) {
  return model::predictDense(comm.model, coll, algo, bytes);
}
// Resolves scAlgoAuto (config / SPARCOLL_ALGO, the tuning file's rules, then
// the model) and validates the algorithm for the collective.
//
// auto's pick depends on the collective and the size alone, and working it
// out costs ~2,000 instructions, a fifth of a whole 8-byte allreduce on two
// ranks (callgrind): each collective's last pick is kept (core/kept_pick.h).
inline scAlgo_t chooseAlgo(const scComm& comm, Coll coll, scAlgo_t requested, size_t bytes) {
  static_assert(scNumAlgos <= KeptPick::kAlgos, "a kept pick holds an algorithm in 3 bits");
  const size_t slot = size_t(coll);
  if (requested != scAlgoAuto || slot >= std::size(comm.densePick))
    return model::chooseDense(comm.model, coll, requested, bytes);
  return scAlgo_t(
      comm.densePick[slot].get(bytes, [&] { return model::chooseDense(comm.model, coll, requested, bytes); }));
}

}  // namespace sc
