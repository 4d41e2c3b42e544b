/*
 * Tests of the memory index kept beside a save, from C (docs/memory.md, "The index beside the
 * save"): the first recall builds it beside the save; reopened, the save reads it back and
 * recalls the same; deleted, it is built again with the same answers; and the unhappy paths:
 * NULL arguments.
 *
 * Build and run (scripts/test-all does this, then under valgrind and AddressSanitizer):
 *
 *   cc -std=c99 -Wall -Wextra -Werror -pedantic -Iinclude \
 *      rp-ffi/tests/c/test_index.c target/debug/librp.a -lpthread -ldl -lm -o test_index
 *   ./test_index examples/tavern.toml
 *
 * Save files go to a fresh directory under $TMPDIR (or /tmp), removed at the end.
 *
 * Reports each failed check on stderr and closes with "N passed, N failed"; exits 0 only when
 * every check passed.
 */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rp.h"
#include "check.h"

static const char *tavern_path = NULL;
static char dir[4096];

/* Removes directory `path` and the files in it (the index keeps no subdirectories). */
static void remove_dir(const char *path) {
    DIR *d = opendir(path);
    struct dirent *e;
    char file[8192];
    if (d == NULL) {
        return;
    }
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) {
            continue;
        }
        snprintf(file, sizeof file, "%s/%s", path, e->d_name);
        unlink(file);
    }
    closedir(d);
    rmdir(path);
}

/* What Tobias recalls of the letter, as JSON the caller frees. */
static char *recall(rp_engine *engine, uint64_t tobias) {
    char *json = NULL;
    CHECK(rp_engine_recall(engine, tobias, "sealed letter", 13, 600000, NULL, 0, &json) ==
          RP_RESULT_OK);
    return json;
}

static char *origin(rp_engine *engine) {
    char *json = NULL;
    CHECK(rp_engine_memory_index_origin(engine, &json) == RP_RESULT_OK);
    return json;
}

static void test_the_index_is_kept_beside_the_save(void) {
    char save[4200], sidecar[4300];
    rp_engine *engine = NULL;
    uint64_t tobias = 0, seq = 0;
    char *first = NULL, *again = NULL, *json = NULL;
    struct stat st;
    const char *memory =
        "[{\"memory_added\": {\"memory\": {\"id\": 900, \"owner\": %llu, \"witnesses\": [%llu],"
        " \"text\": \"Wren carries a sealed letter.\", \"kind\": \"utterance\","
        " \"significance\": 0.5, \"created\": 0}}}]";
    char events[1024];

    snprintf(save, sizeof save, "%s/tavern.rp", dir);
    snprintf(sidecar, sizeof sidecar, "%s.index", save);
    CHECK(rp_engine_create_from_world_file(save, strlen(save), tavern_path, strlen(tavern_path),
                                           0, &engine) == RP_RESULT_OK);
    if (engine == NULL) {
        return;
    }
    CHECK(rp_engine_entity_id(engine, "tobias", 6, &tobias) == RP_RESULT_OK);
    snprintf(events, sizeof events, memory, (unsigned long long)tobias,
             (unsigned long long)tobias);
    CHECK(rp_engine_append(engine, events, strlen(events), &seq) == RP_RESULT_OK);

    json = origin(engine);
    CHECK(json != NULL && strcmp(json, "null") == 0);
    rp_string_free(json);
    first = recall(engine, tobias);
    CHECK(contains(first, "Wren carries a sealed letter."));
    json = origin(engine);
    CHECK(contains(json, "\"built\""));
    rp_string_free(json);
    CHECK(stat(sidecar, &st) == 0 && S_ISDIR(st.st_mode));
    CHECK(rp_engine_free(engine) == RP_RESULT_OK);

    /* Reopened: read back, the same answers. */
    engine = NULL;
    CHECK(rp_engine_open(save, strlen(save), &engine) == RP_RESULT_OK);
    again = recall(engine, tobias);
    CHECK(first != NULL && again != NULL && strcmp(first, again) == 0);
    rp_string_free(again);
    json = origin(engine);
    CHECK(contains(json, "\"loaded\""));
    rp_string_free(json);
    CHECK(rp_engine_free(engine) == RP_RESULT_OK);

    /* Deleted: built again, the same answers; one speaker at a time, so it holds Tobias's
     * memories and says so (docs/memory.md). */
    remove_dir(sidecar);
    engine = NULL;
    CHECK(rp_engine_open(save, strlen(save), &engine) == RP_RESULT_OK);
    again = recall(engine, tobias);
    CHECK(again != NULL && strcmp(first, again) == 0);
    rp_string_free(again);
    json = origin(engine);
    CHECK(contains(json, "\"built\""));
    rp_string_free(json);
    {
        char meta_path[4400];
        char meta[8192];
        char owners[64];
        size_t n = 0;
        FILE *f;
        snprintf(meta_path, sizeof meta_path, "%s/meta.json", sidecar);
        f = fopen(meta_path, "rb");
        CHECK(f != NULL);
        if (f != NULL) {
            n = fread(meta, 1, sizeof meta - 1, f);
            fclose(f);
        }
        meta[n] = '\0';
        snprintf(owners, sizeof owners, " owners=%llu\"", (unsigned long long)tobias);
        CHECK(strstr(meta, owners) != NULL);
    }

    CHECK(rp_engine_memory_index_origin(engine, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_memory_index_origin(NULL, &json) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_free(engine) == RP_RESULT_OK);
    rp_string_free(first);
    remove_dir(sidecar);
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
    snprintf(dir, sizeof dir, "%s/rp-test-index-XXXXXX", tmp);
    if (mkdtemp(dir) == NULL) {
        fprintf(stderr, "cannot make a directory under %s\n", tmp);
        return 1;
    }
    test_the_index_is_kept_beside_the_save();
    CHECK(rmdir(dir) == 0);
    return checks_done("test_index");
}
