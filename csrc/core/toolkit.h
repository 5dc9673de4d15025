// The registry between code that needs a toolkit (CUDA, MPI, NCCL) and code
// that does not: the one way sparcoll builds without a toolkit.
//
// Sources that need a toolkit live in a directory CMake compiles only when the
// toolkit is on (kernels/ and csrc/<area>/cuda/, csrc/<area>/mpi/,
// csrc/<area>/nccl/, csrc/<area>/nccl_mpi/: see CMakeLists.txt). Everything
// else is compiled in every build and does not test SPARCOLL_HAVE_*. Where it
// needs a toolkit's service it calls a ToolkitFn: a function slot defined,
// with its behaviour for a build without the toolkit (usually an
// scInvalidUsage "built without X" error), next to its toolkit-free callers;
// the gated directory puts the real implementation in the slot when the
// library is loaded (SC_PROVIDE). A build without the toolkit thus compiles,
// links, and answers every such call with the slot's default.
#pragma once

#include <utility>

namespace sc {

template <typename Signature>
class ToolkitFn;

template <typename R, typename... Args>
class ToolkitFn<R(Args...)> {
 public:
  using Fn = R (*)(Args...);

  // constexpr with a function's address: the slot is constant-initialised, so
  // it holds its default before any dynamic initialisation runs (SC_PROVIDE's
  // included, whatever the order of translation units).
  constexpr explicit ToolkitFn(Fn absent) : fn_(absent) {}
  ToolkitFn(const ToolkitFn&) = delete;
  ToolkitFn& operator=(const ToolkitFn&) = delete;

  R operator()(Args... args) const { return fn_(std::forward<Args>(args)...); }
  // True once a gated directory has provided the implementation: the toolkit
  // is in this build.
  bool provided() const { return provided_; }
  // For SC_PROVIDE only (static initialisation, before any call).
  bool provide(Fn impl) {
    fn_ = impl;
    provided_ = true;
    return true;
  }

 private:
  Fn fn_;
  bool provided_ = false;
};

}  // namespace sc

#define SC_TOOLKIT_CAT2(a, b) a##b
#define SC_TOOLKIT_CAT(a, b) SC_TOOLKIT_CAT2(a, b)
// At namespace scope in a source of a gated directory: puts `impl` (a function
// with the slot's signature) in the ToolkitFn `slot` when the library loads.
#define SC_PROVIDE(slot, impl) \
  [[maybe_unused]] static const bool SC_TOOLKIT_CAT(scProvided_, __LINE__) = (slot).provide(impl)
