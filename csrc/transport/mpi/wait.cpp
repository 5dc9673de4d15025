#include "transport/mpi/wait.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "core/error.h"
#include "transport/mpi/util.h"

namespace sc {

std::string idText(uint64_t id) {
  char b[kIdChars + 1];
  std::snprintf(b, sizeof b, "%016llx|", static_cast<unsigned long long>(id));
  return b;
}

namespace {

// Receives the next abort notice that reached ctl, if any: its sender and text.
bool takeAbortNotice(MPI_Comm ctl, int* from, std::string* why) {
  int flag = 0;
  MPI_Status st;
  if (ctl == MPI_COMM_NULL || MPI_Iprobe(MPI_ANY_SOURCE, kAbortTag, ctl, &flag, &st) != MPI_SUCCESS || !flag)
    return false;
  int n = 0;
  MPI_Get_count(&st, MPI_CHAR, &n);
  why->assign(size_t(std::max(n, 0)), '\0');
  MPI_Recv(why->data(), n, MPI_CHAR, st.MPI_SOURCE, kAbortTag, ctl, MPI_STATUS_IGNORE);
  *from = st.MPI_SOURCE;
  return true;
}

}  // namespace

void checkAbortNotice(MPI_Comm ctl, uint64_t id) {
  int from = -1;
  std::string why;
  if (!takeAbortNotice(ctl, &from, &why)) return;
  if (why.compare(0, kIdChars, idText(id)) != 0) return;  // another communicator's
  SC_THROW(scRemoteError, "rank ", from, " aborted the communicator: ", why.substr(kIdChars));
}

bool drainAbortNotices(MPI_Comm ctl, std::vector<MPI_Request>& sent, double quiet, const Deadline& dl) {
  int done = sent.empty();
  auto lastSeen = Clock::now();
  int from = -1;
  std::string sink;
  for (;;) {
    while (takeAbortNotice(ctl, &from, &sink)) lastSeen = Clock::now();
    if (!done && MPI_Testall(int(sent.size()), sent.data(), &done, MPI_STATUSES_IGNORE) != MPI_SUCCESS) return false;
    const auto now = Clock::now();
    if (done && std::chrono::duration<double>(now - lastSeen).count() >= quiet) return true;
    if (dl.passedAt(now)) return done != 0;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

// A nonblocking collective's request (MPI_Ibarrier, MPI_Iallreduce...), which
// MPI does not let us cancel (MPI-3.1 §5.12): on timeout it stays with the
// communicator, which is then aborted and not freed.
//
// Open MPI (4.1) reports an error in a nonblocking collective's schedule (a
// peer's mismatched count truncating a message) through MPI_COMM_WORLD's
// error handler, fatal by default, not through the communicator's: while
// this waits, MPI_COMM_WORLD's handler returns instead (and is restored),
// so a peer's mistake becomes scMpiError here rather than aborting the job.
void waitCollective(MPI_Request& req, const Deadline& dl, const char* what, bool* pending, MPI_Comm ctl, uint64_t id) {
  struct WorldReturns {
    MPI_Errhandler old = MPI_ERRHANDLER_NULL;
    WorldReturns() {
      MPI_Comm_get_errhandler(MPI_COMM_WORLD, &old);
      MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    }
    ~WorldReturns() {
      MPI_Comm_set_errhandler(MPI_COMM_WORLD, old);
      MPI_Errhandler_free(&old);
    }
  } returns;
  int flag = 0;
  *pending = true;
  unsigned polls = 0;
  const bool ok = pollUntil(dl, [&] {
    mpiCheck(MPI_Test(&req, &flag, MPI_STATUS_IGNORE), what);
    if (!flag && ctl != MPI_COMM_NULL && ++polls % 16 == 0) checkAbortNotice(ctl, id);
    return flag != 0;
  });
  if (!ok)
    SC_THROW(scTimeout, "deadline of ", dl.seconds, " s expired in ", what,
             " (a peer never joined; MPI cannot name which)");
  *pending = false;
}

}  // namespace sc
