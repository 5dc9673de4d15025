// 8-bit integer sum, avg and prod that overflow: two's complement wrap-around
// (sparcoll.h; core/reduce_op.h) whatever the algorithm. Open MPI's AVX op
// component saturates int8/uint8 MPI_SUM (`--mca op ^avx` hides it), so native
// on MPI used to give 127/255 where ring gave the wrapped sum; native now runs
// the library's own operator as an MPI user op. The reference wraps in 64-bit
// arithmetic modulo 256 here, independently of the library.
#include <cstdint>
#include <tuple>

#include "dense_check.h"

namespace dtest {
namespace {

// Rank r's element i: large values (>= 100 as uint8, many negative as int8),
// so that almost every sum and product over two or more ranks overflows.
uint8_t input(int r, size_t i) { return uint8_t(100 + (size_t(r) * 53 + i * 17) % 156); }

// The wrapped reduction of element i over P ranks, as an unsigned byte.
uint8_t wrapped(scRedOp_t op, int P, size_t i) {
  uint64_t acc = op == scProd ? 1 : 0;
  for (int r = 0; r < P; ++r) acc = op == scProd ? (acc * input(r, i)) & 0xff : (acc + input(r, i)) & 0xff;
  return uint8_t(acc);
}

// avg: the wrapped sum divided by P, truncated toward zero in the element type.
uint8_t expected(scDataType_t dt, scRedOp_t op, int P, size_t i) {
  const uint8_t w = wrapped(op, P, i);
  if (op != scAvg) return w;
  return dt == scInt8 ? uint8_t(int8_t(int8_t(w) / P)) : uint8_t(w / P);
}

class EightBitWrap : public testing::TestWithParam<std::tuple<int, scAlgo_t>> {};

TEST_P(EightBitWrap, AllReduceAndReduceScatter) {
  const int P = std::get<0>(GetParam());
  const scAlgo_t algo = std::get<1>(GetParam());
  DT_SKIP_UNLESS_RUNS(P);
  const size_t n = 999, rc = 333;  // allreduce count; reduce-scatter recvcount
  const scConfig_t cfg = config(30, 64);
  sctest::run(
      P,
      [&](scComm_t comm, int rank) {
        for (scDataType_t dt : {scInt8, scUint8})
          for (scRedOp_t op : {scSum, scAvg, scProd}) {
            SCOPED_TRACE(testing::Message() << typeStr(dt) << " " << opStr(op));
            Bytes in(size_t(P) * rc > n ? size_t(P) * rc : n);
            for (size_t i = 0; i < in.size(); ++i) in[i] = input(rank, i);
            Bytes out(n, 0xAB);
            ASSERT_EQ(scAllReduce(in.data(), out.data(), n, dt, op, algo, comm, nullptr), scSuccess)
                << scGetLastError(comm);
            for (size_t i = 0; i < n; ++i)
              ASSERT_EQ(int(out[i]), int(expected(dt, op, P, i))) << "allreduce element " << i << " on rank " << rank;
            if (algo == scAlgoRecDbl) continue;  // reduce-scatter: ring, rabenseifner, native
            Bytes block(rc, 0xAB);
            ASSERT_EQ(scReduceScatter(in.data(), block.data(), rc, dt, op, algo, comm, nullptr), scSuccess)
                << scGetLastError(comm);
            for (size_t k = 0; k < rc; ++k) {
              const size_t i = size_t(rank) * rc + k;
              ASSERT_EQ(int(block[k]), int(expected(dt, op, P, i)))
                  << "reduce-scatter element " << i << " on rank " << rank;
            }
          }
      },
      &cfg);
}

INSTANTIATE_TEST_SUITE_P(Dense, EightBitWrap,
                         testing::Combine(testing::Values(2, 3, 4),
                                          testing::Values(scAlgoRing, scAlgoRabenseifner, scAlgoRecDbl, scAlgoNative)),
                         PAlgoName());

}  // namespace
}  // namespace dtest
