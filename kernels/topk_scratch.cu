// The top-k launchers' scratch memory, counts read-back and device facts
// (kernels/topk_device.cuh).
#include <algorithm>
#include <atomic>
#include <mutex>

#include "topk_device.cuh"

namespace sc {
namespace topk {

namespace {

constexpr size_t kAlign = 256;
constexpr int kMaxDevices = 64;

size_t alignUp(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

// The thread's largest scratch of a stateless call so far, per device: its
// next call takes one chunk of that size.
thread_local size_t tHint[kMaxDevices] = {};

}  // namespace

cudaMemPool_t scratchPool(int device) {
  static std::mutex m;
  static cudaMemPool_t pools[kMaxDevices] = {};
  SC_ARG(device >= 0 && device < kMaxDevices, "CUDA device ", device, " is beyond the ", kMaxDevices,
         " top-k supports");
  std::lock_guard<std::mutex> lock(m);
  if (!pools[device]) {
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    cudaMemPool_t pool = nullptr;
    SC_CUDA_CHECK(cudaMemPoolCreate(&pool, &props));
    // Keep everything freed to it reserved: no synchronisation hands the
    // scratch back to the driver, so the next call allocates nothing new.
    uint64_t keep = ~uint64_t(0);
    SC_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
    pools[device] = pool;
  }
  return pools[device];
}

Scratch::Scratch(cudaStream_t s, int device, DeviceArena* arena) : stream_(s), device_(device), arena_(arena) {
  if (arena_ && arena_->base) chunks_.push_back(Chunk{static_cast<char*>(arena_->base), arena_->bytes, 0});
}

void* Scratch::bytes(size_t n) {
  n = alignUp(n);
  total_ += n;
  for (Chunk& c : chunks_)
    if (c.size - c.used >= n) {
      void* p = c.base + c.used;
      c.used += n;
      return p;
    }
  // A new chunk: for a stateless call, the thread's largest need so far (one
  // chunk per call once it has seen its sizes); for a state, what this call
  // needs (the arena grows to the total at the end).
  size_t size = n;
  if (!arena_ && device_ < kMaxDevices) size = std::max(n, tHint[device_]);
  void* p = nullptr;
  SC_CUDA_CHECK(cudaMallocFromPoolAsync(&p, size, scratchPool(device_), stream_));
  chunks_.push_back(Chunk{static_cast<char*>(p), size, n});
  return p;
}

Scratch::~Scratch() {
  const bool arenaChunk = arena_ && arena_->base;
  for (size_t i = arenaChunk ? 1 : 0; i < chunks_.size(); ++i)
    if (cudaFreeAsync(chunks_[i].base, stream_) != cudaSuccess) (void)cudaGetLastError();
  if (!arena_) {
    if (device_ < kMaxDevices) tHint[device_] = std::max(tHint[device_], total_);
    return;
  }
  if (total_ <= arena_->bytes) return;
  // Grow the state's arena for its next call, unless the stream is being
  // captured into a graph (memory allocated there belongs to the graph).
  cudaStreamCaptureStatus cap = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream_, &cap) != cudaSuccess || cap != cudaStreamCaptureStatusNone) {
    (void)cudaGetLastError();
    return;
  }
  void* p = nullptr;
  if (cudaMallocFromPoolAsync(&p, total_, scratchPool(device_), stream_) != cudaSuccess) {
    (void)cudaGetLastError();  // the next call allocates chunks again
    return;
  }
  if (arena_->base && cudaFreeAsync(arena_->base, stream_) != cudaSuccess) (void)cudaGetLastError();
  arena_->base = p;
  arena_->bytes = total_;
}

namespace {
// The thread's events of the waits, one per device, destroyed with the thread.
struct WaitEvents {
  cudaEvent_t ev[kMaxDevices] = {};
  ~WaitEvents() {
    for (cudaEvent_t e : ev)
      if (e && cudaEventDestroy(e) != cudaSuccess) (void)cudaGetLastError();  // the runtime may be gone at exit
  }
};
thread_local WaitEvents tEvents;
}  // namespace

void readBack(void* host, const void* dev, size_t bytes, cudaStream_t stream, double timeoutSeconds) {
  int d = 0;
  SC_CUDA_CHECK(cudaGetDevice(&d));
  cudaEvent_t& ev = tEvents.ev[d < kMaxDevices ? d : 0];
  if (!ev) SC_CUDA_CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  cudaError_t rc = cudaEventRecord(ev, stream);
  const Deadline dl = Deadline::in(timeoutSeconds);
  for (int i = 0; rc == cudaSuccess; ++i) {
    rc = cudaEventQuery(ev);
    if (rc != cudaErrorNotReady) break;
    rc = cudaSuccess;
    if (dl.expired()) SC_THROW(scTimeout, "deadline of ", dl.seconds, " s expired while waiting for the top-k count");
    if (i < 64) continue;
    if (i < 1024) sched_yield();
    else std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  SC_CUDA_CHECK(rc);
  // The stream is idle: this copy runs at once.
  SC_CUDA_CHECK(cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDeviceToHost, stream));
  SC_CUDA_CHECK(cudaStreamSynchronize(stream));
}

int multiprocessors() {
  static std::atomic<int> sms[kMaxDevices] = {};
  int d = 0;
  SC_CUDA_CHECK(cudaGetDevice(&d));
  int v = d < kMaxDevices ? sms[d].load(std::memory_order_relaxed) : 0;
  if (v) return v;
  SC_CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, d));
  if (d < kMaxDevices) sms[d].store(v, std::memory_order_relaxed);
  return v;
}

}  // namespace topk
}  // namespace sc
