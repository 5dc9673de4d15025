// A transport's CUDA events of one device, reused (the local and nccl
// transports). An event may be recorded again as soon as every wait on it
// has been enqueued: a stream's wait follows the record that preceded it,
// not later ones. So a run of calls of one shape creates no event after its
// first call (scStats_t.eventsCreated), where an event per message cost a
// create and a destroy each. The runtime calls are the local transport's
// ToolkitFns (local/device.h), which every CUDA build provides.
#pragma once

#include <mutex>
#include <vector>

#include "transport/local/device.h"
#include "transport/transport.h"

namespace sc {

class EventPool {
 public:
  explicit EventPool(int device) : device_(device) {}
  ~EventPool() {
    for (void* e : free_) localdev::destroyEvent(e);
  }
  EventPool(const EventPool&) = delete;
  EventPool& operator=(const EventPool&) = delete;

  // An event marking `stream`'s current point; a new one is counted in
  // `owner`'s stats. Called by the owning rank's thread, or for it while it
  // waits in a meeting (the planned call's executor: local/plan_call.cpp).
  void* record(void* stream, Transport& owner) {
    void* ev = nullptr;
    {
      std::lock_guard<std::mutex> lk(m_);
      if (!free_.empty()) {
        ev = free_.back();
        free_.pop_back();
      }
    }
    if (!ev) {
      ev = localdev::createEvent(device_);
      owner.countEventCreated();
    }
    try {
      localdev::recordEvent(device_, stream, ev);
    } catch (...) {
      put(ev);
      throw;
    }
    return ev;
  }
  // Gives an event back once every wait on it has been enqueued; any thread.
  void put(void* ev) noexcept {
    if (!ev) return;
    try {
      std::lock_guard<std::mutex> lk(m_);
      free_.push_back(ev);
    } catch (...) {
      localdev::destroyEvent(ev);
    }
  }

 private:
  const int device_;
  std::mutex m_;
  std::vector<void*> free_;
};

}  // namespace sc
