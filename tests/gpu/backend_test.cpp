// The CUDA compute backend against the CPU backend, bit for bit: every dtype
// and op, random bit patterns (float16/bfloat16 NaN, Inf and subnormals,
// wrapping integers), every alignment path of the vectorised kernel (packs,
// head, tail, scalar fallback, grid-stride), aliasing, untouched neighbours;
// plus known answers that do not depend on the CPU backend, and the contract's
// error paths (bad device, failed allocation, host pointer, sync deadline).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <thread>

#include "backend/backend.h"
#include "backend/reduce_ops.h"
#include "common/harness.h"
#include "gpu/gpu_util.h"

namespace {

using Bytes = std::vector<uint8_t>;
using gputest::DevBuf;
using gputest::download;
using gputest::Stream;
using gputest::upload;

constexpr scDataType_t kTypes[] = {scInt8,   scUint8,   scInt32,   scUint32,  scInt64,
                                   scUint64, scFloat16, scFloat32, scFloat64, scBfloat16};
constexpr scRedOp_t kOps[] = {scSum, scProd, scMax, scMin, scAvg};

// Half the elements are arbitrary bit patterns (every special value of the
// 16-bit floats, wrapping integers), half moderate values with fractions so
// float sums and products round.
Bytes randomData(scDataType_t dt, size_t n, uint64_t seed) {
  const size_t esz = sc::dtypeSize(dt);
  std::mt19937_64 g(seed);
  Bytes out(n * esz);
  for (size_t i = 0; i < n; ++i) {
    uint8_t* p = out.data() + i * esz;
    const uint64_t bits = g();
    if (!sc::dtypeIsFloat(dt) || (g() & 1)) {
      std::memcpy(p, &bits, esz);
      continue;
    }
    const double v = std::ldexp(double(int64_t(g() % 4001) - 2000) + double(g() % 1024) / 1024.0, int(g() % 9) - 4);
    sc::dispatchDtype(dt, [&](auto tag) {
      const auto x = sc::fromDouble<decltype(tag)>(v);
      std::memcpy(p, &x, esz);
    });
  }
  return out;
}

bool isNan(scDataType_t dt, const uint8_t* p) {
  uint64_t b = 0;
  std::memcpy(&b, p, sc::dtypeSize(dt));
  switch (dt) {
    case scFloat16: return (b & 0x7c00) == 0x7c00 && (b & 0x3ff);
    case scBfloat16: return (b & 0x7f80) == 0x7f80 && (b & 0x7f);
    case scFloat32: {
      float f;
      std::memcpy(&f, p, 4);
      return std::isnan(f);
    }
    case scFloat64: {
      double d;
      std::memcpy(&d, p, 8);
      return std::isnan(d);
    }
    default: return false;
  }
}

// Bit-identical, except that two NaNs match whatever their payloads: a NaN made
// by arithmetic (inf - inf) is x86's default NaN on the CPU and the GPU's on
// the GPU. NaN operands of max/min are selected, so they do compare bitwise.
std::string mismatch(scDataType_t dt, const uint8_t* got, const uint8_t* want, size_t n, bool nanLenient) {
  const size_t esz = sc::dtypeSize(dt);
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint8_t *x = got + i * esz, *y = want + i * esz;
    if (std::memcmp(x, y, esz) == 0 || (nanLenient && isNan(dt, x) && isNan(dt, y))) continue;
    if (!bad++) first = i;
  }
  if (!bad) return {};
  uint64_t gb = 0, wb = 0;
  std::memcpy(&gb, got + first * esz, esz);
  std::memcpy(&wb, want + first * esz, esz);
  return sc::cat(bad, " of ", n, " elements differ; first at ", first, ": got 0x", std::hex, gb, ", want 0x", wb);
}

struct Backends {
  std::unique_ptr<sc::Backend> gpu = sc::makeCudaBackend(0), cpu = sc::makeCpuBackend();
  Stream stream;
};

class CudaReduce : public testing::TestWithParam<scDataType_t> {};

// dst = a op b for sizes around the pack width, offsets that take each path of
// the kernel (all aligned; same misalignment -> head; different -> scalar),
// out of place and with dst aliasing a or b.
TEST_P(CudaReduce, MatchesCpuBitForBit) {
  SC_REQUIRE_GPU();
  const scDataType_t dt = GetParam();
  const size_t esz = sc::dtypeSize(dt);
  Backends B;
  const size_t sizes[] = {1, 2, 15, 16, 17, 1000, 65541};
  const size_t offs[][3] = {{0, 0, 0}, {1, 1, 1}, {3, 3, 3}, {1, 0, 0}, {0, 2, 1}};  // dst, a, b
  const size_t cap = 65541 + 8;
  DevBuf A(cap * esz), Bb(cap * esz), D(cap * esz);
  uint64_t seed = 1;
  for (scRedOp_t op : kOps)
    for (size_t n : sizes)
      for (const auto& o : offs)
        for (int alias = 0; alias < 3; ++alias) {  // 0: out of place, 1: dst == a, 2: dst == b
          SCOPED_TRACE(testing::Message() << sc::dtypeName(dt) << " " << sc::opName(op) << " n=" << n << " offs=("
                                          << o[0] << "," << o[1] << "," << o[2] << ") alias=" << alias);
          const Bytes a = randomData(dt, n, ++seed), b = randomData(dt, n, ++seed);
          char* pa = A.get() + o[1] * esz;
          char* pb = Bb.get() + o[2] * esz;
          char* pd = alias == 1 ? pa : alias == 2 ? pb : D.get() + o[0] * esz;
          gputest::poison(D.get(), D.bytes(), B.stream.get());
          upload(pa, a.data(), a.size(), B.stream.get());
          upload(pb, b.data(), b.size(), B.stream.get());
          B.gpu->reduce(pd, pa, pb, n, dt, op, B.stream);
          Bytes want(n * esz);
          B.cpu->reduce(want.data(), a.data(), b.data(), n, dt, op, nullptr);
          const Bytes got = download(pd, n * esz, B.stream.get());
          const std::string diff = mismatch(dt, got.data(), want.data(), n, op == scSum || op == scAvg || op == scProd);
          ASSERT_TRUE(diff.empty()) << diff;
          if (alias == 0) {  // operands intact, no byte written outside dst
            ASSERT_EQ(download(pa, a.size(), B.stream.get()), a);
            ASSERT_EQ(download(pb, b.size(), B.stream.get()), b);
            const size_t lo = o[0] * esz, hi = (o[0] + n) * esz, end = std::min(D.bytes(), hi + 64);
            const Bytes all = download(D.get(), end, B.stream.get());
            for (size_t i = 0; i < lo; ++i) ASSERT_EQ(all[i], 0xA5) << "byte " << i << " before dst written";
            for (size_t i = hi; i < end; ++i) ASSERT_EQ(all[i], 0xA5) << "byte " << i << " after dst written";
          }
        }
}

// More elements than the grid has threads (per pack): the grid-stride loop.
TEST_P(CudaReduce, LargeGridStride) {
  SC_REQUIRE_GPU();
  const scDataType_t dt = GetParam();
  const size_t esz = sc::dtypeSize(dt), n = (size_t(1) << 23) + 7;
  Backends B;
  DevBuf A((n + 1) * esz), Bb((n + 1) * esz);
  for (size_t off : {0, 1})
    for (scRedOp_t op : {scSum, scMax}) {
      SCOPED_TRACE(testing::Message() << sc::dtypeName(dt) << " " << sc::opName(op) << " off=" << off);
      const Bytes a = randomData(dt, n, 100 + off), b = randomData(dt, n, 200 + off);
      upload(A.get() + off * esz, a.data(), a.size(), B.stream.get());
      upload(Bb.get() + off * esz, b.data(), b.size(), B.stream.get());
      B.gpu->reduce(A.get() + off * esz, A.get() + off * esz, Bb.get() + off * esz, n, dt, op, B.stream);
      Bytes want(a.size());
      B.cpu->reduce(want.data(), a.data(), b.data(), n, dt, op, nullptr);
      const Bytes got = download(A.get() + off * esz, a.size(), B.stream.get());
      const std::string diff = mismatch(dt, got.data(), want.data(), n, op == scSum);
      ASSERT_TRUE(diff.empty()) << diff;
    }
}

// avg's final step: integers truncate toward zero, 16-bit floats divide in float32.
TEST_P(CudaReduce, DivideMatchesCpu) {
  SC_REQUIRE_GPU();
  const scDataType_t dt = GetParam();
  const size_t esz = sc::dtypeSize(dt);
  Backends B;
  DevBuf D((70000 + 4) * esz);
  uint64_t seed = 500;
  for (int divisor : {1, 2, 3, 5, 7, 8})
    for (size_t n : {size_t(1), size_t(17), size_t(1000), size_t(69999)})
      for (size_t off : {0, 1, 3}) {
        SCOPED_TRACE(testing::Message() << sc::dtypeName(dt) << " /" << divisor << " n=" << n << " off=" << off);
        Bytes x = randomData(dt, n, ++seed);
        char* p = D.get() + off * esz;
        upload(p, x.data(), x.size(), B.stream.get());
        B.gpu->divide(p, n, dt, divisor, B.stream);
        B.cpu->divide(x.data(), n, dt, divisor, nullptr);
        const Bytes got = download(p, x.size(), B.stream.get());
        // Division is arithmetic: a NaN operand's payload is not kept on the GPU.
        const std::string diff = mismatch(dt, got.data(), x.data(), n, true);
        ASSERT_TRUE(diff.empty()) << diff;
      }
}

INSTANTIATE_TEST_SUITE_P(AllTypes, CudaReduce, testing::ValuesIn(kTypes),
                         [](const testing::TestParamInfo<scDataType_t>& i) {
                           return std::string(sc::dtypeName(i.param));
                         });

// Values worked out by hand: wrapping, round-to-nearest-even ties, overflow to
// Inf, subnormals, NaN selection, truncating division. Independent of the CPU
// backend, so a shared mistake cannot hide.
TEST(CudaBackend, KnownAnswers) {
  SC_REQUIRE_GPU();
  struct Case {
    scDataType_t dt;
    scRedOp_t op;
    uint64_t a, b, want;  // bit patterns; op == scNumOps: divide a by b
  };
  const Case cases[] = {
      {scInt8, scSum, 127, 1, 0x80},       // 127 + 1 wraps to -128
      {scInt8, scProd, 16, 16, 0},         // 256 wraps to 0
      {scInt8, scProd, 0x80, 0xff, 0x80},  // -128 * -1 wraps to -128
      {scUint8, scSum, 200, 100, 44},
      {scInt32, scSum, 0x7fffffff, 1, 0x80000000},
      {scInt64, scMin, uint64_t(-5), 3, uint64_t(-5)},
      {scUint64, scMax, ~0ull, 1, ~0ull},
      {scFloat16, scSum, 0x3c00, 0x1000, 0x3c00},   // 1 + 2^-11: tie, to even
      {scFloat16, scSum, 0x3c01, 0x1000, 0x3c02},   // tie, to even (up)
      {scFloat16, scSum, 0x7bff, 0x7bff, 0x7c00},   // 65504 + 65504 -> Inf
      {scFloat16, scSum, 0x0001, 0x0001, 0x0002},   // subnormals
      {scFloat16, scProd, 0x0400, 0x3800, 0x0200},  // 2^-14 * 0.5: normal -> subnormal
      {scFloat16, scMax, 0x7e01, 0x3c00, 0x7e01},   // NaN first: selected as is
      {scFloat16, scMax, 0x3c00, 0x7e01, 0x7e01},   // NaN second: also that NaN (core/reduce_op.h)
      {scBfloat16, scSum, 0x3f80, 0x3b80, 0x3f80},  // 1 + 2^-8: tie, to even
      {scBfloat16, scSum, 0x3f81, 0x3b80, 0x3f82},
      {scBfloat16, scMin, 0xbf80, 0x3f80, 0xbf80},
      {scFloat32, scSum, 0x3f800000, 0x33800000, 0x3f800000},                        // 1 + 2^-24: tie, to even
      {scInt32, scNumOps, uint64_t(-7) & 0xffffffff, 2, uint64_t(-3) & 0xffffffff},  // truncates
      {scFloat16, scNumOps, 0x4200, 2, 0x3e00},                                      // 3 / 2 = 1.5
      {scBfloat16, scNumOps, 0x3f80, 3, 0x3eab},                                     // 1/3 rounded to nearest
  };
  Backends B;
  DevBuf A(8), Bb(8);
  for (const Case& c : cases) {
    const size_t esz = sc::dtypeSize(c.dt);
    SCOPED_TRACE(testing::Message() << sc::dtypeName(c.dt) << " " << (c.op == scNumOps ? "div" : sc::opName(c.op))
                                    << " 0x" << std::hex << c.a << ", 0x" << c.b);
    upload(A.get(), &c.a, esz, B.stream.get());
    uint64_t cpu = c.a;
    if (c.op == scNumOps) {
      B.gpu->divide(A.get(), 1, c.dt, int(c.b), B.stream);
      B.cpu->divide(&cpu, 1, c.dt, int(c.b), nullptr);
    } else {
      upload(Bb.get(), &c.b, esz, B.stream.get());
      B.gpu->reduce(A.get(), A.get(), Bb.get(), 1, c.dt, c.op, B.stream);
      B.cpu->reduce(&cpu, &cpu, &c.b, 1, c.dt, c.op, nullptr);
    }
    uint64_t got = 0;
    const Bytes g = download(A.get(), esz, B.stream.get());
    std::memcpy(&got, g.data(), esz);
    EXPECT_EQ(got, c.want) << "GPU";
    EXPECT_EQ(cpu, c.want) << "CPU";
  }
}

TEST(CudaBackend, CopyAndZero) {
  SC_REQUIRE_GPU();
  Backends B;
  DevBuf S(9000), D(9000);
  for (size_t bytes : {size_t(1), size_t(17), size_t(4099)})
    for (size_t so : {0, 1, 5})
      for (size_t dof : {0, 3}) {
        SCOPED_TRACE(testing::Message() << bytes << " bytes, src+" << so << " dst+" << dof);
        Bytes x(bytes);
        for (size_t i = 0; i < bytes; ++i) x[i] = uint8_t(i * 31 + so + dof);
        upload(S.get() + so, x.data(), bytes, B.stream.get());
        gputest::poison(D.get(), D.bytes(), B.stream.get());
        B.gpu->copy(D.get() + dof, S.get() + so, bytes, B.stream);
        EXPECT_EQ(download(D.get() + dof, bytes, B.stream.get()), x);
        B.gpu->zero(D.get() + dof + 1, bytes - 1, B.stream);
        const Bytes z = download(D.get() + dof, bytes + 1, B.stream.get());
        EXPECT_EQ(z[0], x[0]);
        for (size_t i = 1; i < bytes; ++i) ASSERT_EQ(z[i], 0) << i;
        EXPECT_EQ(z[bytes], 0xA5) << "zero() wrote past its range";
      }
}

TEST(CudaBackend, Errors) {
  SC_REQUIRE_GPU();
  auto codeOf = [](auto f) {
    try {
      f();
    } catch (const sc::Error& e) {
      return std::make_pair(e.code(), std::string(e.what()));
    }
    return std::make_pair(scSuccess, std::string());
  };
  auto r = codeOf([] { sc::makeCudaBackend(-1); });
  EXPECT_EQ(r.first, scInvalidArgument) << r.second;
  r = codeOf([] { sc::makeCudaBackend(sctest::gpuCount()); });
  EXPECT_EQ(r.first, scInvalidArgument) << r.second;
  EXPECT_NE(r.second.find("does not exist"), std::string::npos) << r.second;

  Backends B;
  r = codeOf([&] { B.gpu->alloc(size_t(1) << 62); });
  EXPECT_EQ(r.first, scCudaError);
  EXPECT_NE(r.second.find("cudaMalloc"), std::string::npos) << r.second;
  EXPECT_NE(r.second.find(".cpp:"), std::string::npos) << "no file:line in: " << r.second;
  void* p = B.gpu->alloc(1 << 20);  // the failure left no error behind
  ASSERT_NE(p, nullptr);

  std::vector<char> host(64);
  r = codeOf([&] { B.gpu->checkPointer(host.data(), "sendbuf"); });
  EXPECT_EQ(r.first, scInvalidArgument);
  EXPECT_NE(r.second.find("sendbuf is host memory"), std::string::npos) << r.second;
  r = codeOf([&] { B.gpu->checkPointer(static_cast<char*>(p) + 100, "recvbuf"); });
  EXPECT_EQ(r.first, scSuccess) << r.second;
  r = codeOf([&] { B.cpu->checkPointer(p, "recvbuf"); });
  EXPECT_EQ(r.first, scInvalidArgument) << "device pointer accepted by the CPU backend";
  B.gpu->release(p);
}

// sync() is bounded: a stream held busy by a sleeping host function makes it
// time out, on that stream and for the whole device (legacy-stream ordering).
TEST(CudaBackend, SyncHonoursDeadline) {
  SC_REQUIRE_GPU();
  Backends B;
  auto sleepy = [](void*) { std::this_thread::sleep_for(std::chrono::milliseconds(400)); };
  ASSERT_EQ(cudaLaunchHostFunc(B.stream.get(), sleepy, nullptr), cudaSuccess);
  const auto t0 = std::chrono::steady_clock::now();
  try {
    B.gpu->sync(B.stream, sc::Deadline::in(0.05));
    ADD_FAILURE() << "sync returned while the stream was busy";
  } catch (const sc::Error& e) {
    EXPECT_EQ(e.code(), scTimeout) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(350));
  try {
    B.gpu->sync(nullptr, sc::Deadline::in(0.05));
    ADD_FAILURE() << "device-wide sync returned while a stream was busy";
  } catch (const sc::Error& e) {
    EXPECT_EQ(e.code(), scTimeout) << e.what();
  }
  B.gpu->sync(B.stream, sc::Deadline::in(10));
  B.gpu->sync(nullptr, sc::Deadline::in(10));
  EXPECT_EQ(cudaStreamQuery(B.stream.get()), cudaSuccess);
}

}  // namespace
