// Bad input at communicator creation: scCommInitLocal / scCommInitMpi
// arguments, scConfig_t fields and the SPARCOLL_* environment. A failed init
// hands out no communicator and explains itself in scGetLastError(NULL).
#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>
#include <thread>

#include "dense_check.h"

namespace dtest {
namespace {

TEST(DenseErrors, InitLocalArguments) {
  scComm_t comms[4] = {nullptr, nullptr, nullptr, nullptr};
  EXPECT_TRUE(failedWith(scCommInitLocal(comms, 0, nullptr, nullptr), scInvalidArgument, nullptr, "nranks"));
  EXPECT_TRUE(failedWith(scCommInitLocal(comms, -3, nullptr, nullptr), scInvalidArgument, nullptr, "nranks"));
  EXPECT_TRUE(failedWith(scCommInitLocal(nullptr, 2, nullptr, nullptr), scInvalidArgument, nullptr, "NULL"));
  const int badDevices[2] = {-1, 0};
  EXPECT_TRUE(failedWith(scCommInitLocal(comms, 2, badDevices, nullptr), scInvalidArgument, nullptr, "devices[0]"));
#ifndef SPARCOLL_HAVE_CUDA
  const int devices[2] = {0, 0};
  EXPECT_TRUE(failedWith(scCommInitLocal(comms, 2, devices, nullptr), scInvalidUsage, nullptr, "CUDA"));
#endif
  for (scComm_t c : comms) EXPECT_EQ(c, nullptr) << "a failed init handed out a communicator";
}

void expectInitFails(const scConfig_t& cfg, scResult_t want, const std::string& needle) {
  scComm_t comms[2] = {nullptr, nullptr};
  EXPECT_TRUE(failedWith(scCommInitLocal(comms, 2, nullptr, &cfg), want, nullptr, needle));
  EXPECT_EQ(comms[0], nullptr);
}

TEST(DenseErrors, BadConfig) {
  ScopedEnv noAlgo("SPARCOLL_ALGO", nullptr), noTimeout("SPARCOLL_TIMEOUT", nullptr);
  scConfig_t cfg = SC_CONFIG_INITIALIZER;
  cfg.size = sizeof(scConfig_t) - 1;
  expectInitFails(cfg, scInvalidArgument, "size");
  cfg.size = 1;
  expectInitFails(cfg, scInvalidArgument, "size");
  for (int algo : {int(scNumAlgos), 7}) {
    cfg = SC_CONFIG_INITIALIZER;
    cfg.algo = scAlgo_t(algo);
    expectInitFails(cfg, scInvalidArgument, "algorithm");
  }
}

// timeoutSeconds <= 0 means "SPARCOLL_TIMEOUT, else 300 s" (sparcoll.h); the
// environment value must then be a positive number.
TEST(DenseErrors, BadTimeoutEnvironment) {
  scConfig_t cfg = SC_CONFIG_INITIALIZER;
  cfg.timeoutSeconds = -5;
  {
    ScopedEnv t("SPARCOLL_TIMEOUT", nullptr);
    scComm_t comms[2] = {nullptr, nullptr};
    ASSERT_EQ(scCommInitLocal(comms, 2, nullptr, &cfg), scSuccess) << scGetLastError(nullptr);
    for (scComm_t c : comms) scCommDestroy(c);
  }
  for (const char* v : {"-1", "0", "abc", "5s"}) {
    SCOPED_TRACE(std::string("SPARCOLL_TIMEOUT=") + v);
    ScopedEnv t("SPARCOLL_TIMEOUT", v);
    expectInitFails(cfg, scInvalidArgument, "timeout");
  }
}

TEST(DenseErrors, BadAlgoEnvironment) {
  for (const char* v : {"fastest", "RING ", "rabenseifner2"}) {
    ScopedEnv e("SPARCOLL_ALGO", v);
    expectInitFails(sctest::testConfig(), scInvalidArgument, "SPARCOLL_ALGO");
  }
}

// scConfig_t.pipelineBytes: 0 (default) or 8 B .. 1 GiB. SIZE_MAX used to be
// accepted at creation and then fail every ring call; 1..7 cannot hold a
// float64. The edges of the range create and run a ring allreduce.
TEST(DenseErrors, BadPipelineBytes) {
  ScopedEnv noEnv("SPARCOLL_PIPELINE_BYTES", nullptr);
  for (size_t b : {SIZE_MAX, size_t(1), size_t(7), (size_t(1) << 30) + 1, size_t(1) << 40}) {
    SCOPED_TRACE("pipelineBytes " + std::to_string(b));
    scConfig_t cfg = sctest::testConfig();
    cfg.pipelineBytes = b;
    expectInitFails(cfg, scInvalidArgument, "scConfig_t.pipelineBytes = " + std::to_string(b));
  }
  for (size_t b : {size_t(0), size_t(8), size_t(1) << 30}) {
    SCOPED_TRACE("pipelineBytes " + std::to_string(b));
    scConfig_t cfg = sctest::testConfig();
    cfg.pipelineBytes = b;
    scComm_t comms[2] = {nullptr, nullptr};
    ASSERT_EQ(scCommInitLocal(comms, 2, nullptr, &cfg), scSuccess) << scGetLastError(nullptr);
    double in[2][5] = {{1, 2, 3, 4, 5}, {10, 20, 30, 40, 50}}, out[2][5] = {};
    std::thread peer([&] {
      EXPECT_EQ(scAllReduce(in[1], out[1], 5, scFloat64, scSum, scAlgoRing, comms[1], nullptr), scSuccess)
          << scGetLastError(comms[1]);
    });
    EXPECT_EQ(scAllReduce(in[0], out[0], 5, scFloat64, scSum, scAlgoRing, comms[0], nullptr), scSuccess)
        << scGetLastError(comms[0]);
    peer.join();
    for (int r = 0; r < 2; ++r) EXPECT_EQ(out[r][4], 55.0);
    for (scComm_t c : comms) scCommDestroy(c);
  }
}

// SPARCOLL_PIPELINE_BYTES: a decimal byte count in the same range. "-1" went
// through strtod and a double-to-size_t conversion (undefined for -1).
TEST(DenseErrors, BadPipelineBytesEnvironment) {
  for (const char* v : {"-1", "1.5", "abc", "1e6", "0x100", " 64", "64 ", "+64", "4", "1073741825",
                        "18446744073709551615", "99999999999999999999999"}) {
    SCOPED_TRACE(std::string("SPARCOLL_PIPELINE_BYTES=") + v);
    ScopedEnv e("SPARCOLL_PIPELINE_BYTES", v);
    expectInitFails(sctest::testConfig(), scInvalidArgument, "SPARCOLL_PIPELINE_BYTES");
  }
  for (const char* v : {"", "0", "8", "4096", "1073741824"}) {
    SCOPED_TRACE(std::string("SPARCOLL_PIPELINE_BYTES=") + v);
    ScopedEnv e("SPARCOLL_PIPELINE_BYTES", v);
    const scConfig_t cfg = sctest::testConfig();
    scComm_t comms[2] = {nullptr, nullptr};
    ASSERT_EQ(scCommInitLocal(comms, 2, nullptr, &cfg), scSuccess) << scGetLastError(nullptr);
    for (scComm_t c : comms) scCommDestroy(c);
  }
}

// A very long deadline is a long deadline, not an overflowed one that has
// already passed: creation either refuses it or the calls work.
TEST(DenseErrors, HugeTimeout) {
  for (double t : {1e12, double(INFINITY)}) {
    SCOPED_TRACE("timeoutSeconds " + std::to_string(t));
    scConfig_t cfg = sctest::testConfig();
    cfg.timeoutSeconds = t;
    scComm_t comms[2] = {nullptr, nullptr};
    const scResult_t r = scCommInitLocal(comms, 2, nullptr, &cfg);
    if (r != scSuccess) {
      EXPECT_TRUE(failedWith(r, scInvalidArgument, nullptr, "timeout"));
      continue;
    }
    scComm_t c1 = comms[0];
    float x = 1, y = 0;
    // Rank 1 joins 300 ms late: rank 0 must wait for it, not time out at once.
    std::thread peer([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      float px = 2, py = 0;
      EXPECT_EQ(scAllReduce(&px, &py, 1, scFloat32, scSum, scAlgoRing, comms[1], nullptr), scSuccess)
          << scGetLastError(comms[1]);
    });
    EXPECT_EQ(scAllReduce(&x, &y, 1, scFloat32, scSum, scAlgoRing, c1, nullptr), scSuccess) << scGetLastError(c1);
    peer.join();
    EXPECT_EQ(y, 3.0f);
    for (scComm_t c : comms) scCommDestroy(c);
  }
}

// MPI must be initialised first. The local binary never calls MPI_Init, so the
// failure is observable there; the _mpi binary checks the argument errors.
TEST(DenseErrors, InitMpi) {
  scComm_t comm = reinterpret_cast<scComm_t>(uintptr_t(1));
  scConfig_t cfg = sctest::testConfig();
  EXPECT_TRUE(failedWith(scCommInitMpi(nullptr, nullptr, &cfg), scInvalidArgument, nullptr, "NULL"));
  cfg.transport = scTransportLocal;
  EXPECT_TRUE(failedWith(scCommInitMpi(&comm, nullptr, &cfg), scInvalidArgument, nullptr, "scCommInitLocal"));
  EXPECT_EQ(comm, nullptr);
  cfg = sctest::testConfig();
  cfg.size = 3;
  EXPECT_TRUE(failedWith(scCommInitMpi(&comm, nullptr, &cfg), scInvalidArgument, nullptr, "size"));
#ifdef SPARCOLL_HAVE_MPI
  if (sctest::mode() == sctest::Mode::Local)
    EXPECT_TRUE(failedWith(scCommInitMpi(&comm, nullptr, nullptr), scInvalidUsage, nullptr, "MPI_Init"));
#else
  EXPECT_TRUE(failedWith(scCommInitMpi(&comm, nullptr, nullptr), scInvalidUsage, nullptr, "without MPI"));
#endif
#ifndef SPARCOLL_HAVE_NCCL
  if (sctest::mode() == sctest::Mode::Mpi) {
    cfg = sctest::testConfig();
    cfg.transport = scTransportNccl;
    EXPECT_TRUE(failedWith(scCommInitMpi(&comm, nullptr, &cfg), scInvalidUsage, nullptr, "NCCL"));
  }
#endif
  EXPECT_EQ(comm, nullptr);
}

}  // namespace
}  // namespace dtest
