/*
 * json.c - rocprofv3's JSON output (--output-format json: <pid>_results.json)
 * read as a stream (json_scan.c's events) and folded like its CSV files.
 * The document is {"rocprofiler-sdk-tool": [one object per process]}; in
 * each, "agents", "counters" and "kernel_symbols" name what the counter
 * collection ("callback_records.counter_collection": an entry per dispatch,
 * a record per counter instance) and the kernel trace
 * ("buffer_records.kernel_dispatch") refer to by id. The parse keeps a stack
 * of the open containers (a document nested deeper than LM_V3J_MAX_DEPTH is
 * refused) and the fields of the records it reads, each handed to
 * json_fold.c as it ends: memory is the scanner's window and the fold,
 * whatever the file's size. Errors name the field by its path and its line.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rocprofv3/json_private.h"

enum { MAX_DEPTH = LM_V3J_MAX_DEPTH, KEY_COPY = 32 };

int lm_v3_json_detect(const char *path) {
  int fd = -1;
  char head[256];
  if (lm_open_read(path, 0, &fd, NULL, NULL) != LM_OK) return 0;
  ssize_t n = read(fd, head, sizeof head - 1);
  close(fd);
  if (n <= 0) return 0;
  head[n] = 0;
  const char *p = head + strspn(head, " \t\r\n");
  if (*p++ != '{') return 0;
  p += strspn(p, " \t\r\n");
  return strncmp(p, "\"rocprofiler-sdk-tool\"", 22) == 0;
}

/* What a container is: K_SKIP for one the reader does not read. */
enum {
  K_SKIP,
  K_ROOT,
  K_PROCS,
  K_PROC,
  K_AGENTS,
  K_AGENT,
  K_COUNTERS,
  K_COUNTER,
  K_SYMBOLS,
  K_SYMBOL,
  K_CB,
  K_COLL,
  K_ENTRY,
  K_DATA,
  K_INFO,
  K_GRID,
  K_WG,
  K_RECORDS,
  K_RECORD,
  K_BUF,
  K_TRACES,
  K_TRACE,
  K_HANDLE,
  K_N
};
/* The records the parse fills: those of json_private.h and the sections'
 * own (whose bits only say which keys were seen). */
enum {
  REC_AGENT,
  REC_COUNTER,
  REC_SYMBOL,
  REC_ENTRY,
  REC_INFO,
  REC_RECORD,
  REC_TRACE,
  REC_ROOT,
  REC_PROC,
  REC_CB,
  REC_BUF,
  REC_N
};

/* A key of an object: the field bit it fills, and the kind of container
 * its value is (0: a number or text). */
typedef struct field {
  const char *key;
  unsigned char len, bit, kind;
} field;
#define F(k, bit, kind) \
  { k, sizeof k - 1, bit, kind }
static const field root_f[] = {F("rocprofiler-sdk-tool", LM_V3J_OBJ0, K_PROCS)};
static const field proc_f[] = {F("agents", LM_V3J_OBJ0, K_AGENTS), F("counters", LM_V3J_OBJ0 + 1, K_COUNTERS),
                               F("kernel_symbols", LM_V3J_OBJ0 + 2, K_SYMBOLS),
                               F("callback_records", LM_V3J_OBJ0 + 3, K_CB),
                               F("buffer_records", LM_V3J_OBJ0 + 4, K_BUF)};
static const field cb_f[] = {F("counter_collection", LM_V3J_OBJ0, K_COLL)};
static const field buf_f[] = {F("kernel_dispatch", LM_V3J_OBJ0, K_TRACES)};
static const field agent_f[] = {F("id", A_ID, 0),
                                F("node_id", A_NODE, 0),
                                F("type", A_TYPE, 0),
                                F("cu_count", A_CU, 0),
                                F("simd_per_cu", A_SIMD, 0),
                                F("wave_front_size", A_WAVE, 0),
                                F("workgroup_max_size", A_WGMAX, 0),
                                F("max_waves_per_cu", A_WAVES, 0),
                                F("max_engine_clk_fcompute", A_CLK, 0),
                                F("num_xcc", A_XCC, 0),
                                F("array_count", A_ARRAYS, 0),
                                F("simd_arrays_per_engine", A_PER_SE, 0),
                                F("name", A_NAME, 0),
                                F("product_name", A_PRODUCT, 0)};
static const field counter_f[] = {F("id", C_ID, 0), F("name", C_NAME, 0)};
static const field symbol_f[] = {F("kernel_id", S_KERNEL, 0),     F("group_segment_size", S_LDS, 0),
                                 F("arch_vgpr_count", S_VGPR, 0), F("accum_vgpr_count", S_AGPR, 0),
                                 F("sgpr_count", S_SGPR, 0),      F("formatted_kernel_name", S_FORMATTED, 0),
                                 F("kernel_name", S_NAME, 0)};
static const field entry_f[] = {F("dispatch_data", E_DATA, K_DATA), F("records", E_RECORDS, K_RECORDS)};
static const field data_f[] = {F("start_timestamp", E_START, 0), F("end_timestamp", E_END, 0),
                               F("dispatch_info", E_INFO, K_INFO)};
static const field info_f[] = {F("dispatch_id", I_DISPATCH, 0), F("agent_id", I_AGENT, 0),
                               F("kernel_id", I_KERNEL, 0),     F("private_segment_size", I_SCRATCH, 0),
                               F("grid_size", I_GRID, K_GRID),  F("workgroup_size", I_WG, K_WG)};
static const field grid_f[] = {F("x", I_GX, 0), F("y", I_GY, 0), F("z", I_GZ, 0)};
static const field wg_f[] = {F("x", I_WX, 0), F("y", I_WY, 0), F("z", I_WZ, 0)};
static const field record_f[] = {F("counter_id", R_COUNTER, 0), F("value", R_VALUE, 0)};
static const field trace_f[] = {F("start_timestamp", T_START, 0), F("end_timestamp", T_END, 0),
                                F("dispatch_info", T_INFO, K_INFO)};
static const field handle_f[] = {F("handle", 0, 0)};
#undef F

/* Each kind: an array (of elements of kind elem) or an object (its keys,
 * filling record rec). */
static const struct kind {
  const field *fields;
  unsigned char n_fields, rec, is_array, elem;
} kinds[K_N] = {
    [K_SKIP] = {NULL, 0, REC_ROOT, 0, 0},
    [K_ROOT] = {root_f, LM_ARRAY_LEN(root_f), REC_ROOT, 0, 0},
    [K_PROCS] = {NULL, 0, 0, 1, K_PROC},
    [K_PROC] = {proc_f, LM_ARRAY_LEN(proc_f), REC_PROC, 0, 0},
    [K_AGENTS] = {NULL, 0, 0, 1, K_AGENT},
    [K_AGENT] = {agent_f, LM_ARRAY_LEN(agent_f), REC_AGENT, 0, 0},
    [K_COUNTERS] = {NULL, 0, 0, 1, K_COUNTER},
    [K_COUNTER] = {counter_f, LM_ARRAY_LEN(counter_f), REC_COUNTER, 0, 0},
    [K_SYMBOLS] = {NULL, 0, 0, 1, K_SYMBOL},
    [K_SYMBOL] = {symbol_f, LM_ARRAY_LEN(symbol_f), REC_SYMBOL, 0, 0},
    [K_CB] = {cb_f, LM_ARRAY_LEN(cb_f), REC_CB, 0, 0},
    [K_COLL] = {NULL, 0, 0, 1, K_ENTRY},
    [K_ENTRY] = {entry_f, LM_ARRAY_LEN(entry_f), REC_ENTRY, 0, 0},
    [K_DATA] = {data_f, LM_ARRAY_LEN(data_f), REC_ENTRY, 0, 0},
    [K_INFO] = {info_f, LM_ARRAY_LEN(info_f), REC_INFO, 0, 0},
    [K_GRID] = {grid_f, LM_ARRAY_LEN(grid_f), REC_INFO, 0, 0},
    [K_WG] = {wg_f, LM_ARRAY_LEN(wg_f), REC_INFO, 0, 0},
    [K_RECORDS] = {NULL, 0, 0, 1, K_RECORD},
    [K_RECORD] = {record_f, LM_ARRAY_LEN(record_f), REC_RECORD, 0, 0},
    [K_BUF] = {buf_f, LM_ARRAY_LEN(buf_f), REC_BUF, 0, 0},
    [K_TRACES] = {NULL, 0, 0, 1, K_TRACE},
    [K_TRACE] = {trace_f, LM_ARRAY_LEN(trace_f), REC_TRACE, 0, 0},
    [K_HANDLE] = {handle_f, 1, 0, 0, 0},
};

enum { NO_FIELD = 255 };

/* An open container. An object's current key is one of its fields (key
 * points to the field's name) or another (copied, cut, for error paths). */
typedef struct frame {
  unsigned char kind, is_array, field;
  unsigned char rec, bit, got; /* K_HANDLE: the number field it gives, and whether given */
  size_t index;                /* an array: the elements begun; the object: its place in its array */
  const char *key;
  size_t key_len;
  char copy[KEY_COPY];
} frame;

typedef struct parser {
  lm_v3j *j;
  const char *path;
  lm_diag *diag;
  lm_status st;
  int found;    /* "rocprofiler-sdk-tool" was an array or object */
  int late;     /* the error was found at a process's end: no line */
  size_t entry; /* the index of the collection entry open */
  size_t depth;
  frame stack[MAX_DEPTH];
  lm_v3j_record rec[REC_N];
} parser;

/* The path of the open containers (the field of an error), cut to cap;
 * opening: a value opens in the innermost, at its array's next index. */
static void path_of(const parser *p, int opening, char *out, size_t cap) {
  size_t n = 0;
  out[0] = 0;
  for (size_t d = 0; d < p->depth; d++) {
    const frame *f = &p->stack[d];
    int w = 0;
    if (f->is_array) {
      size_t at = d + 1 == p->depth && opening ? f->index : f->index ? f->index - 1 : 0;
      w = snprintf(out + n, cap - n, "[%zu]", at);
    } else if (f->key) {
      w = snprintf(out + n, cap - n, "%s%.*s", n ? "." : "", (int)f->key_len, f->key);
    }
    if (w < 0 || (size_t)w >= cap - n) break;
    n += (size_t)w;
  }
}

/* Stop the parse with st (diag already filled). */
static int stop(parser *p, lm_status st) {
  p->st = st;
  return 0;
}

/* A record of kind k begins as element index of its array. */
static int record_begin(parser *p, int k, size_t index) {
  /* The objects that share their parent's record (dispatch_data, its
   * dispatch_info's dimensions) keep it; the others start empty. */
  if (k != K_DATA && k != K_GRID && k != K_WG && !kinds[k].is_array) {
    lm_v3j_record *r = &p->rec[kinds[k].rec];
    r->seen = r->set = 0;
  }
  switch (k) {
    case K_PROC:
      p->rec[REC_CB].seen = p->rec[REC_BUF].seen = 0;
      if ((p->st = lm_v3j_process_begin(p->j, index, p->diag)) != LM_OK) return 0;
      break;
    case K_ENTRY:
      p->rec[REC_INFO].seen = p->rec[REC_INFO].set = 0;
      p->entry = index;
      lm_v3j_entry_begin(p->j);
      break;
    case K_TRACE:
      p->rec[REC_INFO].seen = p->rec[REC_INFO].set = 0;
      break;
    default:
      break;
  }
  return 1;
}

/* A record of kind k (element index of its array) ends: fold it. */
static int record_end(parser *p, int k, size_t index) {
  lm_v3j *j = p->j;
  lm_diag *diag = p->diag;
  const lm_v3j_record *r = p->rec;
  lm_status st = LM_OK;
  switch (k) {
    case K_PROC:
      p->late = 1;
      st = lm_v3j_process_end(j, diag);
      break;
    case K_AGENT:
      st = lm_v3j_agent(j, &r[REC_AGENT], index, diag);
      break;
    case K_COUNTER:
      st = lm_v3j_counter(j, &r[REC_COUNTER], index, diag);
      break;
    case K_SYMBOL:
      st = lm_v3j_symbol(j, &r[REC_SYMBOL], index, diag);
      break;
    case K_RECORD:
      st = lm_v3j_value(j, &r[REC_RECORD], p->entry, index, diag);
      break;
    case K_ENTRY:
      st = lm_v3j_entry(j, &r[REC_ENTRY], &r[REC_INFO], index, diag);
      break;
    case K_TRACE:
      st = lm_v3j_trace(j, &r[REC_TRACE], &r[REC_INFO], index, diag);
      break;
    case K_AGENTS:
      st = lm_v3j_section_end(j, LM_V3J_AGENTS, diag);
      break;
    case K_COUNTERS:
      st = lm_v3j_section_end(j, LM_V3J_COUNTERS, diag);
      break;
    case K_SYMBOLS:
      st = lm_v3j_section_end(j, LM_V3J_SYMBOLS, diag);
      break;
    case K_COLL:
      st = lm_v3j_section_end(j, LM_V3J_COLLECTION, diag);
      break;
    default:
      break;
  }
  if (st != LM_OK) return stop(p, st);
  p->late = 0;
  return 1;
}

/* The field the current key of top names, with the record and bit it
 * fills; NULL for a key the reader does not read, or one seen before. */
static const field *current(parser *p, frame *top, lm_v3j_record **rec, int *bit) {
  if (top->field == NO_FIELD) return NULL;
  const field *f = &kinds[top->kind].fields[top->field];
  if (top->kind == K_HANDLE) {
    if (top->got) return NULL;
    top->got = 1;
    *rec = &p->rec[top->rec];
    *bit = top->bit;
    return f;
  }
  *rec = &p->rec[kinds[top->kind].rec];
  *bit = f->bit;
  uint32_t b = 1u << f->bit;
  if ((*rec)->seen & b) return NULL; /* a duplicated key: the first is kept */
  (*rec)->seen |= b;
  return f;
}

/* A scalar value: a number (its value; in_range 0 beyond a double's), a
 * string (text) or another (null, true, false). */
enum { V_NUMBER, V_STRING, V_OTHER };
static int scalar(parser *p, int type, const char *text, size_t len, double value, int in_range) {
  if (p->depth == 0) return 1;
  frame *top = &p->stack[p->depth - 1];
  if (top->is_array) {
    size_t index = top->index++;
    int elem = kinds[top->kind].elem;
    /* An element that is no object: a record without fields. */
    return !elem || (record_begin(p, elem, index) && record_end(p, elem, index));
  }
  lm_v3j_record *r;
  int bit;
  const field *f = current(p, top, &r, &bit);
  if (!f || f->kind) return 1;
  if (bit < LM_V3J_TEXT0 && type == V_NUMBER) {
    if (in_range) { /* else beyond a double's range: not set */
      r->num[bit] = value;
      r->set |= 1u << bit;
    }
  } else if (bit >= LM_V3J_TEXT0 && bit < LM_V3J_OBJ0 && type == V_STRING) {
    size_t t = (size_t)bit - LM_V3J_TEXT0;
    if (len + 1 > r->text_cap[t]) {
      char *s = lm_realloc(r->text[t], len + 1);
      if (!s) return stop(p, lm_oom(p->diag, p->path));
      r->text[t] = s;
      r->text_cap[t] = len + 1;
    }
    memcpy(r->text[t], text, len);
    r->text[t][len] = 0;
    r->set |= 1u << bit;
  }
  return 1;
}

/* The parse's status after a step that returned ok (0: stopped). */
static lm_status went(const parser *p, int ok) { return ok ? LM_OK : p->st != LM_OK ? p->st : LM_EPARSE; }

static lm_status on_literal(void *ctx, int which) {
  (void)which;
  return went(ctx, scalar(ctx, V_OTHER, NULL, 0, 0, 0));
}
static lm_status on_number(void *ctx, double value, int in_range) {
  return went(ctx, scalar(ctx, V_NUMBER, NULL, 0, value, in_range));
}
static lm_status on_string(void *ctx, const char *s, size_t len) {
  return went(ctx, scalar(ctx, V_STRING, s, len, 0, 0));
}

static lm_status on_key(void *ctx, const char *s, size_t len) {
  parser *p = ctx;
  frame *top = &p->stack[p->depth - 1];
  const struct kind *k = &kinds[top->kind];
  for (unsigned char i = 0; i < k->n_fields; i++) {
    const field *f = &k->fields[i];
    if (f->len == len && f->key[0] == s[0] && memcmp(f->key, s, len) == 0) {
      top->field = i;
      top->key = f->key;
      top->key_len = len;
      return LM_OK;
    }
  }
  top->field = NO_FIELD;
  top->key_len = len < KEY_COPY ? len : KEY_COPY;
  memcpy(top->copy, s, top->key_len);
  top->key = top->copy;
  return LM_OK;
}

/* The kind of a container opening in top (an array when is_array), the
 * record it fills and the bit of a K_HANDLE; its place in top's array. */
static int child_kind(parser *p, frame *top, int is_array, int *rec, int *bit, size_t *index) {
  *index = 0;
  if (top->is_array) {
    *index = top->index++;
    int elem = kinds[top->kind].elem;
    if (!elem || !is_array) return elem;
    /* An array where a record was expected: a record without fields. */
    return record_begin(p, elem, *index) && record_end(p, elem, *index) ? K_SKIP : -1;
  }
  lm_v3j_record *r;
  const field *f = current(p, top, &r, bit);
  if (!f) return K_SKIP;
  if (!f->kind) { /* a number given as {"handle": n} */
    *rec = (int)(r - p->rec);
    return *bit < LM_V3J_TEXT0 && !is_array ? K_HANDLE : K_SKIP;
  }
  if (f->kind == K_PROCS && !is_array) { /* a single process object */
    p->found = 1;
    return K_PROC;
  }
  if (kinds[f->kind].is_array != is_array) return K_SKIP;
  r->set |= 1u << *bit;
  if (f->kind == K_PROCS) p->found = 1;
  return f->kind;
}

static int open_container(parser *p, int is_array) {
  if (p->depth == MAX_DEPTH) {
    char where[128];
    path_of(p, 1, where, sizeof where);
    lm_fail_at(p->diag, LM_EPARSE, p->path, 0, where, "nested deeper than %d levels", MAX_DEPTH);
    return stop(p, LM_EPARSE);
  }
  int kind = is_array ? K_SKIP : K_ROOT, rec = 0, bit = 0;
  size_t index = 0;
  if (p->depth && (kind = child_kind(p, &p->stack[p->depth - 1], is_array, &rec, &bit, &index)) < 0) return 0;
  frame *f = &p->stack[p->depth++];
  f->kind = (unsigned char)kind;
  f->is_array = (unsigned char)is_array;
  f->field = NO_FIELD;
  f->rec = (unsigned char)rec;
  f->bit = (unsigned char)bit;
  f->got = 0;
  f->index = index;
  f->key = NULL;
  f->key_len = 0;
  return kinds[kind].is_array || kind == K_SKIP || kind == K_HANDLE || record_begin(p, kind, index);
}

static int close_container(parser *p) {
  frame *f = &p->stack[--p->depth];
  return f->kind == K_SKIP || f->kind == K_HANDLE || record_end(p, f->kind, f->index);
}

static lm_status on_begin(void *ctx, int is_array) { return went(ctx, open_container(ctx, is_array)); }
static lm_status on_end(void *ctx) { return went(ctx, close_container(ctx)); }
static void on_where(void *ctx, char *out, size_t cap) { path_of(ctx, 0, out, cap); }

static const lm_v3j_events events = {on_begin, on_end, on_key, on_string, on_number, on_literal, on_where};

lm_status lm_v3_json_read(const char *path, lm_v3_fold *fold, lm_v3_agents *agents, int *group, lm_diag *diag) {
  lm_v3j_scan *scan = NULL;
  parser *p = NULL;
  lm_v3j *j = NULL;
  lm_status st = lm_v3j_scan_open(path, &scan, diag);
  if (st != LM_OK) return st;
  if ((st = lm_v3j_new(path, fold, agents, group, &j, diag)) != LM_OK) goto done;
  p = lm_calloc(1, sizeof *p);
  if (!p) {
    st = lm_oom(diag, path);
    goto done;
  }
  p->j = j;
  p->path = path;
  p->diag = diag;
  if ((st = lm_v3j_scan_run(scan, &events, p, diag)) != LM_OK) {
    if (p->st != LM_OK && !p->late && diag) diag->line = lm_v3j_scan_line(scan);
    goto done;
  }
  if (!p->found)
    st = lm_fail_at(diag, LM_EPARSE, path, 0, "rocprofiler-sdk-tool", "missing: not rocprofv3's JSON output");
done:
  for (size_t r = 0; p && r < REC_N; r++) {
    lm_free(p->rec[r].text[0]);
    lm_free(p->rec[r].text[1]);
  }
  lm_free(p);
  lm_v3j_free(j);
  lm_v3j_scan_close(scan);
  return st;
}
