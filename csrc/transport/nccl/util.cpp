#include "transport/nccl/util.h"

#include <sched.h>

#include <chrono>
#include <thread>

namespace sc {
namespace {

std::string lastError(ncclComm_t comm) {
  const char* s = ncclGetLastError(comm);
  return s && *s ? std::string(" (") + s + ")" : std::string();
}

}  // namespace

void pollBackoff(int i) {
  if (i < 64) return;
  if (i < 1024) sched_yield();
  else std::this_thread::sleep_for(std::chrono::microseconds(50));
}

void ncclCheck(ncclResult_t rc, ncclComm_t comm, const char* what, const char* file, int line) {
  if (rc == ncclSuccess) return;
  throw Error(scNcclError, cat(what, " failed: ", ncclGetErrorString(rc), lastError(comm)), file, line);
}

void ncclComplete(ncclResult_t rc, ncclComm_t comm, const Deadline& dl, const char* what) {
  for (int i = 0; rc == ncclInProgress; ++i) {
    if (dl.expired())
      SC_THROW(scTimeout, "deadline of ", dl.seconds, " s expired while NCCL was still completing ", what,
               " (a peer may not have joined)");
    pollBackoff(i);
    ncclResult_t st = ncclSuccess;
    const ncclResult_t q = ncclCommGetAsyncError(comm, &st);
    rc = q != ncclSuccess ? q : st;
  }
  ncclCheck(rc, comm, what, __FILE__, __LINE__);
}

void ncclCheckAsync(ncclComm_t comm, const char* what) {
  ncclResult_t st = ncclSuccess;
  SC_NCCL_CHECK(comm, ncclCommGetAsyncError(comm, &st));
  if (st != ncclSuccess && st != ncclInProgress)
    SC_THROW(scNcclError, "NCCL reported an asynchronous error during ", what, ": ", ncclGetErrorString(st),
             lastError(comm));
}

ncclDataType_t ncclTypeOf(scDataType_t dt) {
  switch (dt) {
    case scInt8: return ncclInt8;
    case scUint8: return ncclUint8;
    case scInt32: return ncclInt32;
    case scUint32: return ncclUint32;
    case scInt64: return ncclInt64;
    case scUint64: return ncclUint64;
    case scFloat16: return ncclFloat16;
    case scFloat32: return ncclFloat32;
    case scFloat64: return ncclFloat64;
    case scBfloat16: return ncclBfloat16;
    default: SC_THROW(scInvalidArgument, "unknown data type ", int(dt));
  }
}

ncclRedOp_t ncclOpOf(scRedOp_t op) {
  switch (op) {
    case scSum: return ncclSum;
    case scProd: return ncclProd;
    case scMax: return ncclMax;
    case scMin: return ncclMin;
    case scAvg: return ncclAvg;
    default: SC_THROW(scInvalidArgument, "unknown reduction op ", int(op));
  }
}

}  // namespace sc
