// NCCL helpers for the NCCL transport (and any area that calls NCCL itself):
// error checking with NCCL's own detail, waiting on a nonblocking
// communicator with a deadline, and the mapping of sparcoll types/ops.
#pragma once

#include <nccl.h>

#include "core/deadline.h"
#include "core/dtype.h"

namespace sc {

// Throws sc::Error(scNcclError) with ncclGetErrorString(rc) and
// ncclGetLastError(comm) (comm may be null) unless rc is ncclSuccess.
void ncclCheck(ncclResult_t rc, ncclComm_t comm, const char* what, const char* file, int line);
#define SC_NCCL_CHECK(comm, expr) ::sc::ncclCheck((expr), (comm), #expr, __FILE__, __LINE__)

// Completes a call on a nonblocking communicator (config.blocking = 0): when
// `rc` is ncclInProgress, polls ncclCommGetAsyncError until the communicator
// leaves that state. Throws scNcclError on any NCCL error and scTimeout when
// the deadline expires first (the caller's error path then aborts the comm).
void ncclComplete(ncclResult_t rc, ncclComm_t comm, const Deadline& dl, const char* what);
#define SC_NCCL_CALL(comm, dl, expr) ::sc::ncclComplete((expr), (comm), (dl), #expr)

// Throws scNcclError when the communicator reports an asynchronous error
// (a failed peer, a network error, an abort). Cheap; call between operations.
void ncclCheckAsync(ncclComm_t comm, const char* what);

ncclDataType_t ncclTypeOf(scDataType_t dt);
ncclRedOp_t ncclOpOf(scRedOp_t op);  // scAvg -> ncclAvg

// Pause number i of a polling loop: spin, then yield, then sleep. Waits are
// usually short, but ranks may be oversubscribed and must let their peers run.
void pollBackoff(int i);

}  // namespace sc
