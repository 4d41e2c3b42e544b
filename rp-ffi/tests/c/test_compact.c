/*
 * Tests of compaction from C (docs/history.md#compaction): rp_engine_compact drops the
 * snapshots no branch opens from any more and compacts the save file; every branch keeps its
 * world, the save reopens to the same worlds, and the JSON report agrees with the file's size.
 * Compacting twice is harmless; a save written before format 2 is upgraded (its records
 * rewritten, the file smaller, the world the same); an engine in memory reports zeros; the
 * phase "compact" reaches the progress callback, from which a call with the same engine is
 * refused with RP_RESULT_CONFLICT; NULL arguments and a freed handle get their codes.
 *
 * Build and run (scripts/test-all does this, then runs it under valgrind and
 * AddressSanitizer):
 *
 *   cc -std=c99 -Wall -Wextra -Werror -pedantic -Iinclude \
 *      rp-ffi/tests/c/test_compact.c target/debug/librp.a -lpthread -ldl -lm \
 *      -o test_compact
 *   ./test_compact examples/tavern.toml rp-core/tests/fixtures/save-1.rp
 *
 * The arguments are the path of the demo world file and of a save written before format 2. The save file goes to a fresh
 * directory under $TMPDIR (or /tmp), removed at the end.
 *
 * Reports each failed check on stderr and closes with "N passed, N failed";
 * exits 0 only when every check passed.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rp.h"
#include "check.h"
#include "tavern.h"

/* Events per append: a commit that crosses a snapshot boundary (every 1000 events by
 * default) writes a snapshot and drops the ones it supersedes. */
#define BATCH 1000

static char dir[4096];

/* The number `key` has in `json` (`"key":N`), or UINT64_MAX when it is not there. */
static uint64_t json_u64(const char *json, const char *key) {
    char pattern[64];
    const char *at = NULL;
    snprintf(pattern, sizeof pattern, "\"%s\":", key);
    at = json == NULL ? NULL : strstr(json, pattern);
    if (at == NULL) {
        return UINT64_MAX;
    }
    return strtoull(at + strlen(pattern), NULL, 10);
}

static uint64_t file_size(const char *path) {
    struct stat st;
    if (stat(path, &st) != 0) {
        return UINT64_MAX;
    }
    return (uint64_t)st.st_size;
}

/* Appends BATCH events moving the clock on by a second each. */
static rp_result advance_many(rp_engine *engine, long long *now) {
    size_t size = BATCH * 48 + 16, len = 0;
    char *events = malloc(size);
    uint64_t seq = 0;
    rp_result result;
    int i;
    if (events == NULL) {
        return RP_RESULT_PANIC;
    }
    len += (size_t)snprintf(events + len, size - len, "[");
    for (i = 0; i < BATCH; i++) {
        *now += 1000;
        len += (size_t)snprintf(events + len, size - len, "%s{\"time_advanced\": {\"to\": %lld}}",
                                i == 0 ? "" : ",", *now);
    }
    len += (size_t)snprintf(events + len, size - len, "]");
    result = rp_engine_append(engine, events, len, &seq);
    free(events);
    return result;
}

static rp_result switch_to(rp_engine *engine, const char *name) {
    return rp_engine_switch_branch(engine, name, strlen(name));
}

/* The world JSON of branch `name` (the engine is left on "main"); the caller frees it. */
static char *world_of(rp_engine *engine, const char *name) {
    char *world = NULL;
    CHECK(switch_to(engine, name) == RP_RESULT_OK);
    CHECK(rp_engine_world(engine, &world) == RP_RESULT_OK);
    CHECK(switch_to(engine, "main") == RP_RESULT_OK);
    return world;
}

static int same(const char *a, const char *b) {
    return a != NULL && b != NULL && strcmp(a, b) == 0;
}

static void test_a_save_compacts_and_keeps_every_branch_s_world(void) {
    char save[4200];
    char *report = NULL, *again = NULL;
    char *main_world = NULL, *side_world = NULL, *after = NULL;
    rp_engine *engine = NULL;
    long long now = 0;
    uint64_t fork_at = 0, size_before = 0;
    int i;

    snprintf(save, sizeof save, "%s/tavern.rp", dir);
    CHECK(rp_engine_create_from_world_file(save, strlen(save), tavern_path, strlen(tavern_path),
                                           0, &engine) == RP_RESULT_OK);
    if (engine == NULL) {
        return;
    }
    /* Snapshots written and dropped, and a branch forked between two of them. */
    for (i = 0; i < 2; i++) {
        CHECK(advance_many(engine, &now) == RP_RESULT_OK);
    }
    fork_at = head(engine) - BATCH / 2;
    CHECK(rp_engine_fork(engine, fork_at, "side", 4, NULL) == RP_RESULT_OK);
    for (i = 0; i < 4; i++) {
        CHECK(advance_many(engine, &now) == RP_RESULT_OK);
    }
    main_world = world_of(engine, "main");
    side_world = world_of(engine, "side");
    size_before = file_size(save);

    CHECK(rp_engine_compact(engine, &report) == RP_RESULT_OK);
    CHECK(json_u64(report, "file_bytes_before") == size_before);
    CHECK(json_u64(report, "file_bytes_after") == file_size(save));
    CHECK(json_u64(report, "file_bytes_after") <= size_before);
    CHECK(json_u64(report, "allocated_bytes_after") != UINT64_MAX);
    CHECK(json_u64(report, "snapshots_dropped") >= 1);
    CHECK(contains(report, "\"compacted\":"));

    /* Compacting again is harmless: nothing more to drop. */
    CHECK(rp_engine_compact(engine, &again) == RP_RESULT_OK);
    CHECK(json_u64(again, "snapshots_dropped") == 0);
    CHECK(json_u64(again, "file_bytes_after") <= json_u64(report, "file_bytes_after"));
    after = world_of(engine, "main");
    CHECK(same(after, main_world));
    rp_string_free(after);
    CHECK(rp_engine_free(engine) == RP_RESULT_OK);
    engine = NULL;

    /* Reopened, both branches have their worlds, and the save plays on. */
    CHECK(rp_engine_open(save, strlen(save), &engine) == RP_RESULT_OK);
    if (engine != NULL) {
        after = world_of(engine, "main");
        CHECK(same(after, main_world));
        rp_string_free(after);
        after = world_of(engine, "side");
        CHECK(same(after, side_world));
        rp_string_free(after);
        CHECK(advance_many(engine, &now) == RP_RESULT_OK);
        CHECK(rp_engine_free(engine) == RP_RESULT_OK);
    }

    rp_string_free(report);
    rp_string_free(again);
    rp_string_free(main_world);
    rp_string_free(side_world);
    CHECK(unlink(save) == 0);
}

/* What the progress callback heard: its user_data. */
struct recorder {
    rp_engine *engine;
    int reports;
    int compact_reports;
    uint64_t last_done, total;
    rp_result from_inside;
};

static void record(void *user_data, const char *phase, uint64_t done, uint64_t total) {
    struct recorder *r = (struct recorder *)user_data;
    char *json = NULL;
    r->reports++;
    if (strcmp(phase, "compact") == 0) {
        r->compact_reports++;
        r->last_done = done;
        r->total = total;
    }
    /* A call with the engine doing the work is refused, never a deadlock. */
    r->from_inside = rp_engine_compact(r->engine, &json);
    if (json != NULL) {
        rp_string_free(json);
        r->from_inside = RP_RESULT_PANIC; /* written although refused */
    }
}

static void test_in_memory_progress_and_refusals(void) {
    struct tavern t;
    struct recorder heard;
    char *report = NULL, *before = NULL, *after = NULL;
    char *untouched = (char *)&heard;

    CHECK(open_tavern(&t));
    if (t.engine == NULL) {
        return;
    }
    CHECK(rp_engine_world(t.engine, &before) == RP_RESULT_OK);

    /* An engine in memory has no file: a report of zeros. */
    CHECK(rp_engine_compact(t.engine, &report) == RP_RESULT_OK);
    CHECK(same(report, "{\"file_bytes_before\":0,\"file_bytes_after\":0,"
                       "\"allocated_bytes_before\":0,\"allocated_bytes_after\":0,"
                       "\"snapshots_dropped\":0,\"compacted\":false,"
                       "\"records_upgraded\":0}"));
    rp_string_free(report);
    report = NULL;

    /* The phase "compact": four steps, each reported; a call back in is refused. */
    memset(&heard, 0, sizeof heard);
    heard.engine = t.engine;
    CHECK(rp_engine_set_progress(t.engine, record, &heard) == RP_RESULT_OK);
    CHECK(rp_engine_compact(t.engine, &report) == RP_RESULT_OK);
    CHECK(heard.compact_reports == 5);
    CHECK(heard.reports == heard.compact_reports);
    CHECK(heard.last_done == 4 && heard.total == 4);
    CHECK(heard.from_inside == RP_RESULT_CONFLICT);
    CHECK(rp_engine_set_progress(t.engine, NULL, NULL) == RP_RESULT_OK);
    rp_string_free(report);
    report = NULL;

    /* NULL arguments; nothing is written on failure. */
    CHECK(rp_engine_compact(NULL, &report) == RP_RESULT_NULL_ARGUMENT);
    CHECK(report == NULL);
    CHECK(rp_engine_compact(t.engine, NULL) == RP_RESULT_NULL_ARGUMENT);

    CHECK(rp_engine_world(t.engine, &after) == RP_RESULT_OK);
    CHECK(same(after, before));
    rp_string_free(before);
    rp_string_free(after);
    CHECK(rp_engine_free(t.engine) == RP_RESULT_OK);

    /* A freed handle is refused, and *out_json left alone. */
    report = untouched;
    CHECK(rp_engine_compact(t.engine, &report) == RP_RESULT_INVALID_HANDLE);
    CHECK(report == untouched);
}

/* Copies file `from` to `to`; 1 when it worked. */
static int copy_file(const char *from, const char *to) {
    char buf[65536];
    size_t n;
    int ok = 1;
    FILE *in = fopen(from, "rb"), *out = in == NULL ? NULL : fopen(to, "wb");
    if (out == NULL) {
        if (in != NULL) {
            fclose(in);
        }
        return 0;
    }
    while ((n = fread(buf, 1, sizeof buf, in)) > 0) {
        ok = ok && fwrite(buf, 1, n, out) == n;
    }
    ok = ok && !ferror(in);
    fclose(in);
    return fclose(out) == 0 && ok;
}

/* A save written before format 2 (rp-core's fixture) opens; compacting rewrites its records
 * in the current format and shrinks it; it reopens to the same world, and plays on. */
static void test_a_save_of_format_1_is_upgraded(const char *fixture) {
    char save[4200];
    char *report = NULL, *again = NULL, *before = NULL, *after = NULL;
    rp_engine *engine = NULL;
    long long now = 1000000000000LL;

    snprintf(save, sizeof save, "%s/old.rp", dir);
    CHECK(copy_file(fixture, save));
    CHECK(rp_engine_open(save, strlen(save), &engine) == RP_RESULT_OK);
    if (engine == NULL) {
        return;
    }
    CHECK(rp_engine_world(engine, &before) == RP_RESULT_OK);
    CHECK(rp_engine_compact(engine, &report) == RP_RESULT_OK);
    CHECK(json_u64(report, "records_upgraded") > 100);
    CHECK(json_u64(report, "allocated_bytes_after") < json_u64(report, "allocated_bytes_before"));
    CHECK(rp_engine_compact(engine, &again) == RP_RESULT_OK);
    CHECK(json_u64(again, "records_upgraded") == 0);
    CHECK(rp_engine_free(engine) == RP_RESULT_OK);
    engine = NULL;

    CHECK(rp_engine_open(save, strlen(save), &engine) == RP_RESULT_OK);
    if (engine != NULL) {
        CHECK(rp_engine_world(engine, &after) == RP_RESULT_OK);
        CHECK(same(after, before));
        CHECK(advance_many(engine, &now) == RP_RESULT_OK);
        CHECK(rp_engine_free(engine) == RP_RESULT_OK);
    }
    rp_string_free(report);
    rp_string_free(again);
    rp_string_free(before);
    rp_string_free(after);
    CHECK(unlink(save) == 0);
}

int main(int argc, char **argv) {
    const char *tmp = getenv("TMPDIR");
    if (argc != 3) {
        fprintf(stderr,
                "usage: %s PATH/TO/examples/tavern.toml "
                "PATH/TO/rp-core/tests/fixtures/save-1.rp\n",
                argv[0]);
        return 2;
    }
    tavern_path = argv[1];
    if (tmp == NULL || tmp[0] == '\0') {
        tmp = "/tmp";
    }
    snprintf(dir, sizeof dir, "%s/rp-test-compact-XXXXXX", tmp);
    if (mkdtemp(dir) == NULL) {
        fprintf(stderr, "cannot make a directory under %s\n", tmp);
        return 1;
    }

    test_a_save_compacts_and_keeps_every_branch_s_world();
    test_in_memory_progress_and_refusals();
    test_a_save_of_format_1_is_upgraded(argv[2]);

    CHECK(rmdir(dir) == 0);
    return checks_done("test_compact");
}
