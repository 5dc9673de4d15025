// Dispatch of the DSOP kernel to the communicator's memory kind, the element
// range decomposition used by the fused ring, and the device engine rule.
#include <cstdlib>
#include <cstring>

#include "dsop/kernels.h"

#include "core/env.h"

namespace sc::dsop {
namespace {

void noCudaRect(scDataType_t, const Pairs&, const Rect&, void*, size_t, bool, void*, Engine) {
  SC_THROW(scInvalidUsage, "device buffers need a CUDA build of sparcoll");
}

}  // namespace

ToolkitFn<void(scDataType_t, const Pairs&, const Rect&, void*, size_t, bool, void*, Engine)> deviceRect{noCudaRect};

scDataType_t outputType(scDataType_t in) {
  switch (in) {
    case scFloat32:
    case scFloat16:
    case scBfloat16: return scFloat32;
    case scFloat64: return scFloat64;
    default:
      checkDtype(in);
      SC_THROW(scInvalidArgument, "DSOP supports float32, float64, float16 and bfloat16 inputs, not ", dtypeName(in));
  }
}

void rect(scComm& comm, scDataType_t in, const Pairs& p, const Rect& r, void* dst, size_t ldd, bool accumulate,
          void* stream) {
  if (r.rows == 0 || r.cols == 0) return;
  if (!comm.device()) return hostRect(in, p, r, dst, ldd, accumulate);
  deviceRect(in, p, r, dst, ldd, accumulate, stream, deviceEngine(p.K));
}

void elementRange(scComm& comm, scDataType_t in, const Pairs& p, size_t m, size_t e0, size_t len, void* dst,
                  bool accumulate, void* stream) {
  const size_t esz = dtypeSize(outputType(in));
  forEachRect(m, e0, len, [&](const Rect& r, size_t off) {
    rect(comm, in, p, r, static_cast<char*>(dst) + off * esz, m, accumulate, stream);
  });
}

Engine deviceEngine(size_t K) {
  if (const char* e = env::get(env::Var::DsopGemm)) {
    if (std::strcmp(e, "custom") == 0) return Engine::Custom;
    if (std::strcmp(e, "cublas") == 0) return Engine::Blas;
    SC_REQUIRE(std::strcmp(e, "auto") == 0, scInvalidArgument, env::setting(env::Var::DsopGemm),
               " is not one of auto, custom, cublas");
  }
  return K <= kBlasMinK ? Engine::Custom : Engine::Blas;
}

const char* engineName(Engine e) {
  switch (e) {
    case Engine::Custom: return "custom";
    case Engine::Blas: return "cublas";
    default: return "auto";
  }
}

}  // namespace sc::dsop
