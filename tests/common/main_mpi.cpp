// gtest main for the *_mpi binaries: every rank runs every test; only rank 0
// prints the per-test lines, but any rank's failure fails the process (and so
// mpirun and CTest).
#include <gtest/gtest.h>
#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    auto& listeners = testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int rc = RUN_ALL_TESTS();
  int any = rc, all = 0;
  MPI_Allreduce(&any, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rc != 0) fprintf(stderr, "rank %d: tests FAILED\n", rank);
  MPI_Finalize();
  return all;
}
