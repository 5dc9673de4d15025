// Native calls of device-local ranks on one GPU: the direct kernel
// (transport/local/direct.h). Every type and op exact against the
// independent references; random floats bit-identical to the host path's
// native calls (whose fold the kernel follows); in place; and each call one
// meeting whatever the rank count.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/harness.h"
#include "dense/dense_data.h"
#include "gpu/gpu_util.h"

namespace {

using dtest::Bytes;
using gputest::DevBuf;
using gputest::download;
using gputest::upload;

scConfig_t config() {
  scConfig_t cfg = sctest::testConfig();
  cfg.check = scCheckOff;
  return cfg;
}

TEST(DirectDevice, EveryTypeAndOpExact) {
  SC_REQUIRE_GPU();
  const scConfig_t cfg = config();
  for (int P : {2, 4, 5})
    gputest::runOnDevices(P, cfg, [&](scComm_t comm, int rank, cudaStream_t s) {
      const size_t n = 4099;  // blocks of two lengths, an unaligned tail
      DevBuf send(n * 8 * size_t(P)), recv(n * 8 * size_t(P));
      for (scDataType_t dt : dtest::kAllTypes)
        for (scRedOp_t op : dtest::kAllOps) {
          SCOPED_TRACE(std::string("P ") + std::to_string(P) + " type " + std::to_string(int(dt)) + " op " +
                       std::to_string(int(op)));
          const Bytes in = dtest::makeInput(dt, op, P, rank, 0, n);
          upload(send.get(), in.data(), in.size(), s);
          ASSERT_EQ(scAllReduce(send.get(), recv.get(), n, dt, op, scAlgoNative, comm, s), scSuccess)
              << scGetLastError(comm);
          EXPECT_EQ(download(recv.get(), in.size(), s), dtest::makeExpected(dt, op, P, 0, n));
          // In place.
          ASSERT_EQ(scAllReduce(send.get(), send.get(), n, dt, op, scAlgoNative, comm, s), scSuccess)
              << scGetLastError(comm);
          EXPECT_EQ(download(send.get(), in.size(), s), dtest::makeExpected(dt, op, P, 0, n));
          // Reduce-scatter: rank r's block of P blocks of n.
          const Bytes all = dtest::makeInput(dt, op, P, rank, 0, n * size_t(P));
          upload(send.get(), all.data(), all.size(), s);
          ASSERT_EQ(scReduceScatter(send.get(), recv.get(), n, dt, op, scAlgoNative, comm, s), scSuccess)
              << scGetLastError(comm);
          EXPECT_EQ(download(recv.get(), in.size(), s), dtest::makeExpected(dt, op, P, size_t(rank) * n, n));
        }
      // Allgather and broadcast move bytes: one type serves.
      const Bytes mine = dtest::makePayload(rank, n, 7);
      upload(send.get(), mine.data(), n, s);
      ASSERT_EQ(scAllGather(send.get(), recv.get(), n, scUint8, scAlgoNative, comm, s), scSuccess)
          << scGetLastError(comm);
      const Bytes got = download(recv.get(), n * size_t(P), s);
      for (int q = 0; q < P; ++q)
        EXPECT_EQ(Bytes(got.begin() + std::ptrdiff_t(q * n), got.begin() + std::ptrdiff_t((q + 1) * n)),
                  dtest::makePayload(q, n, 7));
      upload(send.get(), mine.data(), n, s);
      ASSERT_EQ(scBroadcast(send.get(), n, scUint8, P - 1, scAlgoNative, comm, s), scSuccess) << scGetLastError(comm);
      EXPECT_EQ(download(send.get(), n, s), dtest::makePayload(P - 1, n, 7));
    });
}

// Random floats: the fold's order shows in the bits.
TEST(DirectDevice, BitsOfTheHostPath) {
  SC_REQUIRE_GPU();
  const scConfig_t cfg = config();
  const int P = 4;
  const size_t n = 100003;
  for (scDataType_t dt : {scFloat32, scFloat16, scBfloat16, scFloat64}) {
    const size_t esz = dt == scFloat64 ? 8 : dt == scFloat32 ? 4 : 2;
    std::vector<Bytes> in(P), host(P), dev(P);
    for (int r = 0; r < P; ++r) {
      std::mt19937 g(99u + unsigned(r));
      // Finite values of every type: an exponent byte kept small.
      in[size_t(r)].resize(n * esz);
      for (size_t i = 0; i < n * esz; ++i) in[size_t(r)][i] = uint8_t(g());
      for (size_t i = 0; i < n; ++i) in[size_t(r)][i * esz + esz - 1] &= 0x3f;
    }
    for (scRedOp_t op : {scSum, scAvg, scProd}) {
      SCOPED_TRACE(std::string("type ") + std::to_string(int(dt)) + " op " + std::to_string(int(op)));
      sctest::run(
          P,
          [&](scComm_t comm, int r) {
            host[size_t(r)] = in[size_t(r)];
            ASSERT_EQ(scAllReduce(host[size_t(r)].data(), host[size_t(r)].data(), n, dt, op, scAlgoNative, comm,
                                  nullptr),
                      scSuccess)
                << scGetLastError(comm);
          },
          &cfg);
      gputest::runOnDevices(P, cfg, [&](scComm_t comm, int r, cudaStream_t s) {
        DevBuf buf(n * esz);
        upload(buf.get(), in[size_t(r)].data(), n * esz, s);
        scStats_t a{}, b{};
        ASSERT_EQ(scCommGetStats(comm, &a), scSuccess);
        ASSERT_EQ(scAllReduce(buf.get(), buf.get(), n, dt, op, scAlgoNative, comm, s), scSuccess)
            << scGetLastError(comm);
        ASSERT_EQ(scCommGetStats(comm, &b), scSuccess);
        EXPECT_EQ(b.rendezvous - a.rendezvous, 1u);
        EXPECT_EQ(b.hostSyncs - a.hostSyncs, 0u);
        dev[size_t(r)] = download(buf.get(), n * esz, s);
      });
      for (int r = 0; r < P; ++r) EXPECT_TRUE(dev[size_t(r)] == host[size_t(r)]) << "rank " << r;
    }
  }
}

}  // namespace
