// The communicator constructors that need a toolkit, as this build has them:
// each starts out failing with a clear message and is replaced by its
// transport's directory when that is compiled in (SC_PROVIDE). The NCCL
// bootstrap over MPI needs both libraries, so a build with NCCL but without
// MPI points to the MPI-free way (scGetUniqueId / scCommInitRank).
#include "transport/factory.h"

#include "core/error.h"

namespace sc {
namespace {

#define SC_NO_NCCL "this sparcoll was built without NCCL (needs SPARCOLL_CUDA and the NCCL library)"

std::unique_ptr<scComm> noMpiComm(const void*, const Config&) {
  SC_THROW(scInvalidUsage, "this sparcoll was built without MPI (SPARCOLL_MPI=OFF or MPI not found)");
}

std::unique_ptr<scComm> noNcclComm(const void*, const Config&) {
  if (makeNcclUniqueId.provided())
    SC_THROW(scInvalidUsage,
             "this sparcoll was built without MPI, so scCommInitMpi cannot bootstrap NCCL; "
             "use scGetUniqueId + scCommInitRank instead");
  SC_THROW(scInvalidUsage, SC_NO_NCCL);
}

void noNcclUniqueId(scUniqueId*) { SC_THROW(scInvalidUsage, SC_NO_NCCL, ": scGetUniqueId is unavailable"); }

std::unique_ptr<scComm> noNcclCommFromId(int, const scUniqueId&, int, const Config&) {
  SC_THROW(scInvalidUsage, SC_NO_NCCL, ": scCommInitRank is unavailable");
}

void noAgreement(const void*, const Config*, const Error*, double) {}

}  // namespace

ToolkitFn<void(const void*, const Config*, const Error*, double)> agreeOverMpi{noAgreement};
ToolkitFn<std::unique_ptr<scComm>(const void*, const Config&)> makeMpiComm{noMpiComm};
ToolkitFn<std::unique_ptr<scComm>(const void*, const Config&)> makeNcclComm{noNcclComm};
ToolkitFn<void(scUniqueId*)> makeNcclUniqueId{noNcclUniqueId};
ToolkitFn<std::unique_ptr<scComm>(int, const scUniqueId&, int, const Config&)> makeNcclCommFromId{noNcclCommFromId};

}  // namespace sc
