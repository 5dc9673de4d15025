// Ring allreduce (Patarasuk & Yuan, "Bandwidth optimal all-reduce algorithms
// for clusters of workstations"): P-1 steps of reduce-scatter around the ring,
// then P-1 steps of allgather. Each rank sends 2(P-1)/P of the vector — the
// lower bound for allreduce. Steps are cut into slices so a bounded scratch
// buffer suffices and the reduction of slice k overlaps the transfer of k+1.
// The ring runs in the communicator's ring order (Ctx::ringRank/ringPos: the
// topology file's depth-first order of the hosts, else rank order): the rank
// at position p sends to position p+1, and the blocks are named by the ranks
// at the positions, so block r (Blocks' r-th) still ends on rank r.
#include "algo/dense.h"

namespace sc {

void ringReduceScatter(Ctx& c, const void* src, void* work, const Blocks& L) {
  const int P = c.size, p = c.ringPos(c.rank), right = c.ringRank(p + 1), left = c.ringRank(p - 1);
  if (P == 1) {
    c.copy(c.at(work, L.off(0)), c.at(src, L.off(0)), L.len(0));
    return;
  }
  // No slice is longer than the largest block (block 0): the scratch then
  // follows the message, not a large pipelineBytes (up to 1 GiB per slice).
  const size_t S = std::min(c.sliceElems(), std::max<size_t>(1, L.len(0)));
  // Where the transport reduces a slice as it arrives, no staging slices.
  const bool fused = c.fusesReduce(left);
  char* tmp[2] = {};
  if (!fused) tmp[0] = c.scratch(Scratch::RingSlice0, S), tmp[1] = c.scratch(Scratch::RingSlice1, S);
  // Step s: send the block of position p-s-1 (partial sum), receive that of
  // p-s-2 and add our own contribution; after P-1 steps the block of position
  // p (this rank's) has passed every rank. The received slice comes first in
  // the reduction, fused or not.
  for (int s = 0; s < P - 1; ++s) {
    c.phase("ring reduce-scatter", s, P - 1);
    const size_t sb = size_t(c.ringRank(p - s - 1)), rb = size_t(c.ringRank(p - s - 2));
    const char* sendBase = c.at(s == 0 ? src : work, L.off(sb));
    const size_t slen = L.len(sb), rlen = L.len(rb);
    const size_t nslices = std::max((slen + S - 1) / S, (rlen + S - 1) / S);
    auto sliceLen = [&](size_t len, size_t k) { return k * S < len ? std::min(S, len - k * S) : 0; };
    auto postSlice = [&](size_t k) {
      const size_t off = L.off(rb) + k * S, n = sliceLen(rlen, k);
      return c.post(
          {c.send(right, sendBase + k * S * c.esz, sliceLen(slen, k)),
           fused ? c.recvReduce(left, c.at(work, off), c.at(src, off), false, n) : c.recv(left, tmp[k % 2], n)});
    };
    auto pending = nslices ? postSlice(0) : nullptr;
    for (size_t k = 0; k < nslices; ++k) {
      pending->wait(c.dl);
      pending = k + 1 < nslices ? postSlice(k + 1) : nullptr;
      const size_t off = L.off(rb) + k * S;
      if (!fused) c.reduce(c.at(work, off), tmp[k % 2], c.at(src, off), sliceLen(rlen, k));
    }
  }
}

void ringAllGather(Ctx& c, void* buf, const Blocks& L, const void* own) {
  const int P = c.size, p = c.ringPos(c.rank), right = c.ringRank(p + 1), left = c.ringRank(p - 1);
  // Step s: forward the block of position p-s (ours at s = 0, from `own` when given: single
  // copy reads the sender's memory, and a block this rank has just written
  // reads at half the speed of its input, 64 KiB at P = 2), receive that of
  // p-s-1 in place.
  for (int s = 0; s < P - 1; ++s) {
    c.phase("ring allgather", s, P - 1);
    const size_t sb = size_t(c.ringRank(p - s)), rb = size_t(c.ringRank(p - s - 1));
    const void* from = s == 0 && own ? own : c.at(buf, L.off(sb));
    c.sendrecv(right, from, L.len(sb), left, c.at(buf, L.off(rb)), L.len(rb));
  }
}

void ringAllReduce(Ctx& c, const void* send, void* recv, size_t count) {
  const Blocks L{count, size_t(c.size)};
  ringReduceScatter(c, send, recv, L);
  ringAllGather(c, recv, L);
}

}  // namespace sc
