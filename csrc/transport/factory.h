// Constructors of communicators per transport. Each is a ToolkitFn
// (core/toolkit.h): the transport's directory (transport/mpi/, transport/nccl/,
// transport/nccl_mpi/) provides it; a build without that toolkit answers with
// the "built without" error of factory.cpp. The local transport needs no
// toolkit (transport/local/).
#pragma once

#include <memory>
#include <vector>

#include "core/comm.h"
#include "core/error.h"
#include "core/toolkit.h"

namespace sc {

// mpi transport (transport/mpi/).
extern ToolkitFn<std::unique_ptr<scComm>(const void* mpiComm, const Config& cfg)> makeMpiComm;
// scCommInitMpi's first step (transport/mpi/agree.cpp), before anything every
// rank must join: the ranks of the MPI communicator exchange their resolved
// configuration (cfg; NULL where resolving it failed, with the failure in
// *failure) in one step bounded by `timeout` (at least 10 s), so that a rank whose settings
// differ or failed makes every rank fail, naming it and the setting, instead
// of leaving the others blocked in MPI's own creation calls. Throws: the
// rank's own failure, scRemoteError for another's, scInvalidUsage for
// settings that differ, scTimeout. Without MPI it does nothing.
extern ToolkitFn<void(const void* mpiComm, const Config* cfg, const Error* failure, double timeout)> agreeOverMpi;
// nccl transport bootstrapped over MPI (needs NCCL and MPI: transport/nccl_mpi/).
extern ToolkitFn<std::unique_ptr<scComm>(const void* mpiComm, const Config& cfg)> makeNcclComm;
// nccl transport from a unique id (needs NCCL only: transport/nccl/). Arguments
// are validated by the caller (api_comm.cpp).
extern ToolkitFn<void(scUniqueId* id)> makeNcclUniqueId;
extern ToolkitFn<std::unique_ptr<scComm>(int nranks, const scUniqueId& id, int rank, const Config& cfg)>
    makeNcclCommFromId;

std::vector<std::unique_ptr<scComm>> makeLocalComms(int nranks, const int* devices, const Config& cfg);

}  // namespace sc
