// CPU compute backend: plain loops the compiler vectorises.
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "backend/backend.h"
#include "core/dtype.h"
#include "core/memkind.h"
#include "core/reduce_op.h"

namespace sc {
namespace {

// d = f(a, b) element-wise: a loop over the shared operator (core/reduce_op.h),
// inlined so that it vectorises.
template <typename T, typename F>
void apply(T* d, const T* a, const T* b, size_t n, F f) {
  for (size_t i = 0; i < n; ++i) d[i] = f(a[i], b[i]);
}

class CpuBackend final : public Backend {
 public:
  Mem mem() const override { return Mem::Host; }

  void reduce(void* dst, const void* a, const void* b, size_t n, scDataType_t dt, scRedOp_t op, void*) override {
    dispatchDtype(dt, [&](auto tag) {
      using T = decltype(tag);
      checkOp(op);
      withReduceOp<T>(op, [&](auto f) {
        apply(static_cast<T*>(dst), static_cast<const T*>(a), static_cast<const T*>(b), n, f);
      });
    });
  }

  void divide(void* buf, size_t n, scDataType_t dt, int divisor, void*) override {
    dispatchDtype(dt, [&](auto tag) {
      using T = decltype(tag);
      T* p = static_cast<T*>(buf);
      const DivideBy<T> f{divisor};
      for (size_t i = 0; i < n; ++i) p[i] = f(p[i]);
    });
  }

  void copy(void* dst, const void* src, size_t bytes, void*) override {
    if (dst != src && bytes) std::memmove(dst, src, bytes);
  }
  void zero(void* dst, size_t bytes, void*) override {
    if (bytes) std::memset(dst, 0, bytes);
  }
  void* alloc(size_t bytes) override {
    // Bounded first, so the rounding below cannot wrap around.
    SC_REQUIRE(bytes <= size_t(PTRDIFF_MAX), scSystemError, "host allocation of ", bytes, " bytes is impossible");
    void* p = std::aligned_alloc(64, ((bytes + 63) / 64) * 64 + 64);
    SC_REQUIRE(p, scSystemError, "host allocation of ", bytes, " bytes failed");
    return p;
  }
  void release(void* p) noexcept override { std::free(p); }
  void sync(void*, const Deadline&) override {}
  void checkPointer(const void* p, const char* what) const override {
    SC_ARG(pointerKind(p) != PtrKind::Device, what, " is device memory but the communicator works on host buffers");
  }
};

}  // namespace

std::unique_ptr<Backend> makeCpuBackend() { return std::make_unique<CpuBackend>(); }

namespace {
std::unique_ptr<Backend> noCudaBackend(int) {
  SC_THROW(scInvalidUsage, "device buffers need a CUDA build of sparcoll (SPARCOLL_CUDA=ON)");
}
}  // namespace

ToolkitFn<std::unique_ptr<Backend>(int)> makeCudaBackend{noCudaBackend};

}  // namespace sc
