// C API of the top-k selection (sparcoll/topk.h): validates every argument
// before touching any buffer, resolves host vs device from the memory of the
// input (or the state), and runs the CPU reference or the CUDA kernels.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <utility>

#include "core/api_guard.h"
#include "core/dtype.h"
#include "topk/device.h"
#include "topk/dispatch.h"
#include "topk/params.h"
#include "topk/select_plan.h"

struct scTopkState {
  size_t n = 0;
  scDataType_t dtype = scFloat32;
  int device = -1;  // -1: host residual
  void* residual = nullptr;
  uint64_t step = 0;
  sc::topk::DeviceArena arena;  // device scratch kept across calls
  const void* checked[4] = {};  // the last call's buffers, found where the state is
};

namespace sc {
namespace topk {
namespace {

constexpr uint64_t kStepLimit = uint64_t(1) << 63;

const char* outputName(int o) { return o == scTopkFixedPerBucket ? "fixed-per-bucket" : "variable"; }

// Everything about (n, dtype, cfg) that does not depend on buffers.
Params resolve(size_t n, scDataType_t dt, const scTopkConfig_t* cfg) {
  SC_ARG(cfg != nullptr, "top-k config is NULL");
  SC_ARG(cfg->size == sizeof(scTopkConfig_t), "top-k config size ", cfg->size,
         " != sizeof(scTopkConfig_t) = ", sizeof(scTopkConfig_t), " (initialize it with SC_TOPK_CONFIG_INITIALIZER)");
  SC_ARG(cfg->method >= 0 && cfg->method < scTopkNumMethods, "unknown top-k method ", int(cfg->method));
  SC_ARG(cfg->output >= 0 && cfg->output < scTopkNumOutputs, "unknown top-k output mode ", int(cfg->output));
  SC_ARG(cfg->indexType >= 0 && cfg->indexType < scTopkNumIndexTypes, "unknown top-k index type ", int(cfg->indexType));
  SC_ARG(dt >= 0 && dt < scNumTypes, "unknown data type ", int(dt));
  SC_ARG(supportedDtype(dt), "top-k does not support dtype ", dtypeName(dt),
         ": it takes float32, float64, float16 or bfloat16");
  // No object spans more than PTRDIFF_MAX bytes: a larger n is a bad argument,
  // not a vector to start reading (nor one to size scratch by).
  SC_ARG(n <= size_t(PTRDIFF_MAX) / dtypeSize(dt), "n = ", n, " elements of ", dtypeName(dt),
         " exceeds the largest possible buffer");
  Params p{};
  p.method = cfg->method;
  p.output = cfg->output;
  p.indexType = cfg->indexType;
  p.dtype = dt;
  p.n = n;
  p.k = cfg->k;
  p.seed = cfg->seed;
  p.step = cfg->step;
  SC_ARG(p.step < kStepLimit, "top-k step ", p.step, " must be < 2^63");
  if (n == 0) {
    SC_ARG(p.k == 0, "k = ", p.k, " exceeds n = 0");
    return p;
  }
  SC_ARG(p.k >= 1, "k = 0 selects nothing: k must be in [1, n = ", n, "]");
  SC_ARG(p.k <= n, "k = ", p.k, " exceeds n = ", n);
  SC_ARG(p.indexType == scTopkIndexU64 || n - 1 <= UINT32_MAX, "uint32 indices cannot address n = ", n,
         " elements: use scTopkIndexU64");
  if (bucketed(p.method)) {
    SC_ARG(cfg->bucket <= kMaxBucket, "bucket = ", cfg->bucket, " exceeds the maximum 2^32");
    p.bucket = cfg->bucket ? cfg->bucket : defaultBucket(n, p.k);
    SC_ARG(numBuckets(p) <= INT32_MAX, "n = ", n, " with bucket = ", p.bucket, " gives ", numBuckets(p),
           " buckets (at most 2^31-1): use a larger bucket");
  } else {
    SC_ARG(p.output == scTopkVariable, "output mode ", outputName(p.output), " needs a bucketed method; ",
           scTopkMethodName(p.method), " is always variable");
    p.bucket = n;
  }
  if (!bucketed(p.method)) {
    const uint64_t def =
        p.method == scTopkThreshold ? std::min<uint64_t>(n, std::max<uint64_t>(1024, n / 100)) : bracketSamples(n, p.k);
    p.samples = cfg->samples ? cfg->samples : def;
    SC_ARG(p.samples <= n, scTopkMethodName(p.method), " samples = ", p.samples, " exceeds n = ", n);
  }
  return p;
}

uint64_t maxOutput(const Params& p) { return bucketed(p.method) && p.output == scTopkVariable ? p.n : p.k; }

// Checks the output buffers and that every buffer lives where `device` says
// (-1 = host); returns nothing, throws scInvalidArgument. `seen` (a state's)
// holds the buffers of its last call that passed: the same ones again are not
// asked about (a pointer's kind is a driver call).
void checkBuffers(const Params& p, const void* in, const char* inName, int device, void* indices, void* values,
                  const void* counts, size_t capacity, void* stream, const void** seen = nullptr) {
  SC_ARG(in != nullptr, inName, " is NULL with n = ", p.n);
  SC_ARG(indices != nullptr, "indices is NULL");
  SC_ARG(values != nullptr, "values is NULL");
  SC_ARG(capacity >= p.k, "capacity = ", capacity, " is smaller than k = ", p.k);
  if (device < 0) SC_ARG(stream == nullptr, "stream must be NULL for host buffers");
  const void* now[4] = {in, indices, values, counts};
  if (seen && std::equal(now, now + 4, seen)) return;
  const auto where = [](int d) { return d < 0 ? std::string("host memory") : cat("CUDA device ", d); };
  for (const auto& [ptr, name] : {std::pair<const void*, const char*>{in, inName},
                                  {indices, "indices"},
                                  {values, "values"},
                                  {counts, "counts"}}) {
    if (!ptr) continue;  // counts of a call that returns them
    const int d = deviceOf(ptr);
    SC_ARG(d == device, name, " is in ", where(d), " but the call works on ", where(device));
  }
  if (seen) std::copy(now, now + 4, seen);
}

// Where a call runs and how it reports: info (host) and/or counts (the
// buffers' memory); `wait` makes a device call read its counts back.
struct Run {
  int device;
  void* stream;
  bool wait;
  scTopkCounts_t* counts;
  DeviceArena* arena;
};

Outcome run(const Params& p, const Buffers& b, const Run& r) {
  if (r.device >= 0)
    return selectDevice(p, b, DeviceCall{r.device, r.stream, r.wait, r.wait ? timeoutFromEnv() : 0, r.counts, r.arena});
  const Outcome o = selectHost(p, b);
  if (r.counts) *r.counts = scTopkCounts_t{o.nnz, o.selected, o.deferred};
  return o;
}

// A stateless call can select more than capacity (bucketed, variable output).
bool canOverflow(const Params& p) { return p.capacity < maxOutput(p); }

// The counts of a call with nothing to select, in their own memory (a device
// state's, or a stateless call's, may be device memory: zeroed on the stream).
void zeroCounts(scTopkCounts_t* counts, void* stream) {
  if (!counts) return;
  const int d = deviceOf(counts);
  if (d < 0) *counts = scTopkCounts_t{0, 0, 0};
  else deviceZero(d, counts, sizeof *counts, stream);
}

void report(const Outcome& o, scTopkInfo_t* info) {
  if (!info) return;
  info->nnz = o.nnz;
  info->selected = o.selected;
  info->deferred = o.deferred;
}

}  // namespace
}  // namespace topk
}  // namespace sc

using namespace sc;
using namespace sc::topk;

extern "C" const char* scTopkMethodName(scTopkMethod_t m) {
  switch (m) {
    case scTopkApprox: return "approx";
    case scTopkApproxAtMost: return "approx-at-most";
    case scTopkExact: return "exact";
    case scTopkThreshold: return "threshold";
    case scTopkBracket: return "bracket";
    default: return "unknown";
  }
}

extern "C" scResult_t scTopkMaxOutput(size_t n, const scTopkConfig_t* cfg, size_t* capacity) {
  return scGuard(nullptr, [&] {
    SC_ARG(capacity != nullptr, "capacity is NULL");
    *capacity = maxOutput(resolve(n, scFloat32, cfg));
  });
}

namespace sc {
namespace topk {
namespace {

scResult_t select(const void* v, size_t n, scDataType_t dtype, const scTopkConfig_t* cfg, void* indices, void* values,
                  size_t capacity, scTopkInfo_t* info, scTopkCounts_t* counts, void* stream) {
  return scGuard(nullptr, [&] {
    Params p = resolve(n, dtype, cfg);
    report(Outcome{}, info);
    if (n == 0) return zeroCounts(counts, stream);
    const int device = deviceOf(v);
    checkBuffers(p, v, "v", device, indices, values, counts, capacity, stream);
    p.capacity = capacity;
    SC_ARG(!counts || !canOverflow(p), "capacity = ", capacity, " < n = ", n, ": a stream-ordered ",
           scTopkMethodName(p.method), " call with variable output could overflow unseen (use scTopkMaxOutput)");
    const bool wait = info != nullptr || canOverflow(p);
    const Outcome o = run(p, Buffers{v, nullptr, indices, values}, Run{device, stream, wait, counts, nullptr});
    report(o, info);
    SC_REQUIRE(o.deferred == 0 || p.output == scTopkFixedPerBucket, scInvalidUsage, o.selected,
               " entries were selected but capacity is ", capacity, ": the first ", o.nnz,
               " were written (use scTopkMaxOutput, or scTopkSelectFeedback, which defers the rest)");
  });
}

scResult_t selectFeedback(scTopkState_t state, const void* grad, const scTopkConfig_t* cfg, void* indices, void* values,
                          size_t capacity, scTopkInfo_t* info, scTopkCounts_t* counts, void* stream) {
  return scGuard(nullptr, [&] {
    SC_ARG(state != nullptr, "state is NULL");
    Params p = resolve(state->n, state->dtype, cfg);
    p.step = state->step;
    report(Outcome{}, info);
    if (state->n == 0) return zeroCounts(counts, stream);
    checkBuffers(p, grad, "grad", state->device, indices, values, counts, capacity, stream, state->checked);
    p.capacity = capacity;
    const Outcome o = run(p, Buffers{grad, state->residual, indices, values},
                          Run{state->device, stream, info != nullptr, counts, &state->arena});
    state->step = (state->step + 1) % kStepLimit;
    report(o, info);
  });
}

}  // namespace
}  // namespace topk
}  // namespace sc

extern "C" scResult_t scTopkSelect(const void* v, size_t n, scDataType_t dtype, const scTopkConfig_t* cfg,
                                   void* indices, void* values, size_t capacity, scTopkInfo_t* info, void* stream) {
  return select(v, n, dtype, cfg, indices, values, capacity, info, nullptr, stream);
}

extern "C" scResult_t scTopkSelectAsync(const void* v, size_t n, scDataType_t dtype, const scTopkConfig_t* cfg,
                                        void* indices, void* values, size_t capacity, scTopkCounts_t* counts,
                                        void* stream) {
  if (!counts) return scGuard(nullptr, [] { SC_ARG(false, "counts is NULL"); });
  return select(v, n, dtype, cfg, indices, values, capacity, nullptr, counts, stream);
}

extern "C" scResult_t scTopkStateCreate(scTopkState_t* state, size_t n, scDataType_t dtype, int device) {
  return scGuard(nullptr, [&] {
    SC_ARG(state != nullptr, "state pointer is NULL");
    *state = nullptr;
    SC_ARG(dtype >= 0 && dtype < scNumTypes, "unknown data type ", int(dtype));
    SC_ARG(supportedDtype(dtype), "top-k does not support dtype ", dtypeName(dtype),
           ": it takes float32, float64, float16 or bfloat16");
    const size_t esz = dtypeSize(dtype);
    SC_ARG(n <= size_t(PTRDIFF_MAX) / esz, "n = ", n, " elements of ", dtypeName(dtype),
           " exceeds the largest possible buffer");
    auto st = std::make_unique<scTopkState>();
    st->n = n;
    st->dtype = dtype;
    st->device = device < 0 ? -1 : device;
    if (st->device < 0) {
      st->residual = std::calloc(n ? n : 1, esz);
      if (!st->residual) throw std::bad_alloc();
    } else {
      st->residual = deviceAlloc(st->device, n * esz);
    }
    *state = st.release();
  });
}

extern "C" scResult_t scTopkStateDestroy(scTopkState_t state) {
  return scGuard(nullptr, [&] {
    if (!state) return;
    if (state->device < 0) {
      std::free(state->residual);
    } else {
      deviceFree(state->device, state->residual);
      if (state->arena.base) deviceFree(state->device, state->arena.base);
    }
    delete state;
  });
}

extern "C" scResult_t scTopkStateResidual(scTopkState_t state, void** residual) {
  return scGuard(nullptr, [&] {
    SC_ARG(state != nullptr, "state is NULL");
    SC_ARG(residual != nullptr, "residual output pointer is NULL");
    *residual = state->residual;
  });
}

extern "C" scResult_t scTopkStateReset(scTopkState_t state, void* stream) {
  return scGuard(nullptr, [&] {
    SC_ARG(state != nullptr, "state is NULL");
    const size_t bytes = state->n * dtypeSize(state->dtype);
    if (state->device < 0) {
      SC_ARG(stream == nullptr, "stream must be NULL for a host state");
      std::memset(state->residual, 0, bytes);
    } else {
      deviceZero(state->device, state->residual, bytes, stream);
    }
    state->step = 0;
  });
}

extern "C" scResult_t scTopkStateGetStep(scTopkState_t state, uint64_t* step) {
  return scGuard(nullptr, [&] {
    SC_ARG(state != nullptr, "state is NULL");
    SC_ARG(step != nullptr, "step output pointer is NULL");
    *step = state->step;
  });
}

extern "C" scResult_t scTopkStateSetStep(scTopkState_t state, uint64_t step) {
  return scGuard(nullptr, [&] {
    SC_ARG(state != nullptr, "state is NULL");
    SC_ARG(step < kStepLimit, "top-k step ", step, " must be < 2^63");
    state->step = step;
  });
}

extern "C" scResult_t scTopkSelectFeedback(scTopkState_t state, const void* grad, const scTopkConfig_t* cfg,
                                           void* indices, void* values, size_t capacity, scTopkInfo_t* info,
                                           void* stream) {
  return selectFeedback(state, grad, cfg, indices, values, capacity, info, nullptr, stream);
}

extern "C" scResult_t scTopkSelectFeedbackAsync(scTopkState_t state, const void* grad, const scTopkConfig_t* cfg,
                                                void* indices, void* values, size_t capacity, scTopkCounts_t* counts,
                                                void* stream) {
  if (!counts) return scGuard(nullptr, [] { SC_ARG(false, "counts is NULL"); });
  return selectFeedback(state, grad, cfg, indices, values, capacity, nullptr, counts, stream);
}
