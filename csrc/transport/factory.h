// Constructors of communicators per transport. Each lives beside its transport;
// builds without MPI / NCCL get versions that fail with a clear message
// (factory_fallback.cpp).
#pragma once

#include <memory>
#include <vector>

#include "core/comm.h"

namespace sc {

std::unique_ptr<scComm> makeMpiComm(const void* mpiComm, const Config& cfg);
// nccl transport bootstrapped over MPI (needs NCCL and MPI: nccl_bootstrap_nccl_mpi.cpp).
std::unique_ptr<scComm> makeNcclComm(const void* mpiComm, const Config& cfg);
// nccl transport from a unique id (needs NCCL only: nccl_nccl.cpp). Arguments
// are validated by the caller (api_comm.cpp).
void makeNcclUniqueId(scUniqueId* id);
std::unique_ptr<scComm> makeNcclCommFromId(int nranks, const scUniqueId& id, int rank, const Config& cfg);
std::vector<std::unique_ptr<scComm>> makeLocalComms(int nranks, const int* devices, const Config& cfg);

}  // namespace sc
