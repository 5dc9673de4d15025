// What a benchmark tool implements: one collective, described the way
// nccl-tests describes it (element counts per size, bus-bandwidth factor,
// data init, one call, check). The driver (driver.h) owns everything else:
// command line, transports, buffers, size sweep, timing, traffic, reports.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/buffer.h"
#include "common/options.h"
#include "common/verify.h"
#include "sparcoll/sparcoll.h"

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
  size_t esz;             // bytes per element
  bool inPlace;
  uint64_t seed;          // changes between init calls so stale results cannot pass
};

// One rank's view: its communicator and its buffers (host or device).
struct RankState {
  int rank = 0, nranks = 1;
  scComm_t comm = nullptr;
  void* stream = nullptr;  // cudaStream_t for device ranks, NULL for host ranks
  bool device = false;     // buffers are device memory
  int cudaDevice = -1;
  Buffer send, recv;       // capacity: the largest Layout of the run
  std::vector<char> staging;  // host copy for device buffers
  std::shared_ptr<void> toolState;  // free for the tool (extra buffers, handles)

  // The pointers of a call, nccl-tests' convention for in-place.
  void* sendPtr(const Case& c) const {
    return c.inPlace ? recv.data() + c.layout.sendInplaceOffset * c.esz * rank : send.data();
  }
  void* recvPtr(const Case& c) const {
    return c.inPlace ? recv.data() + c.layout.recvInplaceOffset * c.esz * rank : recv.data();
  }

  // dst[i] = value(i) as `dt` for i < n; dst is one of this rank's buffers.
  template <typename F>
  void write(void* dst, size_t n, scDataType_t dt, F value) {
    const size_t bytes = n * sc::dtypeSize(dt);
    char* host = device ? hostScratch(bytes) : static_cast<char*>(dst);
    fillValues(host, n, dt, value);
    if (device) copyToBuffer(dst, host, bytes, true);
  }
  // Elements i < n of src (one of this rank's buffers) that differ from want(i).
  template <typename F>
  uint64_t countWrong(const void* src, size_t n, scDataType_t dt, F want) {
    const size_t bytes = n * sc::dtypeSize(dt);
    if (!device) return scbench::countWrong(src, n, dt, want);
    char* host = hostScratch(bytes);
    copyFromBuffer(host, src, bytes, true);
    return scbench::countWrong(host, n, dt, want);
  }
  void zero(void* dst, size_t bytes) { zeroBuffer(dst, bytes, device); }

 private:
  char* hostScratch(size_t bytes) {
    if (staging.size() < bytes) staging.resize(bytes);
    return staging.data();
  }
};

class Collective {
 public:
  virtual ~Collective() = default;
  virtual ToolSpec spec() const = 0;
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
};

}  // namespace scbench
