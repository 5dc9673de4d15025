// The cost model's entry points: scEstimateTime on local communicators,
// scCostModelCreate with any configuration, nranks, machines and memory kind
// (its tuning file written from the input, so rules and model parameters of
// any value reach the estimates), scCostModelEstimateTime, and destroy.
#include <unistd.h>

#include <limits>
#include <string>

#include "fuzz_util.h"

namespace {

std::string gPath;

// The input's tail as a tuning file (one path per process, rewritten per input).
const char* writeTuning(const std::string& text) {
  if (gPath.empty()) {
    gPath = "/tmp/sparcoll-fuzz-model-" + std::to_string(long(getpid())) + ".json";
    std::atexit([] { std::remove(gPath.c_str()); });
  }
  FILE* f = std::fopen(gPath.c_str(), "wb");
  if (!f) return nullptr;
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
  return gPath.c_str();
}

double pickDensity(FuzzedDataProvider& p) {
  const double d[] = {0.0,
                      1.0,
                      1e-9,
                      0.5,
                      2.0,
                      -1.0,
                      std::numeric_limits<double>::quiet_NaN(),
                      std::numeric_limits<double>::infinity()};
  return p.ConsumeBool() ? p.ConsumeFloatingPointInRange<double>(0.0, 1.0) : d[p.ConsumeIntegralInRange<int>(0, 7)];
}

// One estimate's arguments: algo is each collective's own enum, so any int.
struct Est {
  scCollective_t coll;
  int algo;
  size_t count;
  scDataType_t dt;
  double density;
  bool nullSeconds, nullAuto;
};

Est pickEst(FuzzedDataProvider& p) {
  Est e;
  e.coll = fz::pickEnum<scCollective_t>(p, scNumCollectives);
  e.algo = p.ConsumeBool() ? p.ConsumeIntegralInRange<int>(-1, 6) : p.ConsumeIntegral<int>();
  e.count = p.ConsumeBool() ? p.ConsumeIntegral<size_t>() : p.ConsumeIntegralInRange<size_t>(0, 1 << 24);
  e.dt = fz::pickEnum<scDataType_t>(p, scNumTypes);
  e.density = pickDensity(p);
  e.nullSeconds = p.ConsumeIntegralInRange<int>(0, 15) == 0;
  e.nullAuto = p.ConsumeBool();
  return e;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider p(data, size);
  double seconds = 0;
  int autoAlgo = 0;
  if (p.ConsumeIntegralInRange<int>(0, 3) == 0) {  // a communicator's model (built-in defaults)
    const int P = p.ConsumeIntegralInRange<int>(1, 3);
    scComm_t c = fz::localComms(P)[p.ConsumeIntegralInRange<int>(0, P - 1)];
    for (int i = 0; i < 4 && p.remaining_bytes(); ++i) {
      const Est e = pickEst(p);
      fz::expectClean("scEstimateTime",
                      scEstimateTime(c, e.coll, e.algo, e.count, e.dt, e.density, e.nullSeconds ? nullptr : &seconds,
                                     e.nullAuto ? nullptr : &autoAlgo),
                      c);
    }
    fz::expectClean("scEstimateTime(NULL comm)",
                    scEstimateTime(nullptr, scCollAllReduce, 0, 1, scFloat32, 1, &seconds, nullptr));
    return 0;
  }
  scConfig_t cfg = SC_CONFIG_INITIALIZER;
  if (p.ConsumeIntegralInRange<int>(0, 15) == 0) cfg.size = p.ConsumeIntegralInRange<size_t>(0, 2 * sizeof cfg);
  cfg.transport = fz::pickEnum<scTransport_t>(p, 3);
  cfg.algo = fz::pickEnum<scAlgo_t>(p, scNumAlgos);
  cfg.check = fz::pickEnum<scCheck_t>(p, 4);
  const bool useCfg = p.ConsumeIntegralInRange<int>(0, 7) != 0;
  const int nranks = p.ConsumeBool() ? p.ConsumeIntegral<int>() : p.ConsumeIntegralInRange<int>(-1, 4096);
  const int machines = p.ConsumeBool() ? p.ConsumeIntegral<int>() : p.ConsumeIntegralInRange<int>(-1, 64);
  const int isDevice = p.ConsumeIntegralInRange<int>(-1, 2);
  std::vector<Est> ests;
  const int nEst = p.ConsumeIntegralInRange<int>(0, 4);
  for (int i = 0; i < nEst; ++i) ests.push_back(pickEst(p));
  // What is left is the tuning file (absent when nothing is left).
  const std::string text = p.ConsumeRemainingBytesAsString();
  cfg.tuningFile = text.empty() ? nullptr : writeTuning(text);
  scCostModel_t m = nullptr;
  const bool nullOut = nranks == 7;  // a rare, input-chosen NULL output
  const scResult_t r = scCostModelCreate(nullOut ? nullptr : &m, useCfg ? &cfg : nullptr, nranks, machines, isDevice);
  fz::expectClean("scCostModelCreate", r);
  for (const Est& e : ests) {
    // The sparse estimate keeps one entry per rank (8 bytes each): past 2^20
    // ranks it would measure the allocator, not the validation.
    if (e.coll == scCollSparseAllReduce && nranks > (1 << 20)) continue;
    fz::expectClean("scCostModelEstimateTime",
                    scCostModelEstimateTime(r == scSuccess ? m : nullptr, e.coll, e.algo, e.count, e.dt, e.density,
                                            e.nullSeconds ? nullptr : &seconds, e.nullAuto ? nullptr : &autoAlgo));
  }
  fz::expectClean("scCostModelDestroy", scCostModelDestroy(r == scSuccess ? m : nullptr));
  return 0;
}
