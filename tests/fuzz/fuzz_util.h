// Shared helpers of the fuzz targets (tests/fuzz/README in CMakeLists.txt).
// Each target decodes its input with FuzzedDataProvider into one or a few
// calls of the public C API and checks the contract every entry point shares:
// a bad argument gives an error code and a message, never a crash, a hang, an
// escaped exception (scInternalError) or a failure of the transport.
#pragma once

#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "sparcoll/sparcoll.h"

namespace fz {

// Aborts (a crash libFuzzer keeps as a reproducer) with what went wrong.
[[noreturn]] inline void fail(const char* what, scResult_t r, const char* msg) {
  std::fprintf(stderr, "fuzz contract violated: %s returned %d (%s): %s\n", what, int(r), scGetErrorString(r),
               msg ? msg : "");
  std::abort();
}

// The codes a validated call may give on a healthy local communicator. A
// timeout, remote error or internal error means a hang or a bug; scSystemError
// would be an allocation the inputs never ask for (counts are capped).
inline void expectClean(const char* what, scResult_t r, scComm_t comm = nullptr) {
  if (r == scSuccess || r == scInvalidArgument || r == scInvalidUsage) {
    if (r != scSuccess && std::strlen(scGetLastError(comm)) == 0) fail(what, r, "empty error message");
    return;
  }
  fail(what, r, scGetLastError(comm));
}

// An enum value: mostly a valid one, sometimes just outside the range or any int.
template <typename E>
E pickEnum(FuzzedDataProvider& p, int count) {
  switch (p.ConsumeIntegralInRange<int>(0, 9)) {
    case 0: return static_cast<E>(-1);
    case 1: return static_cast<E>(count);
    case 2: return static_cast<E>(p.ConsumeIntegral<int>());
    default: return static_cast<E>(p.ConsumeIntegralInRange<int>(0, count - 1));
  }
}

// A count no buffer can have (more than PTRDIFF_MAX elements of any type): the
// library must reject it before touching memory. Smaller counts that are still
// larger than the caller's buffer cannot be detected and are never generated.
inline size_t hugeCount(FuzzedDataProvider& p) { return (size_t(1) << 63) | p.ConsumeIntegral<uint64_t>(); }

// Mostly a small count in [0, cap], sometimes 0 or an impossible one.
inline size_t pickCount(FuzzedDataProvider& p, size_t cap, bool allowHuge = true) {
  switch (p.ConsumeIntegralInRange<int>(0, 15)) {
    case 0: return 0;
    case 1: return allowHuge ? hugeCount(p) : cap;
    default: return p.ConsumeIntegralInRange<size_t>(1, cap);
  }
}

// Element size of a data type, 1 for unknown ones (buffers are then sized
// generously: the call must reject the type anyway).
inline size_t elemSize(scDataType_t dt) {
  switch (dt) {
    case scInt8:
    case scUint8: return 1;
    case scFloat16:
    case scBfloat16: return 2;
    case scInt32:
    case scUint32:
    case scFloat32: return 4;
    case scInt64:
    case scUint64:
    case scFloat64: return 8;
    default: return 8;
  }
}

inline bool validType(scDataType_t dt) { return dt >= 0 && dt < scNumTypes; }

// A heap buffer of exactly `bytes` bytes (so ASan sees any overrun), filled
// from the input; non-empty so that its address is a real allocation.
inline std::vector<uint8_t> filled(FuzzedDataProvider& p, size_t bytes) {
  std::vector<uint8_t> b(bytes ? bytes : 1);
  const std::vector<uint8_t> src = p.ConsumeBytes<uint8_t>(std::min<size_t>(bytes, 256));
  for (size_t i = 0; i < b.size(); ++i) b[i] = src.empty() ? uint8_t(i * 131 + 7) : src[i % src.size()];
  return b;
}

// A non-NULL value that is not a stream: host communicators must refuse it
// without reading it.
inline void* bogusStream() { return reinterpret_cast<void*>(uintptr_t(0x1000)); }

// Local communicators of 1..4 ranks created once per process (creation is the
// slow part; fuzz_comm fuzzes it). A short deadline turns a hang into
// scTimeout, which expectClean reports.
inline scComm_t* localComms(int nranks) {
  static scComm_t comms[5][4] = {};
  if (!comms[nranks][0]) {
    scConfig_t cfg = SC_CONFIG_INITIALIZER;
    cfg.timeoutSeconds = 20;
    cfg.check = nranks == 3 ? scCheckAll : scCheckDefault;  // both paths of the header exchange
    const scResult_t r = scCommInitLocal(comms[nranks], nranks, nullptr, &cfg);
    if (r != scSuccess) fail("scCommInitLocal", r, scGetLastError(nullptr));
  }
  return comms[nranks];
}

// Runs f(rank) for every rank at once, one thread per rank beyond rank 0; all
// ranks make the same call (mismatched calls are tested in tests/reliability).
template <typename F>
void onRanks(int nranks, F&& f) {
  std::vector<std::thread> threads;
  for (int r = 1; r < nranks; ++r) threads.emplace_back([&f, r] { f(r); });
  f(0);
  for (auto& t : threads) t.join();
}

// Collective results must agree: a rank that failed alone would have left
// the others waiting. res[r] is rank r's result.
inline void expectAgree(const char* what, const std::vector<scResult_t>& res, scComm_t* comms) {
  for (size_t r = 0; r < res.size(); ++r) {
    expectClean(what, res[r], comms ? comms[r] : nullptr);
    if (res[r] != res[0]) {
      std::fprintf(stderr, "rank 0: %d, rank %zu: %d\n", int(res[0]), r, int(res[r]));
      fail(what, res[r], comms ? scGetLastError(comms[r]) : "ranks disagree");
    }
  }
}

}  // namespace fz
