/*
 * layout_tool.c - a minimal rocprofiler-sdk tool for the tests of the
 * simulated SDK's layouts (LUMEN_SIMSDK_LAYOUT). Preloaded into simapp, it
 * traces code objects and says on stderr what it received: the kind,
 * operation and phase of each record and whether it was finalized.
 *
 * It declares the two layouts it can read itself, from the table of
 * docs/rocprofiler-sdk.md: the 1.x record (64 bytes, correlation id with
 * ancestor) and client id (size, name, handle), and the 0.5/0.6 ones (56
 * and 16 bytes). It picks them by the version the SDK passes to
 * rocprofiler_configure, or reads the 1.x ones everywhere when
 * LAYOUT_TOOL_ABI=1.x, as a tool built against 1.x headers does.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { uint64_t handle; } context_id;
typedef struct {
  context_id context;
  uint64_t thread_id, internal, external, ancestor;
  int kind;
  int32_t operation;
  int phase;
  void *payload;
} record_1x;
typedef struct {
  context_id context;
  uint64_t thread_id, internal, external;
  int kind;
  int32_t operation;
  int phase;
  void *payload;
} record_05;
typedef struct {
  size_t size;
  const char *name;
  uint32_t handle;
} client_1x;
typedef struct {
  const char *name;
  uint32_t handle;
} client_05;
typedef struct {
  size_t size;
  int (*initialize)(void *finalize, void *tool_data);
  void (*finalize)(void *tool_data);
  void *tool_data;
} configure_result;

enum { TRACING_CODE_OBJECT = 10 };

static int old_abi;

static void on_record_1x(record_1x r, void *user_data, void *arg) {
  (void)user_data;
  (void)arg;
  fprintf(stderr, "layout_tool: kind=%d operation=%d phase=%d\n", r.kind, r.operation, r.phase);
}

static void on_record_05(record_05 r, void *user_data, void *arg) {
  (void)user_data;
  (void)arg;
  fprintf(stderr, "layout_tool: kind=%d operation=%d phase=%d\n", r.kind, r.operation, r.phase);
}

static int initialize(void *finalize, void *tool_data) {
  (void)finalize;
  (void)tool_data;
  int (*create)(context_id *);
  int (*start)(context_id);
  int (*trace)(context_id, int, const int32_t *, size_t, void *, void *);
  *(void **)&create = dlsym(RTLD_DEFAULT, "rocprofiler_create_context");
  *(void **)&start = dlsym(RTLD_DEFAULT, "rocprofiler_start_context");
  *(void **)&trace = dlsym(RTLD_DEFAULT, "rocprofiler_configure_callback_tracing_service");
  if (!create || !start || !trace) return -1;
  context_id ctx = {0};
  /* The SDK calls the callback with the record of its own layout. */
  void (*cb_05)(record_05, void *, void *) = on_record_05;
  void (*cb_1x)(record_1x, void *, void *) = on_record_1x;
  void *cb;
  if (old_abi) memcpy(&cb, &cb_05, sizeof cb);
  else memcpy(&cb, &cb_1x, sizeof cb);
  if (create(&ctx) != 0 || trace(ctx, TRACING_CODE_OBJECT, NULL, 0, cb, NULL) != 0 || start(ctx) != 0) return -1;
  return 0;
}

static void finalize(void *tool_data) {
  (void)tool_data;
  fprintf(stderr, "layout_tool: finalized\n");
}

configure_result *rocprofiler_configure(uint32_t version, const char *runtime_version, uint32_t priority,
                                        void *client);

/* rocprofiler_configure: the tool's entry point, found by the SDK's
 * registration. Writes its name into the client id in the layout it
 * reads. */
__attribute__((visibility("default"))) configure_result *rocprofiler_configure(uint32_t version,
                                                                               const char *runtime_version,
                                                                               uint32_t priority, void *client) {
  (void)runtime_version;
  (void)priority;
  static configure_result result = {sizeof result, initialize, finalize, NULL};
  const char *abi = getenv("LAYOUT_TOOL_ABI");
  old_abi = version < 10000 && !(abi && strcmp(abi, "1.x") == 0);
  if (old_abi) ((client_05 *)client)->name = "layout_tool";
  else ((client_1x *)client)->name = "layout_tool";
  return &result;
}
