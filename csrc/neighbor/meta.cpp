#include "neighbor/meta.h"

#include <algorithm>
#include <cstring>

#include "algo/dense.h"

namespace sc::nbr {

Ctx Meta::ctx(scDataType_t dt, scRedOp_t op) const {
  Ctx c(comm_, dt, op, stream_);
  c.nodeOf = nodeOf_;
  return c;
}

template <typename F>
void Meta::staged(const void* in, size_t inBytes, void* out, size_t outBytes, F f) {
  if (!comm_.device()) {
    f(in, out);
    return;
  }
  // One device buffer: the input, then the output.
  char* dev = comm_.scratch(Scratch::NbrMeta, inBytes + outBytes + 8, stream_);
  Backend& b = *comm_.backend;
  if (inBytes) b.copy(dev, in, inBytes, stream_);
  f(static_cast<const void*>(dev), static_cast<void*>(dev + inBytes));
  if (outBytes) b.copy(out, dev + inBytes, outBytes, stream_);
  comm_.hostSync(stream_, comm_.deadline());
}

template <typename T>
void Meta::allReduceAs(std::vector<T>& v, scDataType_t dt, scRedOp_t op) {
  if (size == 1 || v.empty()) return;
  const size_t bytes = v.size() * sizeof(T);
  staged(v.data(), bytes, v.data(), bytes, [&](const void* in, void* out) {
    Ctx c = ctx(dt, op);
    recdblAllReduce(c, in, out, v.size());
  });
}

void Meta::allReduce(std::vector<uint64_t>& v, scRedOp_t op) { allReduceAs(v, scUint64, op); }
void Meta::allReduce(std::vector<double>& v, scRedOp_t op) { allReduceAs(v, scFloat64, op); }

std::vector<uint64_t> Meta::allGather(uint64_t mine) {
  std::vector<uint64_t> all(size_t(size), 0);
  all[size_t(rank)] = mine;
  if (size == 1) return all;
  staged(&mine, 8, all.data(), all.size() * 8, [&](const void* in, void* out) {
    Ctx c = ctx(scUint64, scSum);
    doublingAllGather(c, in, out, 1);
  });
  return all;
}

std::vector<uint64_t> Meta::reduceScatterSum(const std::vector<uint64_t>& v, size_t per) {
  std::vector<uint64_t> mine(per, 0);
  if (size == 1) {
    std::copy_n(v.begin(), per, mine.begin());
    return mine;
  }
  staged(v.data(), v.size() * 8, mine.data(), per * 8, [&](const void* in, void* out) {
    Ctx c = ctx(scUint64, scSum);
    halvingReduceScatter(c, in, out, per);
  });
  return mine;
}

void Meta::exchange(const std::vector<Msg>& sends, std::vector<Msg>& recvs) {
  // Packed: every send's words, then room for every receive's.
  std::vector<uint64_t> in, out;
  for (const Msg& m : sends) in.insert(in.end(), m.words.begin(), m.words.end());
  size_t outWords = 0;
  for (const Msg& m : recvs) outWords += m.words.size();
  out.resize(outWords);
  staged(in.data(), in.size() * 8, out.data(), out.size() * 8, [&](const void* sbuf, void* rbuf) {
    Ctx c = ctx(scUint64, scSum);
    std::vector<P2POp> ops;
    size_t off = 0;
    for (const Msg& m : sends) {
      ops.push_back(c.send(m.peer, c.at(sbuf, off), m.words.size()));
      off += m.words.size();
    }
    off = 0;
    for (const Msg& m : recvs) {
      ops.push_back(c.recv(m.peer, c.at(rbuf, off), m.words.size()));
      off += m.words.size();
    }
    c.exchange(std::move(ops));
  });
  size_t off = 0;
  for (Msg& m : recvs) {
    std::copy_n(out.begin() + std::ptrdiff_t(off), m.words.size(), m.words.begin());
    off += m.words.size();
  }
}

void Meta::exchangeVar(const std::vector<Msg>& sends, std::vector<Msg>& recvs) {
  std::vector<Msg> sizesOut, sizesIn;
  for (const Msg& m : sends) sizesOut.push_back({m.peer, {uint64_t(m.words.size())}});
  for (const Msg& m : recvs) sizesIn.push_back({m.peer, {0}});
  exchange(sizesOut, sizesIn);
  for (size_t i = 0; i < recvs.size(); ++i) recvs[i].words.assign(sizesIn[i].words[0], 0);
  exchange(sends, recvs);
}

}  // namespace sc::nbr
