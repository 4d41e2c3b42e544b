/*
 * Tests of backups from C (docs/history.md#backups): rp_engine_backup copies an open engine's
 * save, every branch of it, to a new save file while the engine plays on, and
 * rp_engine_export_branch copies one branch's history; each opens as the world it copied.
 * Then the unhappy paths, each with the error kind Rust and Python give: a path that exists
 * (a file, or one made by an earlier backup), a missing directory, a path naming no file, an
 * unknown branch, NULL and non-UTF-8 arguments; none of them leaves a file behind.
 *
 * Build and run (scripts/test-all does this, then runs it under valgrind and
 * AddressSanitizer):
 *
 *   cc -std=c99 -Wall -Wextra -Werror -pedantic -Iinclude \
 *      rp-ffi/tests/c/test_backup.c target/debug/librp.a -lpthread -ldl -lm \
 *      -o test_backup
 *   ./test_backup examples/tavern.toml
 *
 * The one argument is the path of the demo world file. Save files go to a fresh directory
 * under $TMPDIR (or /tmp), removed at the end.
 *
 * Reports each failed check on stderr and closes with "N passed, N failed";
 * exits 0 only when every check passed.
 */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rp.h"
#include "check.h"
#include "tavern.h"

static char dir[4096];

/* `name` inside the test directory, written to `out`. */
static const char *in_dir(char *out, size_t size, const char *name) {
    snprintf(out, size, "%s/%s", dir, name);
    return out;
}

/* The number of entries in the test directory, "." and ".." left out. */
static int entries(void) {
    int n = 0;
    struct dirent *entry;
    DIR *d = opendir(dir);
    if (d == NULL) {
        return -1;
    }
    while ((entry = readdir(d)) != NULL) {
        if (strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, "..") != 0) {
            n++;
        }
    }
    closedir(d);
    return n;
}

static int exists(const char *path) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return 0;
    }
    fclose(f);
    return 1;
}

static rp_result advance(rp_engine *engine, long long to) {
    char events[128];
    uint64_t seq = 0;
    snprintf(events, sizeof events, "[{\"time_advanced\": {\"to\": %lld}}]", to);
    return rp_engine_append(engine, events, strlen(events), &seq);
}

/* The world summary and the branches of `engine`, as JSON the caller frees. */
static void describe(rp_engine *engine, char **world, char **branches) {
    CHECK(rp_engine_world(engine, world) == RP_RESULT_OK);
    CHECK(rp_engine_branches(engine, branches) == RP_RESULT_OK);
}

static int same(const char *a, const char *b) {
    return a != NULL && b != NULL && strcmp(a, b) == 0;
}

static rp_result switch_to(rp_engine *engine, const char *name) {
    return rp_engine_switch_branch(engine, name, strlen(name));
}

static void test_a_backup_and_an_export_open_as_what_they_copied(void) {
    struct tavern t;
    char path[4200], export_path[4200];
    char *world = NULL, *branches = NULL, *side_world = NULL;
    char *copy_world = NULL, *copy_branches = NULL;
    rp_engine *copy = NULL;
    uint64_t start = 0, side_head = 0, at_backup = 0;

    CHECK(open_tavern(&t));
    if (t.engine == NULL) {
        return;
    }
    start = head(t.engine);
    CHECK(advance(t.engine, 60000) == RP_RESULT_OK);
    CHECK(advance(t.engine, 120000) == RP_RESULT_OK);
    CHECK(rp_engine_fork(t.engine, start + 1, "side", 4, NULL) == RP_RESULT_OK);
    CHECK(switch_to(t.engine, "side") == RP_RESULT_OK);
    CHECK(advance(t.engine, 90000) == RP_RESULT_OK);
    CHECK(advance(t.engine, 95000) == RP_RESULT_OK);
    side_head = head(t.engine);
    CHECK(rp_engine_world(t.engine, &side_world) == RP_RESULT_OK);
    CHECK(switch_to(t.engine, "main") == RP_RESULT_OK);
    at_backup = head(t.engine);
    describe(t.engine, &world, &branches);

    /* An engine in memory backs up to a save file; then it plays on. */
    in_dir(path, sizeof path, "backup.rp");
    CHECK(rp_engine_backup(t.engine, path, strlen(path)) == RP_RESULT_OK);
    CHECK(exists(path));
    CHECK(advance(t.engine, 180000) == RP_RESULT_OK);
    CHECK(head(t.engine) == at_backup + 1);

    CHECK(rp_engine_open(path, strlen(path), &copy) == RP_RESULT_OK);
    if (copy != NULL) {
        CHECK(head(copy) == at_backup);
        describe(copy, &copy_world, &copy_branches);
        CHECK(same(copy_world, world));
        CHECK(same(copy_branches, branches));
        CHECK(contains(copy_branches, "\"name\":\"side\""));
        rp_string_free(copy_world);
        rp_string_free(copy_branches);
        copy_world = copy_branches = NULL;
        /* The other branch came along, with its own history. */
        CHECK(switch_to(copy, "side") == RP_RESULT_OK);
        CHECK(head(copy) == side_head);
        CHECK(rp_engine_world(copy, &copy_world) == RP_RESULT_OK);
        CHECK(same(copy_world, side_world));
        rp_string_free(copy_world);
        copy_world = NULL;
        CHECK(rp_engine_free(copy) == RP_RESULT_OK);
        copy = NULL;
    }

    /* One branch: its whole history, as the only branch of a new save, still named "side". */
    in_dir(export_path, sizeof export_path, "side.rp");
    CHECK(rp_engine_export_branch(t.engine, "side", 4, export_path, strlen(export_path)) ==
          RP_RESULT_OK);
    CHECK(head(t.engine) == at_backup + 1); /* still on main */
    CHECK(rp_engine_open(export_path, strlen(export_path), &copy) == RP_RESULT_OK);
    if (copy != NULL) {
        CHECK(head(copy) == side_head);
        describe(copy, &copy_world, &copy_branches);
        CHECK(same(copy_world, side_world));
        CHECK(contains(copy_branches, "\"name\":\"side\""));
        CHECK(contains(copy_branches, "\"forked_from\":null"));
        CHECK(!contains(copy_branches, "\"main\""));
        rp_string_free(copy_world);
        rp_string_free(copy_branches);
        /* It plays on by itself. */
        CHECK(advance(copy, 100000) == RP_RESULT_OK);
        CHECK(rp_engine_free(copy) == RP_RESULT_OK);
    }

    rp_string_free(world);
    rp_string_free(branches);
    rp_string_free(side_world);
    CHECK(rp_engine_free(t.engine) == RP_RESULT_OK);
    CHECK(unlink(path) == 0);
    CHECK(unlink(export_path) == 0);
    CHECK(entries() == 0);
}

static void test_refusals_change_nothing_and_leave_no_file(void) {
    struct tavern t;
    char path[4200], missing[4200], taken[4200];
    char *world = NULL, *branches = NULL, *after_world = NULL, *after_branches = NULL;
    FILE *f = NULL;
    uint64_t before = 0;

    CHECK(open_tavern(&t));
    if (t.engine == NULL) {
        return;
    }
    CHECK(rp_engine_fork(t.engine, 2, "early", 5, NULL) == RP_RESULT_OK);
    before = head(t.engine);
    describe(t.engine, &world, &branches);
    in_dir(taken, sizeof taken, "taken.rp");
    f = fopen(taken, "wb");
    CHECK(f != NULL);
    if (f != NULL) {
        fputs("not yours", f);
        fclose(f);
    }

    /* A path that exists is never overwritten. */
    CHECK(rp_engine_backup(t.engine, taken, strlen(taken)) == RP_RESULT_CONFLICT);
    CHECK(contains(rp_last_error(), "exists"));
    CHECK(rp_engine_export_branch(t.engine, "main", 4, taken, strlen(taken)) ==
          RP_RESULT_CONFLICT);
    CHECK(rp_engine_backup(t.engine, dir, strlen(dir)) == RP_RESULT_CONFLICT);
    /* A directory that does not exist cannot be written. */
    in_dir(missing, sizeof missing, "missing/backup.rp");
    CHECK(rp_engine_backup(t.engine, missing, strlen(missing)) == RP_RESULT_STORAGE);
    CHECK(contains(rp_last_error(), "backup.rp"));
    CHECK(rp_engine_export_branch(t.engine, "early", 5, missing, strlen(missing)) ==
          RP_RESULT_STORAGE);
    /* A path that names no file. */
    CHECK(rp_engine_backup(t.engine, "", 0) == RP_RESULT_INVALID);
    in_dir(path, sizeof path, "..");
    CHECK(rp_engine_backup(t.engine, path, strlen(path)) == RP_RESULT_INVALID);
    /* An unknown branch. */
    in_dir(path, sizeof path, "nowhere.rp");
    CHECK(rp_engine_export_branch(t.engine, "nowhere", 7, path, strlen(path)) ==
          RP_RESULT_NOT_FOUND);
    CHECK(contains(rp_last_error(), "nowhere"));
    /* Bad arguments. */
    CHECK(rp_engine_backup(t.engine, NULL, 0) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_backup(t.engine, "\xff.rp", 4) == RP_RESULT_INVALID_UTF8);
    CHECK(rp_engine_backup(NULL, path, strlen(path)) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_export_branch(t.engine, NULL, 0, path, strlen(path)) ==
          RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_export_branch(t.engine, "main", 4, NULL, 0) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_export_branch(NULL, "main", 4, path, strlen(path)) ==
          RP_RESULT_NULL_ARGUMENT);

    /* Nothing was made or left behind, the file that was there is as it was, and the engine
     * is unchanged and plays on. */
    CHECK(entries() == 1);
    f = fopen(taken, "rb");
    CHECK(f != NULL);
    if (f != NULL) {
        char text[32] = {0};
        CHECK(fread(text, 1, sizeof text - 1, f) == 9);
        CHECK(strcmp(text, "not yours") == 0);
        fclose(f);
    }
    CHECK(head(t.engine) == before);
    describe(t.engine, &after_world, &after_branches);
    CHECK(same(after_world, world));
    CHECK(same(after_branches, branches));
    CHECK(advance(t.engine, 60000) == RP_RESULT_OK);
    CHECK(head(t.engine) == before + 1);

    rp_string_free(world);
    rp_string_free(branches);
    rp_string_free(after_world);
    rp_string_free(after_branches);
    CHECK(rp_engine_free(t.engine) == RP_RESULT_OK);
    CHECK(unlink(taken) == 0);
}

static void test_a_save_file_backs_up_but_not_onto_itself(void) {
    char save[4200], path[4200];
    char *world = NULL, *copy_world = NULL;
    rp_engine *engine = NULL, *copy = NULL;

    in_dir(save, sizeof save, "tavern.rp");
    CHECK(rp_engine_create_from_world_file(save, strlen(save), tavern_path, strlen(tavern_path),
                                           0, &engine) == RP_RESULT_OK);
    if (engine == NULL) {
        return;
    }
    CHECK(advance(engine, 60000) == RP_RESULT_OK);
    CHECK(rp_engine_backup(engine, save, strlen(save)) == RP_RESULT_CONFLICT);
    CHECK(contains(rp_last_error(), "own file"));
    CHECK(entries() == 1);

    in_dir(path, sizeof path, "tavern-backup.rp");
    CHECK(rp_engine_backup(engine, path, strlen(path)) == RP_RESULT_OK);
    CHECK(rp_engine_world(engine, &world) == RP_RESULT_OK);
    CHECK(rp_engine_open(path, strlen(path), &copy) == RP_RESULT_OK);
    if (copy != NULL) {
        CHECK(rp_engine_world(copy, &copy_world) == RP_RESULT_OK);
        CHECK(same(copy_world, world));
        rp_string_free(copy_world);
        CHECK(rp_engine_free(copy) == RP_RESULT_OK);
    }
    rp_string_free(world);
    CHECK(rp_engine_free(engine) == RP_RESULT_OK);
    CHECK(entries() == 2);
    CHECK(unlink(path) == 0);
    CHECK(unlink(save) == 0);
}

int main(int argc, char **argv) {
    const char *tmp = getenv("TMPDIR");
    if (argc != 2) {
        fprintf(stderr, "usage: %s PATH/TO/examples/tavern.toml\n", argv[0]);
        return 2;
    }
    tavern_path = argv[1];
    if (tmp == NULL || tmp[0] == '\0') {
        tmp = "/tmp";
    }
    snprintf(dir, sizeof dir, "%s/rp-test-backup-XXXXXX", tmp);
    if (mkdtemp(dir) == NULL) {
        fprintf(stderr, "cannot make a directory under %s\n", tmp);
        return 1;
    }

    test_a_backup_and_an_export_open_as_what_they_copied();
    test_refusals_change_nothing_and_leave_no_file();
    test_a_save_file_backs_up_but_not_onto_itself();

    CHECK(rmdir(dir) == 0);
    return checks_done("test_backup");
}
