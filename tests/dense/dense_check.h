// One collective call on one rank, checked: exact result against the
// independent reference, untouched send buffer (out of place), untouched guard
// bytes after the output, and a digest for the cross-rank identity check.
// Each returns false when the call itself failed (its peers may then be stuck
// until their deadline, so the caller should stop issuing collectives).
#pragma once

#include "dense_data.h"
#include "dense_util.h"

namespace dtest {

struct Call {
  scAlgo_t algo;
  scDataType_t dt;
  scRedOp_t op;  // ignored by allgather
  size_t count;  // allreduce: count; reduce-scatter: recvcount; allgather: sendcount
  bool inPlace;
  std::string label() const;
};

// expected: makeExpected(dt, op, P, first, n), elements [first, first + n) of
// the result; the rest is left to the cross-rank identity check (xr), so ranks
// may each verify a share of a big result (MPI mode) or all of it.
bool checkAllReduce(scComm_t comm, int rank, int P, const Call& c, const Bytes& expected, CrossRank* xr,
                    size_t first = 0);
// expected: makeExpected(dt, op, P, first, n) with [first, first + n) covering
// this rank's block [rank * recvcount, (rank + 1) * recvcount): the whole
// reduced vector (first = 0, shared by local threads) or just the block.
bool checkReduceScatter(scComm_t comm, int rank, int P, const Call& c, const Bytes& expected, size_t first = 0);
// Payload of rank q: makePayload(q, sendcount * esz, salt).
bool checkAllGather(scComm_t comm, int rank, int P, const Call& c, uint64_t salt, CrossRank* xr);
// Broadcast of root's makePayload(root, count * esz, salt) over each rank's own
// payload (c.op and c.inPlace unused): every rank ends with root's bytes.
bool checkBroadcast(scComm_t comm, int rank, const Call& c, int root, uint64_t salt);

}  // namespace dtest
