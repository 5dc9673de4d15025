// Communicator lifecycle and queries: scCommInitLocal with any nranks and
// configuration, the MPI / NCCL creation calls of this build, the queries with
// NULL outputs, barrier, abort, destroy twice, use after abort; error strings.
#include <algorithm>
#include <unistd.h>

#include <cmath>
#include <limits>
#include <string>

#include "fuzz_util.h"

namespace {

using fz::expectClean;

// A tuning file every process can read: the one valid case of cfg.tuningFile.
std::string gTuningPath;
const char* goodTuningFile() {
  std::string& path = gTuningPath;
  if (path.empty()) {
    std::atexit([] { std::remove(gTuningPath.c_str()); });
    path = "/tmp/sparcoll-fuzz-comm-" + std::to_string(long(getpid())) + ".json";
    if (FILE* f = std::fopen(path.c_str(), "w")) {
      std::fputs(R"({"format": "sparcoll-tuning", "version": 1, "models": [], "rules": []})", f);
      std::fclose(f);
    }
  }
  return path.c_str();
}

double pickTimeout(FuzzedDataProvider& p) {
  switch (p.ConsumeIntegralInRange<int>(0, 6)) {
    case 0: return std::numeric_limits<double>::quiet_NaN();
    case 1: return std::numeric_limits<double>::infinity();
    case 2: return -1.0;
    case 3: return 1e300;
    case 4: return 0.0;
    default: return 20.0;
  }
}

scConfig_t pickConfig(FuzzedDataProvider& p) {
  scConfig_t c = SC_CONFIG_INITIALIZER;
  switch (p.ConsumeIntegralInRange<int>(0, 5)) {  // the size field: old, new, bad
    case 0: c.size = 0; break;
    case 1: c.size = offsetof(scConfig_t, tuningFile); break;
    case 2: c.size = p.ConsumeIntegralInRange<size_t>(0, 2 * sizeof(scConfig_t)); break;
    default: break;
  }
  c.transport = fz::pickEnum<scTransport_t>(p, 3);
  c.device = p.ConsumeIntegralInRange<int>(-2, 2);
  c.timeoutSeconds = pickTimeout(p);
  c.algo = fz::pickEnum<scAlgo_t>(p, scNumAlgos);
  const size_t pipe[] = {0, 1, 7, 8, size_t(1) << 30, (size_t(1) << 30) + 1, SIZE_MAX, 4096};
  c.pipelineBytes = pipe[p.ConsumeIntegralInRange<int>(0, 7)];
  const char* files[] = {nullptr, "", "/nonexistent/tuning.json", "/", "/dev/null", goodTuningFile()};
  c.tuningFile = files[p.ConsumeIntegralInRange<int>(0, 5)];
  c.check = fz::pickEnum<scCheck_t>(p, 4);
  return c;
}

// Calls that may reach the machine once their arguments pass: in a CUDA
// build without a usable GPU (or with an id nobody serves) scCudaError and
// scNcclError are the machine's answers, with a message, not violations.
void expectCleanHere(const char* what, scResult_t r, scComm_t comm = nullptr) {
  if (r == scCudaError || r == scNcclError) {
    if (!*scGetLastError(comm)) fz::fail(what, r, "empty error message");
    return;
  }
  expectClean(what, r, comm);
}

// Queries with valid and NULL outputs; all are local.
void query(FuzzedDataProvider& p, scComm_t comm) {
  int i = 0;
  scStats_t st;
  scAlgo_t a;
  const bool nul = p.ConsumeBool();
  expectClean("scCommRank", scCommRank(comm, nul ? nullptr : &i), comm);
  expectClean("scCommSize", scCommSize(comm, nul ? nullptr : &i), comm);
  expectClean("scCommIsDevice", scCommIsDevice(comm, nul ? nullptr : &i), comm);
  expectClean("scCommDevice", scCommDevice(comm, nul ? nullptr : &i), comm);
  expectClean("scCommGetStats", scCommGetStats(comm, nul ? nullptr : &st), comm);
  expectClean("scCommResetStats", scCommResetStats(comm), comm);
  const size_t bytes = p.ConsumeBool() ? p.ConsumeIntegral<size_t>() : p.ConsumeIntegralInRange<size_t>(0, 1 << 24);
  expectClean("scAllReduceAlgoFor", scAllReduceAlgoFor(comm, bytes, nul ? nullptr : &a), comm);
  (void)scGetLastError(comm);
}

void initLocal(FuzzedDataProvider& p) {
  const int nranks = p.ConsumeIntegralInRange<int>(-2, 4);
  const bool useCfg = p.ConsumeBool();
  scConfig_t cfg = pickConfig(p);
  std::vector<int> devices(4, p.ConsumeIntegralInRange<int>(-1, 1));
  const bool withDevices = p.ConsumeIntegralInRange<int>(0, 7) == 0;  // a CPU build must refuse them
  std::vector<scComm_t> comms(nranks > 0 ? nranks : 1, nullptr);
  const bool nullArray = p.ConsumeIntegralInRange<int>(0, 15) == 0;
  const scResult_t r = scCommInitLocal(nullArray ? nullptr : comms.data(), nranks,
                                       withDevices ? devices.data() : nullptr, useCfg ? &cfg : nullptr);
  expectCleanHere("scCommInitLocal", r);
  if (r != scSuccess) return;
  for (scComm_t c : comms) query(p, c);
  // A barrier over every rank; with a tiny deadline it may time out, which
  // aborts the communicators (allowed: the deadline was the caller's).
  if (p.ConsumeBool()) {
    std::vector<scResult_t> res(nranks);
    void* stream = p.ConsumeIntegralInRange<int>(0, 7) == 0 ? fz::bogusStream() : nullptr;
    fz::onRanks(nranks, [&](int rank) { res[rank] = scBarrier(comms[rank], stream); });
    for (int k = 0; k < nranks; ++k)
      if (res[k] != scTimeout && res[k] != scRemoteError) expectClean("scBarrier", res[k], comms[k]);
  }
  // Abort one rank (peers are only notified; nobody waits here), then every
  // call on it must fail fast.
  if (p.ConsumeBool()) {
    const int k = p.ConsumeIntegralInRange<int>(0, nranks - 1);
    expectClean("scCommAbort", scCommAbort(comms[k]), comms[k]);
    const scResult_t again = scCommAbort(comms[k]);
    if (again != scInvalidUsage) fz::fail("scCommAbort twice", again, scGetLastError(comms[k]));
    float x = 1, y = 0;
    const scResult_t ar = scAllReduce(&x, &y, 1, scFloat32, scSum, scAlgoAuto, comms[k], nullptr);
    if (ar != scInvalidUsage) fz::fail("scAllReduce after abort", ar, scGetLastError(comms[k]));
    query(p, comms[k]);
  }
  // Shrink (allowed after an abort): the ranks not listed call it together.
  // A bad list (out of range, repeated, everyone) is refused on every caller
  // alike; a good one gives each caller a working communicator.
  if (p.ConsumeBool()) {
    std::vector<int> ex(p.ConsumeIntegralInRange<size_t>(0, 3));
    for (int& e : ex) e = p.ConsumeIntegralInRange<int>(-1, nranks);
    const bool nullOut = p.ConsumeIntegralInRange<int>(0, 7) == 0, nullList = p.ConsumeIntegralInRange<int>(0, 7) == 0;
    std::vector<scResult_t> res(nranks, scSuccess);
    std::vector<scComm_t> small(nranks, nullptr);
    auto listed = [&](int r) { return std::find(ex.begin(), ex.end(), r) != ex.end(); };
    fz::onRanks(nranks, [&](int rank) {
      if (!listed(rank))
        res[rank] =
            scCommShrink(comms[rank], nullList ? nullptr : ex.data(), int(ex.size()), nullOut ? nullptr : &small[rank]);
    });
    for (int k = 0; k < nranks; ++k) {
      if (listed(k)) continue;
      if (res[k] != scTimeout) expectClean("scCommShrink", res[k], comms[k]);  // tiny deadlines may expire
      if (res[k] == scSuccess) expectClean("scCommDestroy(shrunk)", scCommDestroy(small[k]));
    }
  }
  for (scComm_t c : comms) expectClean("scCommDestroy", scCommDestroy(c));
  // The handles are dead now: destroy must refuse them without reading them.
  if (p.ConsumeBool()) {
    const scResult_t r2 = scCommDestroy(comms[0]);
    if (r2 != scInvalidUsage) fz::fail("scCommDestroy twice", r2, scGetLastError(nullptr));
    float x = 1, y = 0;
    const scResult_t ar = scAllReduce(&x, &y, 1, scFloat32, scSum, scAlgoAuto, comms[0], nullptr);
    if (ar != scInvalidUsage) fz::fail("scAllReduce after destroy", ar, scGetLastError(nullptr));
  }
}

void initOther(FuzzedDataProvider& p) {
  scConfig_t cfg = pickConfig(p);
  const bool useCfg = p.ConsumeBool(), nullOut = p.ConsumeIntegralInRange<int>(0, 7) == 0;
  scComm_t comm = nullptr;
  scResult_t r;
  if (p.ConsumeBool()) {
    r = scCommInitMpi(nullOut ? nullptr : &comm, nullptr, useCfg ? &cfg : nullptr);
    expectClean("scCommInitMpi", r);
  } else {
    scUniqueId id;
    std::memset(&id, 0, sizeof id);
    if (p.ConsumeBool()) {
      const scResult_t g = scGetUniqueId(p.ConsumeBool() ? &id : nullptr);
      expectCleanHere("scGetUniqueId", g);
    }
    const std::vector<uint8_t> raw = p.ConsumeBytes<uint8_t>(sizeof id);
    if (p.ConsumeBool()) std::memcpy(id.internal, raw.data(), raw.size());
    const int nranks = p.ConsumeIntegralInRange<int>(-1, 4), rank = p.ConsumeIntegralInRange<int>(-1, 4);
    r = scCommInitRank(nullOut ? nullptr : &comm, nranks, id, rank, useCfg ? &cfg : nullptr);
    // A random id that passes the checks: NCCL may wait for peers that never come.
    if (r != scTimeout) expectCleanHere("scCommInitRank", r);
  }
  // Without MPI and NCCL (the fuzz build) neither can succeed.
  if (r == scSuccess) expectClean("scCommDestroy", scCommDestroy(comm));
}

// Calls with a NULL communicator and the handle-free functions.
void nullComm(FuzzedDataProvider& p) {
  query(p, nullptr);
  expectClean("scBarrier(NULL)", scBarrier(nullptr, nullptr));
  expectClean("scCommAbort(NULL)", scCommAbort(nullptr));
  expectClean("scCommDestroy(NULL)", scCommDestroy(nullptr));
  const char* s = scGetErrorString(static_cast<scResult_t>(p.ConsumeIntegral<int>()));
  if (!s) fz::fail("scGetErrorString", scSuccess, "NULL string");
  int a, b, c;
  scGetVersion(p.ConsumeBool() ? &a : nullptr, p.ConsumeBool() ? &b : nullptr, p.ConsumeBool() ? &c : nullptr);
  if (!scGetLastError(nullptr)) fz::fail("scGetLastError", scSuccess, "NULL string");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider p(data, size);
  switch (p.ConsumeIntegralInRange<int>(0, 3)) {
    case 0:
    case 1: initLocal(p); break;
    case 2: initOther(p); break;
    default: nullComm(p); break;
  }
  return 0;
}
