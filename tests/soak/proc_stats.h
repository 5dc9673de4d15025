// Process resource readings for the soak and churn tests: resident memory,
// open file descriptors and the heap bytes malloc has handed out. Read from
// /proc and glibc at the moment of the call; they are meant to be compared
// over time within one process (a leak shows as steady growth).
#pragma once

#include <cstdint>

namespace soak {

// VmRSS of this process in KiB (/proc/self/status), -1 when unreadable.
long rssKiB();
// Open file descriptors (entries of /proc/self/fd, not counting the one used
// to list them), -1 when unreadable.
int openFds();
// Bytes currently allocated through malloc over all arenas (glibc mallinfo2),
// -1 where the allocator does not report it (e.g. under AddressSanitizer,
// whose allocator answers zeros).
long long heapInUse();

}  // namespace soak
