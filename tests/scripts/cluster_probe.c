/* cluster_probe: an MPI program run across a virtual cluster (scripts/cluster)
 * by cluster_test.sh, compiled there with mpicc.
 *
 *   cluster_probe hosts NAME...         rank i must run on host NAME[i], alone
 *                                       (hostname and MPI_COMM_TYPE_SHARED),
 *                                       and a message must go round the ring
 *   cluster_probe send MIB SRC:DST...   SRC sends MIB MiB to DST (one pair at a
 *                                       time); prints "rate SRC DST MBIT/S"
 *   cluster_probe allreduce MIB ITERS   times MPI_Allreduce (float sum) of MIB
 *                                       MiB; prints the median and best time
 * Exit status 0 when every check passes. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static int check_hosts(int argc, char** argv) {
  char name[MPI_MAX_PROCESSOR_NAME + 1] = {0};
  int len = 0, bad = 0;
  MPI_Get_processor_name(name, &len);
  char* all = calloc((size_t)size, sizeof name);
  MPI_Allgather(name, (int)sizeof name, MPI_CHAR, all, (int)sizeof name, MPI_CHAR, MPI_COMM_WORLD);
  if (argc != size) {
    if (rank == 0) fprintf(stderr, "probe: %d ranks but %d host names given\n", size, argc);
    bad = 1;
  } else if (strcmp(name, argv[rank]) != 0) {
    fprintf(stderr, "probe: rank %d runs on '%s', expected '%s'\n", rank, name, argv[rank]);
    bad = 1;
  }
  for (int i = 0; i < size; i++)
    if (i != rank && strcmp(all + (size_t)i * sizeof name, name) == 0 && rank < i) {
      fprintf(stderr, "probe: ranks %d and %d share the host name '%s'\n", rank, i, name);
      bad = 1;
    }
  MPI_Comm local;
  int nlocal = 0;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
  MPI_Comm_size(local, &nlocal);
  if (nlocal != 1) {
    fprintf(stderr, "probe: rank %d shares its node with %d ranks (expected alone)\n", rank, nlocal - 1);
    bad = 1;
  }
  MPI_Comm_free(&local);
  /* A token round the ring: each rank adds its rank. */
  long token = 0;
  if (size > 1) {
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    if (rank == 0) {
      MPI_Send(&token, 1, MPI_LONG, next, 7, MPI_COMM_WORLD);
      MPI_Recv(&token, 1, MPI_LONG, prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (token != (long)size * (size - 1) / 2) {
        fprintf(stderr, "probe: ring token %ld, expected %ld\n", token, (long)size * (size - 1) / 2);
        bad = 1;
      }
    } else {
      MPI_Recv(&token, 1, MPI_LONG, prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      token += rank;
      MPI_Send(&token, 1, MPI_LONG, next, 7, MPI_COMM_WORLD);
    }
  }
  printf("host %d %s local %d\n", rank, name, nlocal);
  free(all);
  return bad;
}

static int send_pairs(int argc, char** argv) {
  if (argc < 2) return 1;
  const size_t bytes = (size_t)(atof(argv[0]) * 1048576.0), chunk = 1 << 20;
  char* buf = malloc(chunk);
  memset(buf, rank, chunk);
  for (int p = 1; p < argc; p++) {
    int src = -1, dst = -1;
    if (sscanf(argv[p], "%d:%d", &src, &dst) != 2 || src < 0 || dst < 0 || src >= size || dst >= size || src == dst) {
      if (rank == 0) fprintf(stderr, "probe: bad pair '%s'\n", argv[p]);
      return 1;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    char ack = 0;
    if (rank == src) {
      /* A small round trip first, so that the connection is up. */
      MPI_Send(&ack, 1, MPI_CHAR, dst, 1, MPI_COMM_WORLD);
      MPI_Recv(&ack, 1, MPI_CHAR, dst, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      double t0 = MPI_Wtime();
      for (size_t done = 0; done < bytes; done += chunk) {
        size_t n = bytes - done < chunk ? bytes - done : chunk;
        MPI_Send(buf, (int)n, MPI_CHAR, dst, 2, MPI_COMM_WORLD);
      }
      MPI_Recv(&ack, 1, MPI_CHAR, dst, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      double dt = MPI_Wtime() - t0;
      printf("rate %d %d %.1f\n", src, dst, (double)bytes * 8 / dt / 1e6);
      fflush(stdout);
    } else if (rank == dst) {
      MPI_Recv(&ack, 1, MPI_CHAR, src, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(&ack, 1, MPI_CHAR, src, 1, MPI_COMM_WORLD);
      for (size_t done = 0; done < bytes; done += chunk) {
        size_t n = bytes - done < chunk ? bytes - done : chunk;
        MPI_Recv(buf, (int)n, MPI_CHAR, src, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
      MPI_Send(&ack, 1, MPI_CHAR, src, 3, MPI_COMM_WORLD);
    }
  }
  free(buf);
  return 0;
}

static int allreduce(int argc, char** argv) {
  if (argc < 2) return 1;
  const size_t count = (size_t)(atof(argv[0]) * 1048576.0) / sizeof(float);
  const int iters = atoi(argv[1]);
  float* in = malloc(count * sizeof(float));
  float* out = malloc(count * sizeof(float));
  double* t = calloc((size_t)iters, sizeof(double));
  for (size_t i = 0; i < count; i++) in[i] = 1.0f;
  MPI_Allreduce(in, out, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); /* warm-up */
  for (int it = 0; it < iters; it++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    MPI_Allreduce(in, out, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    double dt = MPI_Wtime() - t0, mx = 0;
    MPI_Allreduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    t[it] = mx;
  }
  int bad = out[0] != (float)size || out[count - 1] != (float)size;
  if (rank == 0) {
    qsort(t, (size_t)iters, sizeof(double), cmp_double);
    double bytes = (double)count * sizeof(float), med = t[iters / 2];
    printf("allreduce ranks %d bytes %.0f iters %d median %.4f s best %.4f s algbw %.1f MB/s busbw %.1f MB/s%s\n", size,
           bytes, iters, med, t[0], bytes / med / 1e6, bytes / med / 1e6 * 2.0 * (size - 1) / size,
           bad ? " WRONG RESULT" : "");
  }
  free(in);
  free(out);
  free(t);
  return bad;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int bad = 1;
  if (argc >= 2 && strcmp(argv[1], "hosts") == 0) bad = check_hosts(argc - 2, argv + 2);
  else if (argc >= 2 && strcmp(argv[1], "send") == 0) bad = send_pairs(argc - 2, argv + 2);
  else if (argc >= 2 && strcmp(argv[1], "allreduce") == 0) bad = allreduce(argc - 2, argv + 2);
  else if (rank == 0)
    fprintf(stderr, "usage: cluster_probe hosts NAME... | send MIB SRC:DST... | allreduce MIB ITERS\n");
  int any = 0;
  MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any;
}
