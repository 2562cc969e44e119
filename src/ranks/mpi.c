/*
 * mpi.c - `mpirun -np K lumen analyze --mpi -w DIR`: the rank.R parts of an
 * MPI profile loaded by K processes, merged and analysed by process 0.
 *
 * Built only where CMake finds Open MPI, as the module lumen-mpi.so that the
 * binary opens for --mpi alone, so that no other command loads Open MPI; its
 * one export is the table at the end, and the lumen functions it calls are
 * the binary's (CMakeLists.txt). Invariants: process 0 merges every part in
 * part order through the single-process merge, so the result and the error
 * are a single process's; no process is left waiting in a collective; all
 * exit with process 0's status. docs/mpi.md.
 */
#include <limits.h>
#include <mpi.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "folder/folder.h"
#include "ranks/ranks.h"

struct lm_ranks_mpi {
  int me, size;
  int phase;        /* 0: plan not sent; 1: exchanging; 2: done */
  size_t n_parts;
  size_t block;     /* parts per process in a round (block_of) */
  long failed;      /* the round's lowest failed part, n_parts when none */
  size_t round_end; /* one past the current round's last part */
  size_t next;      /* the next part process 0 takes in the round */
  void *message;    /* the last part received (its values are read there) */
  size_t cap;
  lm_part_source src;
  void (*fatal)(const lm_diag *diag); /* says why before the job is ended */
};

/* At most this many parts per process in a round: the agreement costs one
 * collective per round, which a loaded node makes slow to wake from. */
enum { ROUND_PARTS = 8 };

/* Parts per process in a round: n / K rounded up, at most ROUND_PARTS. */
static size_t block_of(size_t n_parts, int size) {
  size_t b = (n_parts + (size_t)size - 1) / (size_t)size;
  return b < 1 ? 1 : b > ROUND_PARTS ? ROUND_PARTS : b;
}

/* The process that loads part i: blocks of m->block parts in turn. */
static int owner(const lm_ranks_mpi *m, size_t i) { return (int)(i / m->block % (size_t)m->size); }
static size_t round_span(const lm_ranks_mpi *m) { return m->block * (size_t)m->size; }

/* Process 0 stopping the rounds; the tag of every part message (a process
 * sends at most one per round, and process 0 takes them in order). */
enum { PLAN_ABORT = -1, PART_TAG = 7 };

/* Waiting without spinning: Open MPI's blocking calls poll at full speed,
 * which on a node with fewer cores than processes (or one shared with
 * other work) takes the processor from the process that has work to do.
 * A request is tested, then tested every 50 us while it is not done. */
static void wait_idle(MPI_Request *req) {
  int done = 0;
  for (int spins = 0; !done; spins++) {
    MPI_Test(req, &done, MPI_STATUS_IGNORE);
    if (!done && spins > 20) {
      struct timespec nap = {0, 50000};
      nanosleep(&nap, NULL);
    }
  }
}

static lm_status mpi_plan(void *ctx, size_t n_parts, int exchange, lm_diag *diag) {
  lm_ranks_mpi *m = ctx;
  long long plan[2] = {(long long)n_parts, exchange};
  (void)diag;
  MPI_Request req;
  MPI_Ibcast(plan, 2, MPI_LONG_LONG, 0, MPI_COMM_WORLD, &req);
  wait_idle(&req);
  m->n_parts = n_parts;
  m->block = block_of(n_parts, m->size);
  m->phase = exchange ? 1 : 2;
  return LM_OK;
}

/* The round's agreement: the lowest part any process failed to load
 * (n_parts: none), or PLAN_ABORT when process 0 stops. */
static long agree(long mine) {
  uint64_t t0 = lm_phase_begin();
  long lowest = mine;
  MPI_Request req;
  MPI_Iallreduce(&mine, &lowest, 1, MPI_LONG, MPI_MIN, MPI_COMM_WORLD, &req);
  wait_idle(&req);
  lm_phase_end("mpi: wait for the others", t0);
  return lowest;
}

static void probe_idle(int from, MPI_Status *status) {
  int found = 0;
  for (int spins = 0; !found; spins++) {
    MPI_Iprobe(from, PART_TAG, MPI_COMM_WORLD, &found, status);
    if (!found && spins > 20) {
      struct timespec nap = {0, 50000};
      nanosleep(&nap, NULL);
    }
  }
}

/* The next part from process `from`: its message, unpacked, its value
 * columns left in the message (m->message, kept until the next part). */
static lm_status receive_part(lm_ranks_mpi *m, int from, lm_workload **out, lm_diag *diag) {
  MPI_Status status;
  int count = 0;
  uint64_t t0 = lm_phase_begin();
  probe_idle(from, &status);
  lm_phase_end("mpi: wait for the others", t0);
  MPI_Get_count(&status, MPI_BYTE, &count);
  size_t need = count > 0 ? (size_t)count : 1;
  if (need > m->cap) {
    lm_free(m->message);
    m->cap = 0;
    if (!(m->message = lm_malloc(need + need / 4))) {
      /* The sender waits on this message: only ending the job frees it. */
      lm_status st = lm_fail(diag, LM_ENOMEM, NULL, "out of memory for a part of %zu bytes from process %d", need, from);
      if (m->fatal) m->fatal(diag);
      MPI_Abort(MPI_COMM_WORLD, 1);
      return st;
    }
    m->cap = need + need / 4;
  }
  MPI_Recv(m->message, count, MPI_BYTE, from, PART_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return lm_ranks_wire_unpack(m->message, (size_t)count, 1, out, diag);
}

/* A part's diagnostic from process `from` (its load failed). */
static lm_status receive_diag(int from, lm_diag *diag) {
  MPI_Status status;
  probe_idle(from, &status);
  MPI_Recv(diag, (int)sizeof *diag, MPI_BYTE, from, PART_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return diag->status != LM_OK ? diag->status : LM_EDATA;
}

static lm_status mpi_load(void *ctx, size_t i, const char *dir, const lm_workload_options *opts, lm_workload **out,
                          lm_diag *diag) {
  lm_ranks_mpi *m = ctx;
  *out = NULL;
  if (i % round_span(m) == 0) {
    /* A new round: the others have loaded theirs; what failed first. */
    m->failed = agree((long)m->n_parts);
    m->round_end = i + round_span(m) < m->n_parts ? i + round_span(m) : m->n_parts;
  }
  m->next = i + 1;
  int from = owner(m, i);
  /* Process 0's own parts are loaded as they come: a failure there is
   * below every part the round agreed on (the reader stops at it). */
  if (from == 0) {
    uint64_t t0 = lm_phase_begin();
    lm_status st = lm_folder_read(dir, opts, out, diag);
    lm_phase_end("mpi: load own parts", t0);
    return st;
  }
  if ((long)i < m->failed) return receive_part(m, from, out, diag);
  return receive_diag(from, diag);
}

static int mpi_begin(lm_ranks_mpi **out, void (*fatal)(const lm_diag *diag)) {
  *out = NULL;
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized && MPI_Init(NULL, NULL) != MPI_SUCCESS) return -1;
  lm_ranks_mpi *m = lm_malloc(sizeof *m);
  if (!m) return -1;
  memset(m, 0, sizeof *m);
  m->fatal = fatal;
  MPI_Comm_rank(MPI_COMM_WORLD, &m->me);
  MPI_Comm_size(MPI_COMM_WORLD, &m->size);
  m->src.plan = mpi_plan;
  m->src.load = mpi_load;
  m->src.ctx = m;
  *out = m;
  return m->me;
}

static const lm_part_source *mpi_source(lm_ranks_mpi *m) { return m && m->size > 1 ? &m->src : NULL; }

static void mpi_settle(lm_ranks_mpi *m) {
  if (!m || m->size < 2 || m->phase != 1) return;
  /* The rest of the round that process 0 stopped in, read and dropped. */
  for (size_t j = m->next; j < m->round_end; j++) {
    int from = owner(m, j);
    if (from == 0 || (long)j > m->failed) continue;
    if ((long)j == m->failed) {
      lm_diag dropped;
      receive_diag(from, &dropped);
      continue;
    }
    lm_workload *pw = NULL;
    lm_diag ignored;
    if (receive_part(m, from, &pw, &ignored) == LM_OK) lm_workload_free(pw);
  }
  /* Rounds to come: nobody starts them. */
  if (m->failed == (long)m->n_parts && m->round_end < m->n_parts && m->next > 0) agree(PLAN_ABORT);
  else if (m->next == 0 && m->n_parts > 0) agree(PLAN_ABORT); /* stopped before round 0 */
  m->phase = 2;
}

static int mpi_end(lm_ranks_mpi *m, int status) {
  if (!m) return status;
  if (m->size > 1 && m->me == 0) {
    if (m->phase == 0) mpi_plan(m, 0, 0, NULL); /* the workers read nothing */
    mpi_settle(m);
    int st = status;
    MPI_Request req;
    MPI_Ibcast(&st, 1, MPI_INT, 0, MPI_COMM_WORLD, &req);
    wait_idle(&req);
  }
  lm_free(m->message);
  lm_free(m);
  MPI_Finalize();
  return status;
}

/* One round's part of a worker: load (the columns opts chooses, as process
 * 0 chose them), pack, or the diagnostic. */
static lm_status worker_load(const char *dir, size_t i, const lm_workload_options *opts, lm_buf *packed,
                             lm_diag *diag) {
  lm_workload *pw = NULL;
  lm_status st = lm_folder_read(dir, opts, &pw, diag);
  if (st == LM_OK) st = lm_ranks_wire_pack(pw, packed, diag);
  lm_workload_free(pw);
  if (st == LM_OK && packed->len > INT_MAX)
    st = lm_fail(diag, LM_EDATA, dir, "part %zu is %zu bytes, more than one MPI message holds", i, packed->len);
  return st;
}

/* A worker's round: its parts packed, sent while it loads the next round. */
typedef struct round_out {
  lm_buf packed[ROUND_PARTS];
  MPI_Request req[ROUND_PARTS + 1];
  int n_req;
  lm_diag diag;
} round_out;

/* The round's sends finished (process 0 took them) and their buffers freed. */
static void round_done(round_out *o) {
  for (int k = 0; k < o->n_req; k++) wait_idle(&o->req[k]);
  o->n_req = 0;
  for (int k = 0; k < ROUND_PARTS; k++) lm_buf_fini(&o->packed[k]);
}

static int mpi_worker(lm_ranks_mpi *m, const char *dir, const lm_workload_options *opts) {
  long long plan[2] = {PLAN_ABORT, 0};
  MPI_Request req;
  MPI_Ibcast(plan, 2, MPI_LONG_LONG, 0, MPI_COMM_WORLD, &req);
  wait_idle(&req); /* while process 0 reads the parts' shapes */
  if (plan[0] > 0 && plan[1]) {
    size_t n = (size_t)plan[0];
    m->n_parts = n;
    m->block = block_of(n, m->size);
    lm_arena *arena = lm_arena_new(1 << 12);
    const char **dirs = NULL;
    size_t n_dirs = 0;
    lm_diag list_diag;
    lm_diag_clear(&list_diag);
    lm_status listed = arena && dir ? lm_ranks_part_dirs(dir, opts, arena, &dirs, &n_dirs, &list_diag) : LM_ENOMEM;
    if (listed == LM_OK && n_dirs != n)
      listed = lm_fail(&list_diag, LM_EDATA, dir,
                       "process %d sees %zu rank.R parts, process 0 %zu (not the same folder on every node?)", m->me,
                       n_dirs, n);
    /* Two rounds in hand: one being sent, the next being loaded. */
    round_out outs[2];
    memset(outs, 0, sizeof outs);
    for (size_t first = 0, r = 0; first < n; first += round_span(m), r++) {
      round_out *o = &outs[r % 2];
      size_t mine = first + (size_t)m->me * m->block;
      long failed_here = (long)n;
      int loaded = 0;
      lm_diag_clear(&o->diag);
      for (int k = 0; (size_t)k < m->block && mine + (size_t)k < n && failed_here == (long)n; k++, loaded++) {
        size_t i = mine + (size_t)k;
        lm_status st = listed != LM_OK ? (o->diag = list_diag, listed) : worker_load(dirs[i], i, opts, &o->packed[k], &o->diag);
        if (st != LM_OK) failed_here = (long)i;
      }
      round_done(&outs[(r + 1) % 2]); /* the round before: process 0 took it */
      long failed = agree(failed_here);
      for (int k = 0; failed >= 0 && k < loaded; k++) {
        long i = (long)(mine + (size_t)k);
        if (i < failed)
          MPI_Isend(o->packed[k].data, (int)o->packed[k].len, MPI_BYTE, 0, PART_TAG, MPI_COMM_WORLD, &o->req[o->n_req++]);
        else if (i == failed)
          MPI_Isend(&o->diag, (int)sizeof o->diag, MPI_BYTE, 0, PART_TAG, MPI_COMM_WORLD, &o->req[o->n_req++]);
      }
      if (failed < (long)n) break;
    }
    round_done(&outs[0]);
    round_done(&outs[1]);
    lm_arena_free(arena);
  }
  int status = 1;
  MPI_Ibcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD, &req);
  wait_idle(&req); /* while process 0 evaluates and prints */
  return status;
}

/* What the binary looks up in this module (LM_RANKS_MPI_API). */
__attribute__((visibility("default"))) const lm_ranks_mpi_api lumen_mpi_api = {
    .begin = mpi_begin,
    .source = mpi_source,
    .settle = mpi_settle,
    .worker = mpi_worker,
    .end = mpi_end,
};
