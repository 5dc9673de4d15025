// The direct collective's specs and their host version (transport/local/direct.h).
#include "transport/local/direct.h"

#include <cstring>
#include <memory>
#include <vector>

#include "algo/ctx.h"
#include "backend/backend.h"
#include "core/error.h"

namespace sc {
namespace {

DirectSpec base(int P, scDataType_t dt, scRedOp_t op) {
  SC_REQUIRE(P >= 1 && P <= kDirectMaxRanks, scInvalidUsage, "a direct call takes 1 to ", kDirectMaxRanks,
             " ranks, not ", P);
  DirectSpec s;
  s.P = P;
  s.dt = dt;
  s.op = op == scAvg ? scSum : op;
  return s;
}

}  // namespace

DirectSpec directAllReduce(int P, const void* const* send, void* const* recv, size_t count, scDataType_t dt,
                           scRedOp_t op) {
  DirectSpec s = base(P, dt, op);
  const Blocks B{count, size_t(P)};
  s.blocks = P;
  s.reduce = s.allOut = true;
  for (int b = 0; b < P; ++b) {
    s.in[b] = send[b];
    s.out[b] = recv[b];
    s.srcOff[b] = s.dstOff[b] = B.off(size_t(b));
    s.len[b] = B.len(size_t(b));
  }
  return s;
}

DirectSpec directReduceScatter(int P, const void* const* send, void* const* recv, size_t recvcount, scDataType_t dt,
                               scRedOp_t op) {
  DirectSpec s = base(P, dt, op);
  s.blocks = P;
  s.reduce = true;
  for (int b = 0; b < P; ++b) {
    s.in[b] = send[b];
    s.out[b] = recv[b];
    s.srcOff[b] = size_t(b) * recvcount;
    s.len[b] = recvcount;
  }
  return s;
}

DirectSpec directAllGather(int P, const void* const* send, void* const* recv, size_t sendcount, scDataType_t dt) {
  DirectSpec s = base(P, dt, scSum);
  s.blocks = P;
  s.allOut = true;
  for (int b = 0; b < P; ++b) {
    s.in[b] = send[b];
    s.out[b] = recv[b];
    s.src[b] = b;
    s.dstOff[b] = size_t(b) * sendcount;
    s.len[b] = sendcount;
  }
  return s;
}

DirectSpec directBroadcast(int P, void* const* buf, size_t count, scDataType_t dt, int root) {
  DirectSpec s = base(P, dt, scSum);
  s.blocks = 1;
  s.allOut = true;
  for (int q = 0; q < P; ++q) s.in[q] = s.out[q] = buf[q];
  s.src[0] = root;
  s.len[0] = count;
  return s;
}

void directHost(const DirectSpec& s) {
  static const std::unique_ptr<Backend> cpu = makeCpuBackend();
  const size_t esz = dtypeSize(s.dt);
  auto at = [&](const void* p, size_t off) { return static_cast<const char*>(p) + off * esz; };
  std::vector<char> v;
  for (int b = 0; b < s.blocks; ++b) {
    const size_t n = s.len[b], bytes = n * esz;
    const char* from = at(s.in[s.reduce ? b : s.src[b]], s.srcOff[b]);
    if (s.reduce) {
      // Every input is read before any output is written: in place, an
      // output is one of the inputs.
      v.assign(from, from + bytes);
      for (int q = 0; q < s.P; ++q)
        if (q != b) cpu->reduce(v.data(), v.data(), at(s.in[q], s.srcOff[b]), n, s.dt, s.op, nullptr);
      from = v.data();
    }
    for (int r = s.allOut ? 0 : b; r < (s.allOut ? s.P : b + 1); ++r) {
      char* to = static_cast<char*>(s.out[r]) + s.dstOff[b] * esz;
      if (to != from && bytes) std::memmove(to, from, bytes);
    }
  }
}

}  // namespace sc
