/* The README's C example: 4 ranks as threads, ring allreduce of host buffers. */
#include <pthread.h>
#include <stdio.h>
#include <sparcoll/sparcoll.h>

#define P 4
#define N 1000
static scComm_t comms[P];
static int failures = 0;

static void* worker(void* arg) {
  int rank = (int)(size_t)arg;
  float x[N], y[N];
  for (int i = 0; i < N; ++i) x[i] = (float)(rank + i);
  scResult_t r = scAllReduce(x, y, N, scFloat32, scSum, scAlgoRing, comms[rank], NULL);
  if (r != scSuccess) {
    fprintf(stderr, "rank %d: %s\n", rank, scGetLastError(comms[rank]));
    __atomic_add_fetch(&failures, 1, __ATOMIC_SEQ_CST);
    return NULL;
  }
  for (int i = 0; i < N; ++i)
    if (y[i] != (float)(P * i + P * (P - 1) / 2)) {
      __atomic_add_fetch(&failures, 1, __ATOMIC_SEQ_CST);
      break;
    }
  return NULL;
}

int main(void) {
  if (scCommInitLocal(comms, P, NULL, NULL) != scSuccess) {
    fprintf(stderr, "init: %s\n", scGetLastError(NULL));
    return 1;
  }
  pthread_t t[P];
  for (int r = 0; r < P; ++r) pthread_create(&t[r], NULL, worker, (void*)(size_t)r);
  for (int r = 0; r < P; ++r) pthread_join(t[r], NULL);
  scStats_t s;
  scCommGetStats(comms[0], &s);
  printf("C example: %s, rank 0 sent %llu bytes\n", failures ? "FAILED" : "ok", (unsigned long long)s.bytesSent);
  for (int r = 0; r < P; ++r) scCommDestroy(comms[r]);
  return failures != 0;
}
