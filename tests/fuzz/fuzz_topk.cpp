// Top-k selection: scTopkMaxOutput, scTopkSelect and the error-feedback state
// (create, residual, reset, step, scTopkSelectFeedback, destroy) with any
// config (size, method, output, index type, k, bucket, samples, step), any
// vector (NaN/Inf included: the bytes come from the input), NULL buffers and
// capacities below and above k. Buffers hold exactly `capacity` entries.
#include "fuzz_util.h"

namespace {

scTopkConfig_t pickConfig(FuzzedDataProvider& p, size_t n) {
  scTopkConfig_t c = SC_TOPK_CONFIG_INITIALIZER;
  if (p.ConsumeIntegralInRange<int>(0, 15) == 0) c.size = p.ConsumeIntegralInRange<size_t>(0, 128);
  c.method = fz::pickEnum<scTopkMethod_t>(p, scTopkNumMethods);
  c.output = fz::pickEnum<scTopkOutput_t>(p, scTopkNumOutputs);
  c.indexType = fz::pickEnum<scTopkIndex_t>(p, scTopkNumIndexTypes);
  switch (p.ConsumeIntegralInRange<int>(0, 7)) {
    case 0: c.k = 0; break;
    case 1: c.k = n + 1; break;
    case 2: c.k = p.ConsumeIntegral<size_t>(); break;
    default: c.k = p.ConsumeIntegralInRange<size_t>(1, n ? n : 1);
  }
  const size_t buckets[] = {0, 1, 7, 512, (size_t(1) << 32), (size_t(1) << 32) + 1, SIZE_MAX};
  c.bucket = p.ConsumeBool() ? buckets[p.ConsumeIntegralInRange<int>(0, 6)] : p.ConsumeIntegralInRange<size_t>(1, 600);
  c.seed = p.ConsumeIntegral<uint64_t>();
  c.step = p.ConsumeBool() ? p.ConsumeIntegral<uint64_t>() : p.ConsumeIntegralInRange<uint64_t>(0, 100);
  c.samples = p.ConsumeBool() ? 0 : p.ConsumeIntegralInRange<size_t>(0, n + 2);
  return c;
}

// Output buffers of exactly `capacity` entries (indices of either width, so a
// wrong width in the library is an overrun), or NULL.
struct Out {
  std::vector<uint8_t> idx, val;
  void* i() { return idx.empty() ? nullptr : idx.data(); }
  void* v() { return val.empty() ? nullptr : val.data(); }
};

Out makeOut(FuzzedDataProvider& p, size_t capacity, const scTopkConfig_t& c, scDataType_t dt) {
  Out o;
  const size_t isz = c.indexType == scTopkIndexU64 ? 8 : 4, cap = capacity ? capacity : 1;
  if (p.ConsumeIntegralInRange<int>(0, 15)) o.idx.assign(cap * isz, 0);
  if (p.ConsumeIntegralInRange<int>(0, 15)) o.val.assign(cap * fz::elemSize(dt), 0);
  return o;
}

size_t pickCapacity(FuzzedDataProvider& p, const scTopkConfig_t& c, size_t n) {
  switch (p.ConsumeIntegralInRange<int>(0, 3)) {
    case 0: return p.ConsumeIntegralInRange<size_t>(0, n + 2);
    case 1: return c.k <= n + 2 ? c.k : n;
    default: return n;  // never overflows
  }
}

// The reported count must fit the buffers (ASan checks the writes themselves).
void touch(const scTopkInfo_t& info, size_t capacity, const Out& o) {
  if (info.nnz > capacity) fz::fail("scTopkSelect", scSuccess, "info.nnz exceeds capacity");
  (void)o;
}

void stateless(FuzzedDataProvider& p) {
  const bool hugeN = p.ConsumeIntegralInRange<int>(0, 31) == 0;
  const size_t n = hugeN ? fz::hugeCount(p) : p.ConsumeIntegralInRange<size_t>(0, 4096);
  const scDataType_t dt = fz::pickEnum<scDataType_t>(p, scNumTypes);
  scTopkConfig_t c = pickConfig(p, hugeN ? 4096 : n);
  const bool nulCfg = p.ConsumeIntegralInRange<int>(0, 31) == 0;
  size_t cap = 0;
  fz::expectClean("scTopkMaxOutput", scTopkMaxOutput(n, nulCfg ? nullptr : &c, p.ConsumeBool() ? &cap : nullptr));
  const size_t bufN = hugeN ? 1 : n;
  const size_t capacity = pickCapacity(p, c, bufN);
  std::vector<uint8_t> v = fz::filled(p, bufN * fz::elemSize(dt));
  Out o = makeOut(p, capacity, c, dt);
  scTopkInfo_t info{};
  const bool nulV = p.ConsumeIntegralInRange<int>(0, 31) == 0, stream = p.ConsumeIntegralInRange<int>(0, 15) == 0;
  const scResult_t r = scTopkSelect(nulV ? nullptr : v.data(), n, dt, nulCfg ? nullptr : &c, o.i(), o.v(), capacity,
                                    p.ConsumeBool() ? &info : nullptr, stream ? fz::bogusStream() : nullptr);
  fz::expectClean("scTopkSelect", r);
  if (r == scSuccess) touch(info, capacity, o);
}

void withState(FuzzedDataProvider& p) {
  const size_t n = p.ConsumeIntegralInRange<int>(0, 15) == 0 ? SIZE_MAX : p.ConsumeIntegralInRange<size_t>(0, 4096);
  const scDataType_t dt = fz::pickEnum<scDataType_t>(p, scNumTypes);
  const int device = p.ConsumeIntegralInRange<int>(-2, 1);  // >= 0 needs CUDA: refused on CPU builds
  scTopkState_t st = nullptr;
  const scResult_t cr = scTopkStateCreate(p.ConsumeIntegralInRange<int>(0, 15) ? &st : nullptr, n, dt, device);
  fz::expectClean("scTopkStateCreate", cr);
  if (cr != scSuccess) st = nullptr;  // the NULL-state paths below
  const int steps = p.ConsumeIntegralInRange<int>(0, 3);
  for (int s = 0; s < steps && p.remaining_bytes() > 0; ++s) {
    const size_t bufN = st ? n : 16;
    scTopkConfig_t c = pickConfig(p, bufN);
    const size_t capacity = pickCapacity(p, c, bufN);
    const scDataType_t gdt = st ? dt : scFloat32;
    std::vector<uint8_t> g = fz::filled(p, bufN * fz::elemSize(gdt));
    Out o = makeOut(p, capacity, c, gdt);
    scTopkInfo_t info{};
    const scResult_t r = scTopkSelectFeedback(st, p.ConsumeIntegralInRange<int>(0, 31) ? g.data() : nullptr, &c, o.i(),
                                              o.v(), capacity, p.ConsumeBool() ? &info : nullptr,
                                              p.ConsumeIntegralInRange<int>(0, 31) ? nullptr : fz::bogusStream());
    fz::expectClean("scTopkSelectFeedback", r);
    if (r == scSuccess) touch(info, capacity, o);
    switch (p.ConsumeIntegralInRange<int>(0, 4)) {
      case 0: {
        void* res = nullptr;
        const bool nul = p.ConsumeBool();
        fz::expectClean("scTopkStateResidual", scTopkStateResidual(st, nul ? nullptr : &res));
        if (res && st) {  // the residual is n elements: overwrite it from the input
          std::vector<uint8_t> b = fz::filled(p, n * fz::elemSize(dt));
          std::memcpy(res, b.data(), n * fz::elemSize(dt));
        }
        break;
      }
      case 1:
        fz::expectClean("scTopkStateReset", scTopkStateReset(st, p.ConsumeBool() ? nullptr : fz::bogusStream()));
        break;
      case 2: fz::expectClean("scTopkStateSetStep", scTopkStateSetStep(st, p.ConsumeIntegral<uint64_t>())); break;
      case 3: {
        uint64_t step;
        fz::expectClean("scTopkStateGetStep", scTopkStateGetStep(st, p.ConsumeBool() ? &step : nullptr));
        break;
      }
      default: break;
    }
  }
  fz::expectClean("scTopkStateDestroy", scTopkStateDestroy(st));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider p(data, size);
  if (!scTopkMethodName(fz::pickEnum<scTopkMethod_t>(p, scTopkNumMethods)))
    fz::fail("scTopkMethodName", scSuccess, "NULL");
  if (p.ConsumeBool()) stateless(p);
  else withState(p);
  return 0;
}
