// The collectives a topology's creation runs on host words (degrees, hashes,
// node keys, neighbour lists, proposals): the dense schedules and single
// rounds of the communicator's own transport. Device communicators stage the
// words through device memory on a stream (the legacy default one at
// creation) and wait for them;
// host communicators pass them as they are. Traffic is counted as any other.
#pragma once

#include <cstdint>
#include <vector>

#include "algo/ctx.h"

namespace sc::nbr {

class Meta {
 public:
  // stream: where device staging is ordered (and waited for); nodeOf, when
  // given, lets the traffic counters tell node-crossing messages apart.
  explicit Meta(scComm& comm, void* stream = nullptr, const std::vector<int>* nodeOf = nullptr)
      : comm_(comm), stream_(stream), nodeOf_(nodeOf), rank(comm.rank()), size(comm.size()) {}

  // In place over every rank; op is scSum, scMax or scMin.
  void allReduce(std::vector<uint64_t>& v, scRedOp_t op);
  void allReduce(std::vector<double>& v, scRedOp_t op);
  // Every rank's word, by rank.
  std::vector<uint64_t> allGather(uint64_t mine);
  // v holds size * per words; returns this rank's `per` words of the sum over ranks.
  std::vector<uint64_t> reduceScatterSum(const std::vector<uint64_t>& v, size_t per);

  struct Msg {
    int peer;
    std::vector<uint64_t> words;
  };
  // One round: every send goes to its peer; each receive gets words.size()
  // words from its peer (sizes known to both sides). Messages between a pair
  // match in the order they are listed.
  void exchange(const std::vector<Msg>& sends, std::vector<Msg>& recvs);
  // As exchange with the received sizes unknown: a round of sizes first.
  void exchangeVar(const std::vector<Msg>& sends, std::vector<Msg>& recvs);

 private:
  // Runs f(in, out) on comm memory holding `in` (inBytes) and room for
  // outBytes, then copies the output back to `out`.
  template <typename F>
  void staged(const void* in, size_t inBytes, void* out, size_t outBytes, F f);
  template <typename T>
  void allReduceAs(std::vector<T>& v, scDataType_t dt, scRedOp_t op);

  Ctx ctx(scDataType_t dt, scRedOp_t op) const;

  scComm& comm_;
  void* const stream_;
  const std::vector<int>* const nodeOf_;

 public:
  const int rank, size;
};

}  // namespace sc::nbr
