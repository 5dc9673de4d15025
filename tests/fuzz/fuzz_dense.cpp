// Dense collectives (scAllReduce, scReduceScatter, scAllGather, scBarrier,
// scBroadcast with any root, -1 and P included) on
// local communicators of 1-3 ranks: any count, dtype, op, algorithm, NULL
// buffers, a stream on a host communicator, and send/recv layouts in one
// arena (disjoint, in place, partly overlapping). Every rank makes the same
// call with the same layout, so every rank must give the same result.
#include "fuzz_util.h"

namespace {

enum Coll { kAllReduce, kReduceScatter, kAllGather, kBarrier, kBroadcast };

// Where the buffers sit. Offsets are in bytes inside one arena per rank.
struct Layout {
  int mode;      // 0 disjoint, 1 in place, 2 overlapping at an offset, 3 NULL send, 4 NULL recv
  size_t shift;  // mode 2: recv = send + shift (may be unaligned)
};

struct Call {
  Coll coll;
  size_t count;
  scDataType_t dt;
  scRedOp_t op;
  scAlgo_t algo;
  Layout lay;
  bool stream;
  int root = 0;  // broadcast
};

// Element counts the call reads from send and writes to recv on P ranks.
void extents(const Call& c, int P, size_t* sendElems, size_t* recvElems) {
  switch (c.coll) {
    case kAllReduce: *sendElems = *recvElems = c.count; break;
    case kReduceScatter:
      *sendElems = c.count * P;
      *recvElems = c.count;
      break;
    case kAllGather:
      *sendElems = c.count;
      *recvElems = c.count * P;
      break;
    case kBroadcast:
      *sendElems = c.count;
      *recvElems = 0;
      break;  // in place in "send"
    default: *sendElems = *recvElems = 0;
  }
}

scResult_t runRank(const Call& c, int P, int rank, scComm_t comm, std::vector<uint8_t>& arena, size_t sendBytes,
                   size_t recvBytes) {
  uint8_t* base = arena.data();
  const void* send = base;
  void* recv = base + sendBytes;  // disjoint
  const size_t esz = fz::elemSize(c.dt);
  // An impossible count gets no offsets (they would overflow): base pointers only.
  const bool huge = c.count > (size_t(1) << 40);
  switch (huge && (c.lay.mode == 1 || c.lay.mode == 2) ? 0 : c.lay.mode) {
    case 1:  // the collective's own in-place form
      if (c.coll == kAllReduce) recv = base;
      if (c.coll == kReduceScatter) recv = base + size_t(rank) * c.count * esz;
      if (c.coll == kAllGather) {
        recv = base;
        send = base + size_t(rank) * c.count * esz;
      }
      break;
    case 2: recv = base + c.lay.shift; break;
    case 3: send = nullptr; break;
    case 4: recv = nullptr; break;
    default: break;
  }
  (void)recvBytes;
  void* stream = c.stream ? fz::bogusStream() : nullptr;
  switch (c.coll) {
    case kAllReduce: return scAllReduce(send, recv, c.count, c.dt, c.op, c.algo, comm, stream);
    case kReduceScatter: return scReduceScatter(send, recv, c.count, c.dt, c.op, c.algo, comm, stream);
    case kAllGather: return scAllGather(send, recv, c.count, c.dt, c.algo, comm, stream);
    // In place: mode 3 gives it NULL, the others the arena's start.
    case kBroadcast: return scBroadcast(const_cast<void*>(send), c.count, c.dt, c.root, c.algo, comm, stream);
    default: return scBarrier(comm, stream);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider p(data, size);
  const int P = p.ConsumeIntegralInRange<int>(1, 3);
  scComm_t* comms = fz::localComms(P);
  Call c;
  c.coll = static_cast<Coll>(p.ConsumeIntegralInRange<int>(0, 3));
  c.count = fz::pickCount(p, 2048);
  c.dt = fz::pickEnum<scDataType_t>(p, scNumTypes);
  c.op = fz::pickEnum<scRedOp_t>(p, scNumOps);
  c.algo = fz::pickEnum<scAlgo_t>(p, scNumAlgos);
  c.lay.mode = p.ConsumeIntegralInRange<int>(0, 6) % 5;  // disjoint twice as often
  c.stream = p.ConsumeIntegralInRange<int>(0, 15) == 0;
  // Broadcast takes half of the barrier's inputs (the older seeds decode as before otherwise).
  if (c.coll == kBarrier && p.ConsumeBool()) {
    c.coll = kBroadcast;
    c.root = p.ConsumeIntegralInRange<int>(-1, P);
  }
  // Sizes the arena for what a valid call would touch; a huge count is
  // rejected before any access, so it gets a token arena.
  const bool huge = c.count > (size_t(1) << 40);
  size_t sendElems = 0, recvElems = 0;
  extents(c, P, &sendElems, &recvElems);
  const size_t esz = fz::elemSize(c.dt);
  const size_t sendBytes = huge ? 0 : sendElems * esz, recvBytes = huge ? 0 : recvElems * esz;
  c.lay.shift = p.ConsumeIntegralInRange<size_t>(0, sendBytes ? sendBytes - 1 : 0);
  const size_t arenaBytes = sendBytes + recvBytes + (c.lay.mode == 2 ? c.lay.shift : 0);
  std::vector<std::vector<uint8_t>> arenas;
  for (int r = 0; r < P; ++r) arenas.push_back(fz::filled(p, arenaBytes));
  // Mode 2 with shift 0 is in place for allreduce, and a shift of exactly
  // rank*count elements is reduce-scatter's in-place form on that rank only:
  // ranks would then disagree by design (one in place, one overlapping), so
  // such a layout is turned into the in-place one on every rank.
  // (count x esz can wrap to 0 for a huge count: no in-place shift exists then.)
  size_t blockBytes = 0;
  if (c.lay.mode == 2 && c.coll == kReduceScatter && !__builtin_mul_overflow(c.count, esz, &blockBytes) && blockBytes &&
      c.lay.shift % blockBytes == 0)
    c.lay.mode = 1;
  if (c.lay.mode == 2 && c.coll == kAllGather && c.lay.shift == 0) c.lay.mode = 1;  // in place on rank 0 only
  std::vector<scResult_t> res(P);
  fz::onRanks(P, [&](int r) { res[r] = runRank(c, P, r, comms[r], arenas[r], sendBytes, recvBytes); });
  fz::expectAgree("dense collective", res, comms);
  return 0;
}
