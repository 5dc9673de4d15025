// CPU compute backend: plain loops the compiler vectorises.
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "backend/backend.h"
#include "backend/reduce_ops.h"
#include "core/memkind.h"

namespace sc {
namespace {

template <typename T, typename F>
void apply(T* d, const T* a, const T* b, size_t n, F f) {
  for (size_t i = 0; i < n; ++i) d[i] = f(a[i], b[i]);
}

class CpuBackend final : public Backend {
 public:
  Mem mem() const override { return Mem::Host; }

  void reduce(void* dst, const void* a, const void* b, size_t n, scDataType_t dt, scRedOp_t op,
              void*) override {
    dispatchDtype(dt, [&](auto tag) {
      using T = decltype(tag);
      using A = Arith<T>;
      T* d = static_cast<T*>(dst);
      const T* x = static_cast<const T*>(a);
      const T* y = static_cast<const T*>(b);
      switch (op) {
        // Lambdas (not function pointers) so each loop inlines and vectorises.
        case scSum: case scAvg: apply(d, x, y, n, [](T u, T v) { return A::sum(u, v); }); break;
        case scProd: apply(d, x, y, n, [](T u, T v) { return A::prod(u, v); }); break;
        case scMax: apply(d, x, y, n, [](T u, T v) { return A::max(u, v); }); break;
        case scMin: apply(d, x, y, n, [](T u, T v) { return A::min(u, v); }); break;
        default: SC_THROW(scInvalidArgument, "unknown reduction op ", int(op));
      }
    });
  }

  void divide(void* buf, size_t n, scDataType_t dt, int divisor, void*) override {
    dispatchDtype(dt, [&](auto tag) {
      using T = decltype(tag);
      T* p = static_cast<T*>(buf);
      for (size_t i = 0; i < n; ++i) p[i] = Arith<T>::div(p[i], divisor);
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
    SC_ARG(pointerKind(p) != PtrKind::Device, what,
           " is device memory but the communicator works on host buffers");
  }
};

}  // namespace

std::unique_ptr<Backend> makeCpuBackend() { return std::make_unique<CpuBackend>(); }

#ifndef SPARCOLL_HAVE_CUDA
std::unique_ptr<Backend> makeCudaBackend(int) {
  SC_THROW(scInvalidUsage, "device buffers need a CUDA build of sparcoll (SPARCOLL_CUDA=ON)");
}
#endif

}  // namespace sc
