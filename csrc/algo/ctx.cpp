#include "algo/ctx.h"

namespace sc {

std::unique_ptr<Round> Ctx::post(std::vector<P2POp> ops) {
  ops.erase(std::remove_if(ops.begin(), ops.end(), [](const P2POp& o) { return o.bytes == 0 || o.peer < 0; }),
            ops.end());
  for (const auto& o : ops) {
    if (o.kind == P2POp::Recv) {
      comm.stats.bytesRecv += o.bytes;
      comm.stats.msgsRecv++;
      continue;
    }
    comm.stats.bytesSent += o.bytes;
    comm.stats.msgsSent++;
    if (nodeOf && (*nodeOf)[size_t(o.peer)] != (*nodeOf)[size_t(rank)]) {
      comm.stats.interNodeBytesSent += o.bytes;
      comm.stats.interNodeMsgsSent++;
    }
  }
  return comm.transport->post(ops, stream, dl);
}

}  // namespace sc
