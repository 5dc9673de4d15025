// DSOP bad input: every documented error, detected before the first message
// (so every rank reports it on its own and the communicator stays usable).
#include <cstdint>

#include "common/harness.h"
#include "dsop_util.h"

using namespace dsoptest;

namespace {

std::vector<int> ranks() {
  if (sctest::mode() == sctest::Mode::Mpi) return {sctest::mpiWorldSize()};
  return {1, 3};
}

void expectError(scComm_t comm, scResult_t got, scResult_t want, const char* needle) {
  EXPECT_EQ(got, want) << scGetErrorString(got) << ": " << scGetLastError(comm);
  EXPECT_NE(std::string(scGetLastError(comm)).find(needle), std::string::npos)
      << "message '" << scGetLastError(comm) << "' lacks '" << needle << "'";
}

// A correct call afterwards proves the communicator was not aborted.
void expectUsable(scComm_t comm, int rank, int P) {
  const size_t n = 5, m = 3;
  const auto a = encode(vecA(rank, n), scFloat32), b = encode(vecB(rank, m), scFloat32);
  std::vector<float> G(n * m);
  SC_OK(comm, scDsop(a.data(), n, b.data(), m, G.data(), scFloat32, scDsopGRabenseifner, comm, nullptr));
  EXPECT_EQ(compare(decodeOut(G.data(), n * m, scFloat32), reference(P, n, m), m), "");
}

}  // namespace

TEST(DsopErrors, BadArguments) {
  for (int P : ranks()) {
    sctest::run(P, [&](scComm_t comm, int rank) {
      float a[8] = {1}, b[8] = {1}, G[64] = {0};
      const auto A = scDsopAllScatter;
      expectError(comm, scDsop(a, 0, b, 4, G, scFloat32, A, comm, nullptr), scInvalidArgument, "n >= 1");
      expectError(comm, scDsop(a, 4, b, 0, G, scFloat32, A, comm, nullptr), scInvalidArgument, "m >= 1");
      expectError(comm, scDsop(nullptr, 4, b, 4, G, scFloat32, A, comm, nullptr), scInvalidArgument, "a is NULL");
      expectError(comm, scDsop(a, 4, nullptr, 4, G, scFloat32, A, comm, nullptr), scInvalidArgument, "b is NULL");
      expectError(comm, scDsop(a, 4, b, 4, nullptr, scFloat32, A, comm, nullptr), scInvalidArgument, "G is NULL");
      expectError(comm, scDsop(a, 4, b, 4, G, scInt32, A, comm, nullptr), scInvalidArgument, "not int");
      expectError(comm, scDsop(a, 4, b, 4, G, scUint8, A, comm, nullptr), scInvalidArgument, "DSOP supports");
      expectError(comm, scDsop(a, 4, b, 4, G, scDataType_t(77), A, comm, nullptr), scInvalidArgument,
                  "unknown data type");
      expectError(comm, scDsop(a, 4, b, 4, G, scFloat32, scDsopAlgo_t(17), comm, nullptr), scInvalidArgument,
                  "unknown DSOP algorithm");
      expectError(comm, scDsop(a, 4, b, 4, G, scFloat32, scDsopAlgo_t(-1), comm, nullptr), scInvalidArgument,
                  "unknown DSOP algorithm");
      // n*m*sizeof overflows size_t (no allocation is attempted).
      expectError(comm, scDsop(a, SIZE_MAX / 2, b, 3, G, scFloat32, A, comm, nullptr), scInvalidArgument, "overflows");
      expectError(comm, scDsop(a, size_t(1) << 32, b, size_t(1) << 31, G, scFloat64, A, comm, nullptr),
                  scInvalidArgument, "overflows");
      // n*m fits, but P*(n+m) gathered elements do not.
      expectError(comm, scDsop(a, 1, b, SIZE_MAX / 4, G, scFloat32, A, comm, nullptr), scInvalidArgument, "overflow");
      int dummy;
      expectError(comm, scDsop(a, 4, b, 4, G, scFloat32, A, comm, &dummy), scInvalidArgument, "stream must be NULL");
      expectError(comm, scDsop(a, 4, b, 2, a + 1, scFloat32, A, comm, nullptr), scInvalidArgument, "overlaps");
      expectError(comm, scDsop(a, 2, b, 4, b, scFloat32, A, comm, nullptr), scInvalidArgument, "overlaps");
      scDsopAlgo_t out;
      expectError(comm, scDsopAlgoFor(comm, 0, 3, scFloat32, &out), scInvalidArgument, "n >= 1");
      expectError(comm, scDsopAlgoFor(comm, 3, 3, scInt64, &out), scInvalidArgument, "DSOP supports");
      expectError(comm, scDsopAlgoFor(comm, 3, 3, scFloat32, nullptr), scInvalidArgument, "NULL");
      expectUsable(comm, rank, P);
    });
  }
}

TEST(DsopErrors, SparseBadArguments) {
  for (int P : ranks()) {
    sctest::run(P, [&](scComm_t comm, int rank) {
      const uint64_t good[3] = {1, 4, 6}, unsorted[3] = {4, 1, 6}, dup[3] = {1, 4, 4}, big[2] = {3, 10};
      const float v[3] = {1, 2, 3};
      float G[100] = {0};
      const auto A = scDsopGRabenseifner;
      expectError(comm, scDsopSparse(unsorted, v, 3, 10, good, v, 3, 10, G, scFloat32, A, comm, nullptr),
                  scInvalidArgument, "strictly increasing");
      expectError(comm, scDsopSparse(good, v, 3, 10, dup, v, 3, 10, G, scFloat32, A, comm, nullptr), scInvalidArgument,
                  "strictly increasing");
      expectError(comm, scDsopSparse(big, v, 2, 10, good, v, 3, 10, G, scFloat32, A, comm, nullptr), scInvalidArgument,
                  "below 10");
      expectError(comm, scDsopSparse(good, v, 3, 2, good, v, 3, 10, G, scFloat32, A, comm, nullptr), scInvalidArgument,
                  "more non-zeros");
      expectError(comm, scDsopSparse(nullptr, v, 3, 10, good, v, 3, 10, G, scFloat32, A, comm, nullptr),
                  scInvalidArgument, "NULL");
      expectError(comm, scDsopSparse(good, nullptr, 3, 10, good, v, 3, 10, G, scFloat32, A, comm, nullptr),
                  scInvalidArgument, "NULL");
      expectError(comm, scDsopSparse(good, v, 3, 10, good, v, 3, 10, G, scFloat32, scDsopAllScatter, comm, nullptr),
                  scInvalidArgument, "not available for sparse");
      expectError(comm, scDsopSparse(good, v, 3, 10, good, v, 3, 10, G, scInt32, A, comm, nullptr), scInvalidArgument,
                  "DSOP supports");
      expectError(comm, scDsopSparse(good, v, 3, 0, good, v, 3, 10, G, scFloat32, A, comm, nullptr), scInvalidArgument,
                  "n >= 1");
      expectError(comm, scDsopSparse(good, v, 3, 10, good, v, 3, 10, nullptr, scFloat32, A, comm, nullptr),
                  scInvalidArgument, "G is NULL");
      expectError(comm, scDsopSparse(good, G + 50, 3, 10, good, v, 3, 10, G, scFloat32, A, comm, nullptr),
                  scInvalidArgument, "overlaps");
      expectUsable(comm, rank, P);
    });
  }
}

TEST(DsopErrors, NullCommunicator) {
  float a[2] = {1, 2}, b[2] = {3, 4}, G[4];
  EXPECT_EQ(scDsop(a, 2, b, 2, G, scFloat32, scDsopAuto, nullptr, nullptr), scInvalidArgument);
  EXPECT_NE(std::string(scGetLastError(nullptr)).find("communicator is NULL"), std::string::npos);
  EXPECT_EQ(scDsopSparse(nullptr, nullptr, 0, 2, nullptr, nullptr, 0, 2, G, scFloat32, scDsopAuto, nullptr, nullptr),
            scInvalidArgument);
}
