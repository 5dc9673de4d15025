// Constructors of communicators per transport. Each lives beside its transport;
// builds without MPI / NCCL get versions that fail with a clear message.
#pragma once

#include <memory>
#include <vector>

#include "core/comm.h"

namespace sc {

std::unique_ptr<scComm> makeMpiComm(const void* mpiComm, const Config& cfg);
std::unique_ptr<scComm> makeNcclComm(const void* mpiComm, const Config& cfg);
std::vector<std::unique_ptr<scComm>> makeLocalComms(int nranks, const int* devices, const Config& cfg);

}  // namespace sc
