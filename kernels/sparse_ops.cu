// CUDA implementation of the sparse stream operations (csrc/sparse/ops.h), all
// enqueued on the communicator's stream and built from CUB primitives:
//   merge-sum      DeviceMerge::MergePairs + DeviceReduce::ReduceByKey
//   sort+coalesce  DeviceRadixSort::SortPairs (stable) + DeviceSelect::If (run heads) +
//                  one in-order fold per run (sums round as the CPU's left-to-right sum)
//   split          one binary search per range boundary (the CPU reference's searches)
//   sparsify       DeviceSelect::If (indices, then values with the same predicate)
//   validate       DeviceReduce::Reduce (min of the first failed check)
//   densify / scatter-add   one scatter kernel (sparse_kernels.cuh)
//   static slots   one kernel (blocks -> sort pairs) + DeviceReduce::Reduce (first bad slot)
// Data-dependent counts stay in device memory; the host reads them with
// toHost(), which first waits for the stream (polled, bounded by the deadline).
// Every operation makes env.device current through a DeviceScope, so the
// caller's current device is restored on return.
// Values that are only moved use their bit type (one instantiation per size);
// values that are summed or tested use their storage type (core/dtype.h), with
// the host's operators.
#include <sched.h>

#include <cub/device/device_merge.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "core/cuda_util.h"
#include "sparse/ops.h"
#include "sparse_kernels.cuh"

namespace sc::sp {
namespace {

using thrust::counting_iterator;
using thrust::make_transform_iterator;

template <typename F>
void dispatchBits(size_t vsz, F&& f) {
  switch (vsz) {
    case 1: f(uint8_t{}); break;
    case 2: f(uint16_t{}); break;
    case 4: f(uint32_t{}); break;
    default: f((unsigned long long){}); break;
  }
}

// Device index type (uint64 indices as unsigned long long, CUB's native 64-bit key).
template <typename F>
void dispatchIdx(scIndexType_t t, F&& f) {
  if (t == scIndexU64) f((unsigned long long){});
  else f(uint32_t{});
}

constexpr int kThreads = 256;
unsigned blocksFor(uint64_t n) { return unsigned(std::min<uint64_t>((n + kThreads - 1) / kThreads, 8192)); }

class CudaOps final : public SparseOps {
 public:
  CudaOps(scIndexType_t it, scDataType_t vt, const OpsEnv& env)
      : SparseOps(it, vt), env_(env), stream_(static_cast<cudaStream_t>(env.stream)) {
    SC_ARG(env.device >= 0, "CUDA sparse operations need a device, got ", env.device);
    SC_REQUIRE(bool(env.scratch), scInternalError, "CUDA sparse operations need scratch memory");
  }
  bool onDevice() const override { return true; }

  void validate(const void* idx, size_t n, uint64_t dim, bool rangeOnly, uint64_t* err) override {
    const DeviceScope on(env_.device);
    if (n == 0) {
      const uint64_t ok = kNoError;
      fromHost(err, &ok, 8);
      return;
    }
    dispatchIdx(it, [&](auto itag) {
      using I = decltype(itag);
      auto in = make_transform_iterator(counting_iterator<uint64_t>(0),
                                        dev::CheckAt<I>{static_cast<const I*>(idx), dim, rangeOnly});
      cub(
          [&](void* t, size_t& b) {
            return cub::DeviceReduce::Reduce(t, b, in, err, int64_t(n), dev::MinU64{}, kNoError, stream_);
          },
          "cub::DeviceReduce::Reduce (validate)");
    });
  }

  void sortCoalesce(const void* idx, const void* val, size_t n, void* oi, void* ov, uint64_t* cnt) override {
    const DeviceScope on(env_.device);
    if (n == 0) return writeCount(cnt, 0);
    dispatchIdx(it, [&](auto itag) {
      using I = decltype(itag);
      I* tk = static_cast<I*>(scratch(kOpsKeys, n * isz));
      dispatchBits(vsz, [&](auto btag) {
        using B = decltype(btag);
        B* tv = static_cast<B*>(scratch(kOpsValues, n * vsz));
        cub(
            [&](void* t, size_t& b) {
              return cub::DeviceRadixSort::SortPairs(t, b, static_cast<const I*>(idx), tk, static_cast<const B*>(val),
                                                     tv, int64_t(n), 0, int(8 * isz), stream_);
            },
            "cub::DeviceRadixSort::SortPairs");
      });
      foldRuns(tk, scratch(kOpsValues, n * vsz), n, oi, ov, cnt);
    });
  }

  void mergeSum(const void* ai, const void* av, size_t na, const void* bi, const void* bv, size_t nb, void* oi,
                void* ov, uint64_t* cnt) override {
    const DeviceScope on(env_.device);
    const size_t n = na + nb;
    if (n == 0) return writeCount(cnt, 0);
    dispatchIdx(it, [&](auto itag) {
      using I = decltype(itag);
      I* tk = static_cast<I*>(scratch(kOpsKeys, n * isz));
      dispatchBits(vsz, [&](auto btag) {
        using B = decltype(btag);
        B* tv = static_cast<B*>(scratch(kOpsValues, n * vsz));
        // Stable: for an index in both, a's entry comes first (the reference's operand order).
        cub(
            [&](void* t, size_t& b) {
              return cub::DeviceMerge::MergePairs(t, b, static_cast<const I*>(ai), static_cast<const B*>(av),
                                                  int64_t(na), static_cast<const I*>(bi), static_cast<const B*>(bv),
                                                  int64_t(nb), tk, tv, dev::Less{}, stream_);
            },
            "cub::DeviceMerge::MergePairs");
      });
      reduceByKey(tk, scratch(kOpsValues, n * vsz), n, oi, ov, cnt);
    });
  }

  void scatterAdd(const void* idx, const void* val, size_t n, uint64_t lo, void* dense) override {
    scatter<true>(idx, val, n, lo, dense);
  }

  void densify(const void* idx, const void* val, size_t n, uint64_t lo, size_t len, void* dense) override {
    const DeviceScope on(env_.device);
    if (len) SC_CUDA_CHECK(cudaMemsetAsync(dense, 0, len * vsz, stream_));
    scatter<false>(idx, val, n, lo, dense);
  }

  void split(const void* idx, size_t n, const uint64_t* nIn, const uint64_t* bounds, int parts, uint64_t* counts,
             uint64_t* offs) override {
    const DeviceScope on(env_.device);
    // The bounds go to the device in stream order (kernel parameters, no host wait).
    auto* levels = static_cast<uint64_t*>(scratch(kOpsWords, size_t(parts + 1) * 8));
    fromHost(levels, bounds, size_t(parts + 1) * 8);
    dispatchIdx(it, [&](auto itag) {
      using I = decltype(itag);
      dev::splitKernel<<<blocksFor(uint64_t(parts) + 1), kThreads, 0, stream_>>>(static_cast<const I*>(idx), n, nIn,
                                                                                 levels, parts, counts, offs);
      SC_CUDA_CHECK(cudaGetLastError());
    });
  }

  void sparsify(const void* dense, size_t len, uint64_t lo, void* oi, void* ov, uint64_t* cnt) override {
    const DeviceScope on(env_.device);
    if (len == 0) return writeCount(cnt, 0);
    uint64_t* again = static_cast<uint64_t*>(scratch(kOpsWords, 8));
    dispatchIdx(it, [&](auto itag) {
      using I = decltype(itag);
      dispatchDtype(vt, [&](auto vtag) {
        using T = decltype(vtag);
        const T* d = static_cast<const T*>(dense);
        auto positions = make_transform_iterator(counting_iterator<uint64_t>(0), dev::IndexAt<I>{lo});
        cub(
            [&](void* t, size_t& b) {
              return cub::DeviceSelect::If(t, b, positions, static_cast<I*>(oi), cnt, int64_t(len),
                                           dev::NonZeroAt<I, T>{d, lo}, stream_);
            },
            "cub::DeviceSelect::If (sparsify indices)");
        cub(
            [&](void* t, size_t& b) {
              return cub::DeviceSelect::If(t, b, d, static_cast<T*>(ov), again, int64_t(len), dev::NonZero<T>{},
                                           stream_);
            },
            "cub::DeviceSelect::If (sparsify values)");
      });
    });
  }

  void staticSlots(const void* blocks, int P, const StaticLayout& L, uint64_t dim, void* keys, void* vals,
                   uint64_t* err) override {
    const DeviceScope on(env_.device);
    const uint64_t n = uint64_t(P) * L.cap;
    const auto* b = static_cast<const unsigned char*>(blocks);
    dispatchIdx(it, [&](auto itag) {
      using I = decltype(itag);
      dispatchBits(vsz, [&](auto btag) {
        using B = decltype(btag);
        dev::staticSlotsKernel<<<blocksFor(n), kThreads, 0, stream_>>>(b, L, dim, n, static_cast<I*>(keys),
                                                                       static_cast<B*>(vals));
        SC_CUDA_CHECK(cudaGetLastError());
      });
      auto in = make_transform_iterator(counting_iterator<uint64_t>(0), dev::StaticCheckAt<I>{b, L, dim});
      cub(
          [&](void* t, size_t& bytes) {
            return cub::DeviceReduce::Reduce(t, bytes, in, err, int64_t(n), dev::MinU64{}, kStaticOk, stream_);
          },
          "cub::DeviceReduce::Reduce (static slots)");
    });
  }

  void densifyCounted(const void* idx, const void* val, const uint64_t* cnt, uint64_t nMax, uint64_t dim,
                      void* dense) override {
    const DeviceScope on(env_.device);
    if (dim) SC_CUDA_CHECK(cudaMemsetAsync(dense, 0, dim * vsz, stream_));
    if (nMax == 0) return;
    dispatchIdx(it, [&](auto itag) {
      using I = decltype(itag);
      dispatchBits(vsz, [&](auto btag) {
        using B = decltype(btag);
        dev::densifyCountedKernel<<<blocksFor(nMax), kThreads, 0, stream_>>>(static_cast<const I*>(idx),
                                                                             static_cast<const B*>(val), cnt, nMax, dim,
                                                                             static_cast<B*>(dense));
        SC_CUDA_CHECK(cudaGetLastError());
      });
    });
  }

  void keepStatus(uint64_t* status, const uint64_t* err) override {
    const DeviceScope on(env_.device);
    dev::keepStatusKernel<<<1, 1, 0, stream_>>>(status, err);
    SC_CUDA_CHECK(cudaGetLastError());
  }

  void toHost(void* dst, const void* src, size_t bytes) override {
    const DeviceScope on(env_.device);
    // Wait for the stream, polling so the deadline holds (a peer that never sends
    // would otherwise block here forever), then copy: the copy itself is quick.
    for (int i = 0;; ++i) {
      const cudaError_t rc = cudaStreamQuery(stream_);
      if (rc == cudaSuccess) break;
      if (rc != cudaErrorNotReady) SC_CUDA_CHECK(rc);
      env_.dl.check("the CUDA stream before reading sparse counts back");
      if (i < 64) continue;
      if (i < 1024) sched_yield();
      else std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
    if (bytes) SC_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream_));
    SC_CUDA_CHECK(cudaStreamSynchronize(stream_));  // the copy just queued on an idle stream
  }

  void fromHost(void* dst, const void* src, size_t bytes) override {
    const DeviceScope on(env_.device);
    for (size_t off = 0; off < bytes; off += sizeof(dev::Chunk)) {
      dev::Chunk c;
      const unsigned n = unsigned(std::min(bytes - off, sizeof c.b));
      std::memcpy(c.b, static_cast<const unsigned char*>(src) + off, n);
      dev::writeChunk<<<1, kThreads, 0, stream_>>>(static_cast<unsigned char*>(dst) + off, c, n);
      SC_CUDA_CHECK(cudaGetLastError());
    }
  }

 private:
  void* scratch(int slot, size_t bytes) { return env_.scratch(slot, std::max<size_t>(bytes, 1)); }
  void writeCount(uint64_t* cnt, uint64_t v) { fromHost(cnt, &v, 8); }

  // Two-phase CUB call: size query, then the run with its temporary storage.
  template <typename Call>
  void cub(Call call, const char* what) {
    size_t bytes = 0;
    cudaCheck(call(nullptr, bytes), what, __FILE__, __LINE__);
    cudaCheck(call(scratch(kOpsCubTemp, bytes), bytes), what, __FILE__, __LINE__);
  }

  // Sorted keys with duplicates (at most adjacent) -> unique keys and summed values.
  template <typename I>
  void reduceByKey(const I* keys, const void* vals, size_t n, void* oi, void* ov, uint64_t* cnt) {
    dispatchDtype(vt, [&](auto vtag) {
      using T = decltype(vtag);
      cub(
          [&](void* t, size_t& b) {
            return cub::DeviceReduce::ReduceByKey(t, b, keys, static_cast<I*>(oi), static_cast<const T*>(vals),
                                                  static_cast<T*>(ov), cnt, Sum<T>{}, int64_t(n), stream_);
          },
          "cub::DeviceReduce::ReduceByKey");
    });
  }

  // Sorted keys with runs of any length -> unique keys and each run's values
  // summed in order: run heads selected with CUB, then one sequential fold per run.
  template <typename I>
  void foldRuns(const I* keys, const void* vals, size_t n, void* oi, void* ov, uint64_t* cnt) {
    auto* starts = reinterpret_cast<uint64_t*>(scratch(kOpsWords, n * 8));
    cub(
        [&](void* t, size_t& b) {
          return cub::DeviceSelect::If(t, b, counting_iterator<uint64_t>(0), starts, cnt, int64_t(n),
                                       dev::RunHead<I>{keys}, stream_);
        },
        "cub::DeviceSelect::If (run heads)");
    dispatchDtype(vt, [&](auto vtag) {
      using T = decltype(vtag);
      dev::foldRunsKernel<<<blocksFor(n), kThreads, 0, stream_>>>(keys, static_cast<const T*>(vals), starts, cnt,
                                                                  uint64_t(n), static_cast<I*>(oi),
                                                                  static_cast<T*>(ov));
      SC_CUDA_CHECK(cudaGetLastError());
    });
  }

  template <bool Add>
  void scatter(const void* idx, const void* val, size_t n, uint64_t lo, void* dense) {
    const DeviceScope on(env_.device);
    if (n == 0) return;
    dispatchIdx(it, [&](auto itag) {
      using I = decltype(itag);
      dispatchDtype(vt, [&](auto vtag) {
        using T = decltype(vtag);
        dev::scatterKernel<Add><<<blocksFor(n), kThreads, 0, stream_>>>(static_cast<const I*>(idx),
                                                                        static_cast<const T*>(val), n, lo,
                                                                        static_cast<T*>(dense));
        SC_CUDA_CHECK(cudaGetLastError());
      });
    });
  }

  OpsEnv env_;
  cudaStream_t stream_;
};

std::unique_ptr<SparseOps> makeOps(scIndexType_t it, scDataType_t vt, const OpsEnv& env) {
  return std::make_unique<CudaOps>(it, vt, env);
}

}  // namespace

SC_PROVIDE(makeCudaOps, makeOps);

}  // namespace sc::sp
