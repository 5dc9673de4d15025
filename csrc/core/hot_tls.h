// Thread-local variables that every call reads (a round's spare memory, the
// last topology looked up, the last communicator entered).
//
// In a shared library the default TLS model (global-dynamic) makes each
// access a call to __tls_get_addr: about 16 instructions, and two accesses
// for a variable with a destructor (its guard, then itself), some 80
// instructions of a 2,300-instruction small neighbour allgather (measured
// with callgrind). initial-exec is one load relative to the thread pointer.
// It takes its bytes from the static TLS block that glibc sizes with a
// surplus for libraries loaded later (dlopen, as Python's import does), so it
// is kept to a few small variables: 49 bytes in all.
#pragma once

#if defined(__GNUC__) && !defined(__CUDACC__)
#define SC_HOT_TLS __attribute__((tls_model("initial-exec")))
#else
#define SC_HOT_TLS
#endif
