// The nccl-tests kind of tool: one collective, described the way nccl-tests
// describes it (element counts per size, bus-bandwidth factor, data init, one
// call, check). The driver runs its sweep (sweep.cpp) and prints nccl-tests'
// blocks, the summary and JSON (report.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/tool.h"

namespace scbench {

// nccl-tests' getCollByteCount, in elements. The in-place offsets are per rank:
// the in-place send pointer is recv + sendInplaceOffset * rank, the result
// pointer recv + recvInplaceOffset * rank.
struct Layout {
  size_t sendCount = 0, recvCount = 0, paramCount = 0;
  size_t sendInplaceOffset = 0, recvInplaceOffset = 0;
};

// One measured configuration; identical on every rank.
struct Case {
  scDataType_t dtype;
  scRedOp_t op;
  std::string algorithm;  // one of ToolSpec::algorithms
  Layout layout;
  size_t esz;  // bytes per element
  bool inPlace;
  uint64_t seed;  // changes between init calls so stale results cannot pass
};

inline void* RankState::sendPtr(const Case& c) const {
  return c.inPlace ? recv.data() + c.layout.sendInplaceOffset * c.esz * rank : send.data();
}
inline void* RankState::recvPtr(const Case& c) const {
  return c.inPlace ? recv.data() + c.layout.recvInplaceOffset * c.esz * rank : recv.data();
}

class Collective : public Tool {
 public:
  // Counts for `count` = size / element size elements on nranks ranks.
  virtual Layout layout(size_t count, size_t esz, int nranks) const = 0;
  // busbw = algbw * busFactor; algbw = size / time, size = max(send, recv) bytes.
  virtual double busFactor(int nranks) const = 0;
  // Fills this rank's input (and clears its output) for case c.
  virtual void init(RankState& rs, const Case& c) = 0;
  // One call, enqueued on rs.stream for device ranks.
  virtual scResult_t run(RankState& rs, const Case& c) = 0;
  // After run() completed: this rank's wrong result elements.
  virtual uint64_t check(RankState& rs, const Case& c) = 0;

  // Tool, implemented by the driver's sweep (sweep.cpp) over the members above.
  void addFlags(FlagSet& flags, Options& o) override;  // --inject-error
  double hostBytesPerRank(const Options& o, int nranks) const override;
  long long runRank(Group& g, RankState& rs, const Context& ctx) final;

  // Bytes each of send/recv must hold: the largest layout over the run's
  // types, including the in-place windows at recv + offset * rank.
  size_t bufferBytes(const Options& o, int nranks) const;
};

}  // namespace scbench
