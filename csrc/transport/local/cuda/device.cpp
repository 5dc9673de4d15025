// CUDA side of the local transport on device buffers (transport/local/transport.cpp):
// events (pooled: transport/event_pool.h) order a receiver's copy (on
// the transport's own stream) after the sender's stream reached the send, and
// the sender's stream after the copy. A copy between two devices goes peer to
// peer when the hardware allows it; peer access is enabled once per ordered
// pair. And the one-device direct collective's launch (kern::direct).
#include <cuda_runtime_api.h>

#include <map>
#include <mutex>
#include <set>
#include <utility>

#include "core/cuda_util.h"
#include "reduce.cuh"
#include "transport/local/device.h"

namespace sc::localdev {
namespace {

cudaStream_t asStream(void* s) { return static_cast<cudaStream_t>(s); }

// Lets `device` access memory of `peer` directly (cudaMemcpyDefault then
// copies over NVLink/PCIe peer to peer instead of staging through the host).
// Best effort: where the hardware cannot, the copy still works, staged. Asked
// once per ordered pair of devices.
void enablePeer(int device, int peer) {
  if (peer < 0 || peer == device) return;
  static std::mutex m;
  static std::set<std::pair<int, int>> tried;
  std::lock_guard<std::mutex> lk(m);
  if (!tried.insert({device, peer}).second) return;
  int can = 0;
  SC_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, device, peer));
  if (!can) return;
  const cudaError_t rc = cudaDeviceEnablePeerAccess(peer, 0);  // current device is `device`
  if (rc == cudaErrorPeerAccessAlreadyEnabled) (void)cudaGetLastError();
  else SC_CUDA_CHECK(rc);
}

void* newEvent(int device) {
  DeviceScope on(device);
  cudaEvent_t ev = nullptr;
  SC_CUDA_CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  return ev;
}

void record(int device, void* stream, void* ev) {
  DeviceScope on(device);
  SC_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(ev), asStream(stream)));
}

void waitFor(int device, void* stream, void* ev) {
  DeviceScope on(device);
  SC_CUDA_CHECK(cudaStreamWaitEvent(asStream(stream), static_cast<cudaEvent_t>(ev), 0));
}

// Safe while the event is pending: CUDA releases it once it completes.
void destroy(void* ev) noexcept {
  if (ev && cudaEventDestroy(static_cast<cudaEvent_t>(ev)) != cudaSuccess) (void)cudaGetLastError();
}

void copy(int device, void* dst, const void* src, int srcDevice, size_t bytes, void* stream) {
  if (bytes == 0 || dst == src) return;
  DeviceScope on(device);
  enablePeer(device, srcDevice);
  SC_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, asStream(stream)));
}

void* newStream(int device) {
  DeviceScope on(device);
  cudaStream_t s = nullptr;
  SC_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  return s;
}

void dropStream(void* s) noexcept {
  if (s && cudaStreamDestroy(asStream(s)) != cudaSuccess) (void)cudaGetLastError();
}

// Multiprocessors of `device`, asked once: they size the direct kernel's grid.
int smCount(int device) {
  static std::mutex m;
  static std::map<int, int> known;
  std::lock_guard<std::mutex> lk(m);
  auto it = known.find(device);
  if (it != known.end()) return it->second;
  int n = 1;
  SC_CUDA_CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device));
  return known[device] = n;
}

void runDirect(int device, const DirectSpec& spec, void* stream) {
  DeviceScope on(device);
  SC_CUDA_CHECK(kern::direct(spec, asStream(stream), smCount(device)));
}

}  // namespace

SC_PROVIDE(direct, runDirect);
SC_PROVIDE(createStream, newStream);
SC_PROVIDE(destroyStream, dropStream);
SC_PROVIDE(createEvent, newEvent);
SC_PROVIDE(recordEvent, record);
SC_PROVIDE(streamWait, waitFor);
SC_PROVIDE(destroyEvent, destroy);
SC_PROVIDE(copyAsync, copy);

}  // namespace sc::localdev
