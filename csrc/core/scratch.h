// The communicator's scratch buffers, one grow-only buffer per slot and kept
// between calls (scComm::scratch). Every user names its slot here, so no two
// areas can pick the same number: a schedule that calls another (sparse's
// dense fallback, DSOP's allreduce) keeps its own buffers alive meanwhile.
#pragma once

namespace sc {

enum class Scratch : int {
  // Dense schedules (algo/).
  RingSlice0,  // ring: the two slices in flight (one is reduced while the other arrives)
  RingSlice1,
  Work,  // reduce-scatter's full vector of partial sums
  Peer,  // what a peer sends before it is reduced: fold, halving, recursive doubling

  // DSOP (dsop/).
  DsopVectors,  // the gathered [a | b] pairs
  DsopRows,     // all_scatter's slices
  DsopCounts,   // sparse: the gathered non-zero counts
  DsopIndices,  // sparse: gathered indices and their unions
  DsopValues,   // sparse: gathered values
  DsopDense,    // sparse: the compressed dense vectors
  DsopCompact,  // sparse: the compressed matrix
  DsopTemp,     // sparse, device: CUB temporary storage and read-back words

  // Neighbourhood collectives (neighbor/).
  NbrGroup,  // combining: the friend group's blocks
  NbrStage,  // combining: the group messages that arrive
  NbrMeta,   // host words staged in device memory (creation, allgatherv's sizes)

  // Sparse allreduce (sparse/): an index and a value array per stream home
  // (sparse/stream.h's Home, kPool0 .. kSendBuf), then the call's buffers.
  SparseArrays,
  SparseOut = SparseArrays + 2 * 6,  // the dense result when the caller gave no buffer
  SparseMeta,                        // the counts of the call
  SparseHeader,                      // the header round
  SparseOps,                         // first of the ops' temporaries (sparse/ops.h OpsSlot)
  Count = SparseOps + 4
};

// The slot `i` places after `first`: a home's arrays, an ops temporary.
constexpr Scratch operator+(Scratch first, int i) { return Scratch(int(first) + i); }

}  // namespace sc
