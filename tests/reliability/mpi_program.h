// The reliability suite's standalone MPI programs (killed_rank.cpp,
// after_finalize.cpp), which CTest judges by what they print: a failure is a
// line "<program>: rank R: FAIL: <why>" on stderr.
#pragma once

#include <mpi.h>

#include <cstdio>
#include <string>

namespace reltest {

// Initializes MPI; the world's rank and size.
struct MpiProgram {
  const char* name;
  int rank = 0, size = 0;
  MpiProgram(const char* program, int* argc, char*** argv) : name(program) {
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
  }
  // Prints the failure line; returns the exit status for it.
  int fail(const std::string& what) const {
    std::fprintf(stderr, "%s: rank %d: FAIL: %s\n", name, rank, what.c_str());
    std::fflush(stderr);
    return 1;
  }
};

}  // namespace reltest
