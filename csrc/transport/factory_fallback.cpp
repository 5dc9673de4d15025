// Communicator constructors for transports this build does not have. The NCCL
// bootstrap over MPI needs both libraries, so a build with NCCL but without MPI
// points to the MPI-free way (scGetUniqueId / scCommInitRank).
#include "core/error.h"
#include "transport/factory.h"

namespace sc {

#ifndef SPARCOLL_HAVE_MPI
std::unique_ptr<scComm> makeMpiComm(const void*, const Config&) {
  SC_THROW(scInvalidUsage, "this sparcoll was built without MPI (SPARCOLL_MPI=OFF or MPI not found)");
}
#endif

#ifndef SPARCOLL_HAVE_NCCL
#define SC_NO_NCCL "this sparcoll was built without NCCL (needs SPARCOLL_CUDA and the NCCL library)"
std::unique_ptr<scComm> makeNcclComm(const void*, const Config&) { SC_THROW(scInvalidUsage, SC_NO_NCCL); }
void makeNcclUniqueId(scUniqueId*) { SC_THROW(scInvalidUsage, SC_NO_NCCL, ": scGetUniqueId is unavailable"); }
std::unique_ptr<scComm> makeNcclCommFromId(int, const scUniqueId&, int, const Config&) {
  SC_THROW(scInvalidUsage, SC_NO_NCCL, ": scCommInitRank is unavailable");
}
#elif !defined(SPARCOLL_HAVE_MPI)
std::unique_ptr<scComm> makeNcclComm(const void*, const Config&) {
  SC_THROW(scInvalidUsage,
           "this sparcoll was built without MPI, so scCommInitMpi cannot bootstrap NCCL; "
           "use scGetUniqueId + scCommInitRank instead");
}
#endif

}  // namespace sc
