// Communicator constructors for transports this build does not have.
#include "core/error.h"
#include "transport/factory.h"

namespace sc {

#ifndef SPARCOLL_HAVE_MPI
std::unique_ptr<scComm> makeMpiComm(const void*, const Config&) {
  SC_THROW(scInvalidUsage, "this sparcoll was built without MPI (SPARCOLL_MPI=OFF or MPI not found)");
}
#endif

#ifndef SPARCOLL_HAVE_NCCL
std::unique_ptr<scComm> makeNcclComm(const void*, const Config&) {
  SC_THROW(scInvalidUsage, "this sparcoll was built without NCCL (needs SPARCOLL_CUDA, SPARCOLL_MPI and NCCL)");
}
#endif

}  // namespace sc
