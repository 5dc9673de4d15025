#include "core/error.h"

#include <cstring>

namespace sc {

std::string Error::format(const std::string& msg, const char* file, int line) {
  // Keep the path relative to the source tree: "csrc/algo/ring.cpp:42".
  const char* rel = std::strstr(file, "csrc/");
  if (!rel) rel = std::strstr(file, "kernels/");
  return cat(msg, " (", rel ? rel : file, ":", line, ")");
}

}  // namespace sc

extern "C" const char* scGetErrorString(scResult_t r) {
  switch (r) {
    case scSuccess: return "success";
    case scInvalidArgument: return "invalid argument";
    case scInvalidUsage: return "invalid usage";
    case scSystemError: return "system error";
    case scCudaError: return "CUDA error";
    case scNcclError: return "NCCL error";
    case scMpiError: return "MPI error";
    case scTimeout: return "timeout";
    case scRemoteError: return "remote error";
    case scInternalError: return "internal error";
    case scInterrupted: return "interrupted";
    default: return "unknown result code";
  }
}

extern "C" void scGetVersion(int* major, int* minor, int* patch) {
  if (major) *major = SPARCOLL_VERSION_MAJOR;
  if (minor) *minor = SPARCOLL_VERSION_MINOR;
  if (patch) *patch = SPARCOLL_VERSION_PATCH;
}
