// What a collective call is, as every rank must agree on it. The transport
// derives the call's message tags from it (with the call's sequence number),
// so the messages of two different calls never match each other, and the
// mismatch check (SPARCOLL_CHECK) compares it across ranks and names it in
// its message.
#pragma once

#include <cstdint>
#include <string>

#include "sparcoll/sparcoll.h"

struct scComm;

namespace sc {

// name and algo point to strings of static storage (literals, tables):
// setCall compares them by pointer to reuse the last call's hash.
struct CallSig {
  const char* name = "";       // the C entry point, "scAllReduce"
  uint64_t count = 0;          // what every rank passes; kNoCount where it may differ by rank
  int dtype = -1;              // scDataType_t, -1: none
  int op = -1;                 // scRedOp_t, -1: none
  const char* algo = nullptr;  // the algorithm as resolved (or as asked, where the call resolves it later)
  uint64_t extra = 0;          // anything else all ranks pass alike (index type, shape, broadcast's root...)

  static constexpr uint64_t kNoCount = ~uint64_t(0);
  // A hash of every field (FNV-1a over words, then an avalanche); equal
  // signatures hash alike on every rank.
  uint32_t hash() const;
  // "scAllReduce(count=2000, float32, sum, ring)".
  std::string text() const;
};

// Starts call number ++seq on comm: records its signature, runs the mismatch
// check when configured, and tags the call's messages. Called by each
// collective once its arguments are checked and its algorithm is resolved,
// before its first message (a call refused by its checks takes no number).
void setCall(scComm& comm, const CallSig& sig);

}  // namespace sc
