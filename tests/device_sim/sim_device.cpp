#include "sim_device.h"

#include <atomic>
#include <cstring>
#include <memory>

#include "backend/backend.h"
#include "core/error.h"
#include "sparse/ops.h"
#include "transport/local/device.h"
#include "transport/local/direct.h"

namespace simdev {
namespace {

std::atomic<int64_t> events{0}, streams{0}, nRecords{0}, nWaits{0}, nCopies{0}, nDirects{0};

// A handle the simulation can tell apart from null; its value is never read.
struct Token {
  int device;
};

void* newEvent(int device) {
  ++events;
  return new Token{device};
}
void record(int, void* stream, void* ev) {
  if (!stream || !ev) SC_THROW(scInternalError, "simulated device: record of a null stream or event");
  ++nRecords;
}
void waitFor(int, void* stream, void* ev) {
  if (!stream || !ev) SC_THROW(scInternalError, "simulated device: wait with a null stream or event");
  ++nWaits;
}
void destroyEvent(void* ev) {
  if (!ev) return;
  --events;
  delete static_cast<Token*>(ev);
}
void copy(int, void* dst, const void* src, int, size_t bytes, void*) {
  ++nCopies;
  if (bytes && dst != src) std::memmove(dst, src, bytes);
}
// The direct kernel's specification itself: the CPU tests check its math.
void direct(int, const sc::DirectSpec& spec, void* stream) {
  if (!stream) SC_THROW(scInternalError, "simulated device: direct call on a null stream");
  ++nDirects;
  sc::directHost(spec);
}
void* newStream(int device) {
  ++streams;
  return new Token{device};
}
void dropStream(void* s) {
  if (!s) return;
  --streams;
  delete static_cast<Token*>(s);
}

// The CPU backend standing in for a device: the same arithmetic (the CPU
// reference is the kernels' specification), device memory by its own word.
class SimBackend final : public sc::Backend {
 public:
  sc::Mem mem() const override { return sc::Mem::Device; }
  void reduce(void* dst, const void* a, const void* b, size_t n, scDataType_t dt, scRedOp_t op, void* s) override {
    cpu_->reduce(dst, a, b, n, dt, op, s);
  }
  void divide(void* buf, size_t n, scDataType_t dt, int divisor, void* s) override {
    cpu_->divide(buf, n, dt, divisor, s);
  }
  void copy(void* dst, const void* src, size_t bytes, void* s) override { cpu_->copy(dst, src, bytes, s); }
  void zero(void* dst, size_t bytes, void* s) override { cpu_->zero(dst, bytes, s); }
  void* alloc(size_t bytes) override { return cpu_->alloc(bytes); }
  void release(void* p) noexcept override { cpu_->release(p); }
  // Stream-ordered like a device's pool: no wait for the stream.
  void releaseOn(void* p, void*, const sc::Deadline&) override { cpu_->release(p); }
  void sync(void*, const sc::Deadline&) override {}
  void checkPointer(const void*, const char*) const override {}

 private:
  std::unique_ptr<sc::Backend> cpu_ = sc::makeCpuBackend();
};

std::unique_ptr<sc::Backend> simBackend(int) { return std::make_unique<SimBackend>(); }
std::unique_ptr<sc::sp::SparseOps> simOps(scIndexType_t it, scDataType_t vt, const sc::sp::OpsEnv& env) {
  return sc::sp::makeCpuOps(it, vt, env);
}

[[maybe_unused]] const bool installed = [] {
  sc::makeCudaBackend.provide(simBackend);
  sc::sp::makeCudaOps.provide(simOps);
  sc::localdev::createEvent.provide(newEvent);
  sc::localdev::recordEvent.provide(record);
  sc::localdev::streamWait.provide(waitFor);
  sc::localdev::destroyEvent.provide(destroyEvent);
  sc::localdev::copyAsync.provide(copy);
  sc::localdev::createStream.provide(newStream);
  sc::localdev::destroyStream.provide(dropStream);
  sc::localdev::direct.provide(direct);
  return true;
}();

}  // namespace

int64_t liveEvents() { return events; }
int64_t liveStreams() { return streams; }
int64_t records() { return nRecords; }
int64_t waits() { return nWaits; }
int64_t copies() { return nCopies; }
int64_t directs() { return nDirects; }
void* stream() {
  static Token s{0};
  return &s;
}

}  // namespace simdev
