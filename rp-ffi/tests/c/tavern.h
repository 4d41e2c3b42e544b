/*
 * The tavern world the C tests share: its path (the test program's argument), an engine
 * loaded from it in memory with the ids the tests use, and the engine's head.
 * Include after check.h.
 */
#ifndef RP_TEST_TAVERN_H
#define RP_TEST_TAVERN_H

#include <stdint.h>
#include <string.h>

#include "rp.h"
#include "check.h"

static const char *tavern_path = NULL;

/* The tavern in memory: its people, an item and its rooms. */
struct tavern {
    rp_engine *engine;
    uint64_t wren, mira, tobias, letter;
    uint64_t hall, booth, bar;
};

/* Loads the tavern into a new in-memory engine; 0 (and no engine) on failure. */
static inline int open_tavern(struct tavern *t) {
    size_t events = 0;
    memset(t, 0, sizeof *t);
    if (rp_engine_in_memory("test", 4, 0, &t->engine) != RP_RESULT_OK) {
        return 0;
    }
    if (rp_engine_load_world_file(t->engine, tavern_path, strlen(tavern_path), &events) !=
            RP_RESULT_OK ||
        rp_engine_entity_id(t->engine, "wren", 4, &t->wren) != RP_RESULT_OK ||
        rp_engine_entity_id(t->engine, "mira", 4, &t->mira) != RP_RESULT_OK ||
        rp_engine_entity_id(t->engine, "tobias", 6, &t->tobias) != RP_RESULT_OK ||
        rp_engine_entity_id(t->engine, "letter", 6, &t->letter) != RP_RESULT_OK ||
        rp_engine_container_id(t->engine, "tavern", 6, &t->hall) != RP_RESULT_OK ||
        rp_engine_container_id(t->engine, "booth", 5, &t->booth) != RP_RESULT_OK ||
        rp_engine_container_id(t->engine, "bar", 3, &t->bar) != RP_RESULT_OK) {
        rp_engine_free(t->engine);
        t->engine = NULL;
        return 0;
    }
    return 1;
}

/* The engine's head (a failed call is a failed check, and 0). */
static inline uint64_t head(const rp_engine *engine) {
    uint64_t seq = 0;
    CHECK(rp_engine_head(engine, &seq) == RP_RESULT_OK);
    return seq;
}

#endif
