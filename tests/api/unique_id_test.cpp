// NCCL-style creation without MPI (scGetUniqueId / scCommInitRank), the parts
// that run on any machine: every bad argument, the id itself, the clear
// failures without a GPU or without NCCL in the build, and the C++ wrappers.
// The collectives on a communicator made this way are in tests/gpu/nccl_id_test.cpp.
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>

#include "common/harness.h"
#include "sparcoll/sparcoll.hpp"

namespace {

// r is `want` and scGetLastError(NULL) mentions `needle`.
testing::AssertionResult failedWith(scResult_t r, scResult_t want, const char* needle) {
  const std::string msg = scGetLastError(nullptr);
  if (r != want)
    return testing::AssertionFailure() << "returned " << scGetErrorString(r) << ", expected " << scGetErrorString(want)
                                       << " (last error: " << msg << ")";
  if (msg.find(needle) == std::string::npos)
    return testing::AssertionFailure() << "message '" << msg << "' does not mention '" << needle << "'";
  return testing::AssertionSuccess();
}

// A well-formed id that needs no NCCL: the argument checks run before the
// build's capabilities are consulted, so they are the same on every build.
scUniqueId fakeId() {
  scUniqueId id;
  std::memset(&id, 0x5A, sizeof id);
  return id;
}

scComm_t garbage() { return reinterpret_cast<scComm_t>(uintptr_t(1)); }

bool isBlank(const scUniqueId& id) {
  for (char c : id.internal)
    if (c) return false;
  return true;
}

TEST(UniqueId, IdIsNcclSized) {
  static_assert(sizeof(scUniqueId) == 128, "NCCL_UNIQUE_ID_BYTES is 128");
  EXPECT_EQ(SC_UNIQUE_ID_BYTES, 128);
}

TEST(UniqueId, BadArguments) {
  const scUniqueId id = fakeId();
  scConfig_t cfg = sctest::testConfig();
  EXPECT_TRUE(failedWith(scGetUniqueId(nullptr), scInvalidArgument, "NULL"));
  EXPECT_TRUE(failedWith(scCommInitRank(nullptr, 1, id, 0, &cfg), scInvalidArgument, "NULL"));

  scComm_t comm = garbage();
  for (int n : {0, -1, -100}) {
    SCOPED_TRACE("nranks " + std::to_string(n));
    EXPECT_TRUE(failedWith(scCommInitRank(&comm, n, id, 0, &cfg), scInvalidArgument, "nranks"));
    EXPECT_EQ(comm, nullptr) << "a failed init must hand out no communicator";
  }
  for (auto [n, r] : {std::pair{1, 1}, std::pair{1, -1}, std::pair{4, 4}, std::pair{4, -2}, std::pair{2, 100}}) {
    SCOPED_TRACE("nranks " + std::to_string(n) + " rank " + std::to_string(r));
    comm = garbage();
    EXPECT_TRUE(failedWith(scCommInitRank(&comm, n, id, r, &cfg), scInvalidArgument, "outside [0, nranks"));
    EXPECT_EQ(comm, nullptr);
  }

  scUniqueId blank;
  std::memset(&blank, 0, sizeof blank);
  EXPECT_TRUE(failedWith(scCommInitRank(&comm, 1, blank, 0, &cfg), scInvalidArgument, "all zeros"));

  for (size_t size : {size_t(1), sizeof(scConfig_t) - 1}) {
    SCOPED_TRACE("cfg.size " + std::to_string(size));
    cfg = sctest::testConfig();
    cfg.size = size;
    EXPECT_TRUE(failedWith(scCommInitRank(&comm, 1, id, 0, &cfg), scInvalidArgument, "size"));
  }
  cfg = sctest::testConfig();
  cfg.algo = scAlgo_t(scNumAlgos);
  EXPECT_TRUE(failedWith(scCommInitRank(&comm, 1, id, 0, &cfg), scInvalidArgument, "algorithm"));
  EXPECT_EQ(comm, nullptr);
}

#ifdef SPARCOLL_HAVE_NCCL

// ncclGetUniqueId needs no GPU (it opens NCCL's bootstrap socket), so this
// passes on CPU-only machines too.
TEST(UniqueId, GetUniqueIdWorks) {
  scUniqueId a, b;
  ASSERT_EQ(scGetUniqueId(&a), scSuccess) << scGetLastError(nullptr);
  ASSERT_EQ(scGetUniqueId(&b), scSuccess) << scGetLastError(nullptr);
  EXPECT_FALSE(isBlank(a));
  EXPECT_NE(std::memcmp(&a, &b, sizeof a), 0) << "two ids should differ";
  EXPECT_FALSE(isBlank(sparcoll::Comm::uniqueId()));
}

// Without a device, init fails at once with a CUDA error naming the problem,
// whatever the config asks for (transport is ignored; device is checked
// against the devices that exist).
TEST(UniqueId, NoDeviceFailsCleanly) {
  if (sctest::gpuCount() > 0) GTEST_SKIP() << "a CUDA device is present (tests/gpu covers this path)";
  scUniqueId id;
  ASSERT_EQ(scGetUniqueId(&id), scSuccess) << scGetLastError(nullptr);
  scConfig_t cfg = sctest::testConfig();
  const auto t0 = std::chrono::steady_clock::now();
  for (int device : {-1, 0, 3}) {
    for (scTransport_t t : {scTransportNccl, scTransportMpi, scTransportLocal}) {
      SCOPED_TRACE("device " + std::to_string(device) + " transport " + std::to_string(int(t)));
      cfg.device = device;
      cfg.transport = t;
      scComm_t comm = garbage();
      EXPECT_TRUE(failedWith(scCommInitRank(&comm, 1, id, 0, &cfg), scCudaError, "nccl transport needs a CUDA device"));
      EXPECT_EQ(comm, nullptr);
    }
  }
  scComm_t comm = garbage();
  EXPECT_TRUE(failedWith(scCommInitRank(&comm, 2, id, 1, nullptr), scCudaError, "CUDA device"));
  EXPECT_EQ(comm, nullptr);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20)) << "init failure was not prompt";
  try {
    sparcoll::Comm::fromUniqueId(1, id, 0);
    FAIL() << "expected sparcoll::Error";
  } catch (const sparcoll::Error& e) {
    EXPECT_EQ(e.code(), scCudaError) << e.what();
  }
}

#ifndef SPARCOLL_HAVE_MPI
// A build with NCCL but no MPI cannot bootstrap over MPI and says what to use instead.
TEST(UniqueId, InitMpiPointsToInitRank) {
  scConfig_t cfg = sctest::testConfig();
  cfg.transport = scTransportNccl;
  scComm_t comm = garbage();
  EXPECT_TRUE(failedWith(scCommInitMpi(&comm, nullptr, &cfg), scInvalidUsage, "scCommInitRank"));
  EXPECT_EQ(comm, nullptr);
}
#endif

#else  // no NCCL in this build

TEST(UniqueId, BuildWithoutNcclSaysSo) {
  scUniqueId id = fakeId();
  EXPECT_TRUE(failedWith(scGetUniqueId(&id), scInvalidUsage, "built without NCCL"));
  scComm_t comm = garbage();
  EXPECT_TRUE(failedWith(scCommInitRank(&comm, 1, fakeId(), 0, nullptr), scInvalidUsage, "built without NCCL"));
  EXPECT_EQ(comm, nullptr);
  EXPECT_THROW(sparcoll::Comm::uniqueId(), sparcoll::Error);
}

#endif

}  // namespace
