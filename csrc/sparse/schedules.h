// The sparse allreduce schedules (thesis §3.3), one file each, written once over
// SpCtx. Input: this rank's stream over [0, N) (settled). Output: the sum over
// all ranks over [0, N), sparse or dense, identical on every rank; dense results
// are built in s.out() where the schedule can (home kOut). avg is applied by
// the caller.
#pragma once

#include "sparse/engine.h"

namespace sc::sp {

// SSAR_Rec_Dbl: recursive doubling, sparse merge after every stage.
Stream ssarRecDbl(SpCtx& s, const Stream& in);
// SSAR_Split_AllGather: split to owners, owners sum, sparse allgather.
Stream ssarSplitAllGather(SpCtx& s, const Stream& in);
// DSAR_Split_AllGather: split to owners, owners sum and densify, dense allgather.
Stream dsarSplitAllGather(SpCtx& s, const Stream& in);
// Early-switch DSAR: sparse recursive halving for log2(groupSize) stages, dense
// halving for the rest, dense recursive-doubling allgather.
Stream dsarEarlySwitch(SpCtx& s, const Stream& in, int groupSize);
// Densify, then the foundation's dense allreduce.
Stream denseFallback(SpCtx& s, const Stream& in);

// --- phases shared by the split algorithms (split.cpp) ------------------------
// The ranges of the split: Blocks{N, P}, rank p owns range p.
// Sends every range of `in` to its owner (all to all, after a count round) and
// sums the pieces as they arrive. Returns this rank's range, summed.
Stream splitReduce(SpCtx& s, const Stream& in);
// Every owner's range densified into s.out(), then the foundation's ring allgather.
Stream denseAllGather(SpCtx& s, const Stream& mine);
// How owners sum (split.cpp): SPARCOLL_SPARSE_OWNER_SUM=merge|sort, or by the
// memory (device: sort). Throws scInvalidArgument for any other value; the
// call's local checks ask first, so a bad value fails every rank at the
// header round instead of leaving peers waiting mid-schedule.
bool ownerSumBySort(bool onDevice);

}  // namespace sc::sp
