/*
 * Tests of memory that fades and reflects, from C (docs/memory.md): a memory's retention read
 * with rp_engine_retention at several times against FSRS's curve (1 + 19/81 · t/S)^-0.5,
 * changing nothing, its stability set by its significance and raised by a recall, pinned
 * memories and gists never fading, and the unhappy paths (unknown ids, NULLs); a memory
 * fading through ticks driven by rp_job: the next tick's reason "decay", a generation of
 * purpose "summary" answered as JSON, the memory at stage "summary" with its text (recalled as
 * it), then a residue (its feeling on Tobias's edge toward Wren, out of recall), then
 * forgotten, and a rewind bringing it back whole; a reflection once Tobias's memories weigh
 * enough (purpose "reflect", an insight stored as a memory of kind "reflection" with its
 * sources), and a hostile one citing Mira's memory (asked again once with the reason, then
 * rejected in the outcome, nothing added); summary answers refused the same way; and drive
 * settings for memory out of range refused with RP_RESULT_INVALID, nothing changed.
 *
 * Build and run (scripts/test-all does this, then runs it under valgrind and
 * AddressSanitizer):
 *
 *   cc -std=c99 -Wall -Wextra -Werror -pedantic -Iinclude \
 *      rp-ffi/tests/c/test_decay.c target/debug/librp.a -lpthread -ldl -lm \
 *      -o test_decay
 *   ./test_decay examples/tavern.toml
 *
 * The one argument is the path of the demo world file.
 *
 * Reports each failed check on stderr and closes with "N passed, N failed";
 * exits 0 only when every check passed.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rp.h"
#include "check.h"
#include "tavern.h"

#define HOUR 3600000LL
#define DAY (24 * HOUR)
/* The stability of a memory of significance 0.5 under the default settings (24 hours). */
#define STABILITY ((double)DAY)

/* Drives that never push anyone to speak, sleep or tire: only memory work is ever due. */
#define QUIET                                                                                 \
    "\"weights\": {\"social_debt\": 0, \"task\": 0, \"curiosity\": 0, \"availability\": 0}, " \
    "\"energy_drain_per_hour\": 0, \"night_start\": 0, \"night_end\": 0"

#define SHIPWRECK \
    "Wren told me about the shipwreck off the northern cape, and the cargo of silver bells"
#define WRECK_SUMMARY "Wren told me of a wreck full of silver"

static unsigned long long ull(uint64_t n) { return (unsigned long long)n; }

/* FSRS's retention after `elapsed` ms for stability `stability` ms. */
static double fsrs(double elapsed, double stability) {
    return pow(1.0 + 19.0 / 81.0 * elapsed / stability, -0.5);
}

/* When retention falls to `r` after the last review, for stability `stability` (ms, rounded
 * up as the engine does). */
static long long due(double r, double stability) {
    return (long long)ceil(stability / (19.0 / 81.0) * (1.0 / (r * r) - 1.0));
}

static int close_to(double a, double b) { return fabs(a - b) <= 1e-12; }

/* The number after the first `key` in `json` (-1 if absent). */
static double number_after(const char *json, const char *key) {
    const char *at = json == NULL ? NULL : strstr(json, key);
    return at == NULL ? -1.0 : strtod(at + strlen(key), NULL);
}

/* How many times `part` occurs in `text`. */
static int occurrences(const char *text, const char *part) {
    int n = 0;
    const char *at = text;
    while (at != NULL && (at = strstr(at, part)) != NULL) {
        n++;
        at += strlen(part);
    }
    return n;
}

static rp_result configure(rp_engine *engine, uint64_t entity, const char *json) {
    return rp_engine_configure_drives(engine, entity, json, strlen(json));
}

/* The tavern with quiet drives and the world's memory settings `extra` (JSON members, or ""),
 * 0 on failure. */
static int quiet_tavern(struct tavern *t, const char *extra) {
    char config[512];
    if (!open_tavern(t)) {
        return 0;
    }
    snprintf(config, sizeof config, "{" QUIET "%s%s}", extra[0] == '\0' ? "" : ", ", extra);
    if (configure(t->engine, 0, config) != RP_RESULT_OK) {
        rp_engine_free(t->engine);
        t->engine = NULL;
        return 0;
    }
    return 1;
}

/* Forms a memory of `owner` witnessed by `with` too (0: no one else) at the world's clock;
 * returns its id (0 on failure). */
static uint64_t remember(rp_engine *engine, uint64_t owner, uint64_t with, const char *text,
                         double significance) {
    char json[512];
    uint64_t id = 0;
    if (with != 0) {
        snprintf(json, sizeof json,
                 "{\"owner\": %llu, \"witnesses\": [%llu], \"text\": \"%s\", "
                 "\"significance\": %g}",
                 ull(owner), ull(with), text, significance);
    } else {
        snprintf(json, sizeof json, "{\"owner\": %llu, \"text\": \"%s\", \"significance\": %g}",
                 ull(owner), text, significance);
    }
    CHECK(rp_engine_add_memory(engine, json, strlen(json), &id) == RP_RESULT_OK);
    return id;
}

static double retention(const rp_engine *engine, uint64_t memory, long long now) {
    double r = -1.0;
    CHECK(rp_engine_retention(engine, memory, now, &r) == RP_RESULT_OK);
    return r;
}

static char *memory_json(const rp_engine *engine, uint64_t memory) {
    char *json = NULL;
    CHECK(rp_engine_memory(engine, memory, &json) == RP_RESULT_OK);
    return json;
}

static char *recall(rp_engine *engine, uint64_t speaker, const char *query, long long now) {
    char *json = NULL;
    CHECK(rp_engine_recall(engine, speaker, query, strlen(query), now, NULL, 0, &json) ==
          RP_RESULT_OK);
    return json;
}

/* Whether `speaker` recalls memory `id` for `query` at `now`. */
static int recalls(rp_engine *engine, uint64_t speaker, const char *query, long long now,
                   uint64_t id) {
    char part[64];
    char *json = recall(engine, speaker, query, now);
    int found = 0;
    snprintf(part, sizeof part, "{\"id\":%llu,", ull(id));
    found = contains(json, part);
    rp_string_free(json);
    return found;
}

/* The JSON of `next_tick` from `now` (NULL on failure). */
static char *next_tick(const rp_engine *engine, long long now) {
    char *json = NULL;
    CHECK(rp_engine_next_tick(engine, now, &json) == RP_RESULT_OK);
    return json;
}

static char *step(rp_engine *engine, rp_job *job) {
    char *json = NULL;
    CHECK(rp_job_step(engine, job, &json) == RP_RESULT_OK);
    return json;
}

/* Answers the job's generation with `text` (which holds no backslash): `{"text": "..."}`, its
 * quotes escaped. */
static rp_result provide_text(rp_engine *engine, rp_job *job, const char *text) {
    size_t n = strlen(text), i = 0, o = 0;
    char *json = malloc(2 * n + 16);
    rp_result r;
    if (json == NULL) {
        return RP_RESULT_PANIC;
    }
    memcpy(json, "{\"text\": \"", 10);
    o = 10;
    for (i = 0; i < n; i++) {
        if (text[i] == '"') {
            json[o++] = '\\';
        }
        json[o++] = text[i];
    }
    memcpy(json + o, "\"}", 3);
    r = rp_job_provide(engine, job, json, strlen(json));
    free(json);
    return r;
}

/* Runs a tick at `now` that must ask for nothing; its outcome (the caller frees it). */
static char *tick_without_model(rp_engine *engine, long long now) {
    rp_job *job = NULL;
    char *json = NULL;
    CHECK(rp_engine_begin_tick(engine, now, NULL, 0, &job) == RP_RESULT_OK);
    if (job == NULL) {
        return NULL;
    }
    json = step(engine, job);
    CHECK(json != NULL && strcmp(json, "{\"step\":\"done\"}") == 0);
    rp_string_free(json);
    json = NULL;
    CHECK(rp_job_finish(engine, job, &json) == RP_RESULT_OK);
    CHECK(rp_job_free(job) == RP_RESULT_OK);
    return json;
}

static void test_retention_is_read_at_any_time_and_changes_nothing(void) {
    struct tavern t;
    static const double days[] = {0.0, 0.5, 1.0, 7.0, 30.0, 90.0};
    char *before_json = NULL, *json = NULL;
    uint64_t before = 0, paid = 0, grave = 0, idle = 0, vow = 0, gist = 0;
    double r = -1.0, reinforced = 0.0;
    size_t i = 0;
    char gist_json[128];

    CHECK(quiet_tavern(&t, ""));
    if (t.engine == NULL) {
        return;
    }
    paid = remember(t.engine, t.tobias, t.wren, "Wren paid for the ale in silver", 0.5);
    before = head(t.engine);
    before_json = memory_json(t.engine, paid);
    /* Not yet reinforced: no stability recorded, the one its significance gives is used. */
    CHECK(contains(before_json, "\"access_count\":0,"));
    CHECK(!contains(before_json, "\"stability\""));
    for (i = 0; i < sizeof days / sizeof days[0]; i++) {
        const long long now = (long long)(days[i] * (double)DAY);
        CHECK(close_to(retention(t.engine, paid, now), fsrs((double)now, STABILITY)));
    }
    CHECK(retention(t.engine, paid, 0) == 1.0);
    CHECK(close_to(retention(t.engine, paid, DAY), 0.9));
    /* Reading changed nothing: not the log, not the memory. */
    CHECK(head(t.engine) == before);
    json = memory_json(t.engine, paid);
    CHECK(json != NULL && before_json != NULL && strcmp(json, before_json) == 0);
    rp_string_free(json);

    /* Significance sets the curve: four times the stability at 1, four times less at 0. */
    grave = remember(t.engine, t.tobias, t.wren, "Wren saved my life", 1.0);
    idle = remember(t.engine, t.tobias, 0, "the rain on the window", 0.0);
    CHECK(close_to(retention(t.engine, grave, 30 * DAY), fsrs(30.0 * DAY, 4 * STABILITY)));
    CHECK(close_to(retention(t.engine, idle, 30 * DAY), fsrs(30.0 * DAY, STABILITY / 4)));
    CHECK(retention(t.engine, grave, 30 * DAY) > retention(t.engine, paid, 30 * DAY));

    /* Pinned memories and event gists never fade. */
    {
        char pinned[160];
        snprintf(pinned, sizeof pinned,
                 "{\"owner\": %llu, \"text\": \"I swore never to sail again\", \"pinned\": true}",
                 ull(t.tobias));
        CHECK(rp_engine_add_memory(t.engine, pinned, strlen(pinned), &vow) == RP_RESULT_OK);
    }
    snprintf(gist_json, sizeof gist_json,
             "{\"owner\": %llu, \"text\": \"The festival ended in rain\", \"kind\": "
             "\"event_gist\"}",
             ull(t.tobias));
    CHECK(rp_engine_add_memory(t.engine, gist_json, strlen(gist_json), &gist) == RP_RESULT_OK);
    CHECK(retention(t.engine, vow, 1000 * DAY) == 1.0);
    CHECK(retention(t.engine, gist, 1000 * DAY) == 1.0);

    /* A recall thirty days on: kept whole again, its stability recorded and raised (FSRS:
       recalled at a low retention, it grows by much), its curve flatter from then on. */
    CHECK(rp_engine_mark_recalled(t.engine, &paid, 1, 30 * DAY, &before) == RP_RESULT_OK);
    CHECK(retention(t.engine, paid, 30 * DAY) == 1.0);
    json = memory_json(t.engine, paid);
    CHECK(contains(json, "\"access_count\":1,"));
    reinforced = number_after(json, "\"stability\":");
    CHECK(reinforced > 3 * STABILITY);
    rp_string_free(json);
    CHECK(close_to(retention(t.engine, paid, 40 * DAY), fsrs(10.0 * DAY, reinforced)));
    CHECK(retention(t.engine, paid, 40 * DAY) > fsrs(10.0 * DAY, STABILITY));

    /* Recall weighs retention; `recency`, its old name, is still read; `half_life_ms` is gone. */
    {
        static const char alias[] = "{\"weights\": {\"relevance\": 0, \"recency\": 1, "
                                    "\"significance\": 0}}";
        static const char gone[] = "{\"half_life_ms\": 1000}";
        char part[64];
        CHECK(rp_engine_recall(t.engine, t.tobias, "ale", 3, 40 * DAY, alias, strlen(alias),
                               &json) == RP_RESULT_OK);
        snprintf(part, sizeof part, "[{\"id\":%llu,", ull(paid));
        CHECK(starts_with(json, part));
        CHECK(close_to(number_after(json, "\"retention\":"), fsrs(10.0 * DAY, reinforced)));
        CHECK(close_to(number_after(json, "\"score\":"), fsrs(10.0 * DAY, reinforced)));
        rp_string_free(json);
        json = NULL;
        CHECK(rp_engine_recall(t.engine, t.tobias, "ale", 3, 40 * DAY, gone, strlen(gone),
                               &json) == RP_RESULT_INVALID);
        CHECK(contains(rp_last_error(), "half_life_ms"));
        CHECK(json == NULL);
    }

    /* Unknown ids and NULLs: refused, nothing written. */
    r = -1.0;
    CHECK(rp_engine_retention(t.engine, 999999, 0, &r) == RP_RESULT_NOT_FOUND);
    CHECK(contains(rp_last_error(), "999999"));
    CHECK(rp_engine_retention(t.engine, t.tobias, 0, &r) == RP_RESULT_NOT_FOUND);
    CHECK(rp_engine_retention(NULL, paid, 0, &r) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_retention(t.engine, paid, 0, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(strcmp(rp_last_error(), "`out_retention` is NULL") == 0);
    CHECK(r == -1.0);
    CHECK(head(t.engine) == before);
    rp_string_free(before_json);
    rp_engine_free(t.engine);
}

static void test_a_memory_fades_in_stages_through_ticks(void) {
    struct tavern t;
    char part[512];
    char *json = NULL;
    rp_job *job = NULL;
    int64_t at = -1;
    bool is_due = false;
    uint64_t wreck = 0, before_decay = 0, before = 0;
    long long summary_at = 0, residue_at = 0, forget_at = 0;

    CHECK(quiet_tavern(&t, ""));
    if (t.engine == NULL) {
        return;
    }
    wreck = remember(t.engine, t.tobias, t.wren, SHIPWRECK, 0.5);
    before_decay = head(t.engine);

    /* Due when its retention falls below 0.6 (summary_below), with no one concerned. */
    summary_at = due(0.6, STABILITY);
    CHECK(rp_engine_next_tick_at(t.engine, 0, &at, &is_due) == RP_RESULT_OK);
    CHECK(is_due && llabs(at - summary_at) <= 1);
    summary_at = at;
    CHECK(retention(t.engine, wreck, summary_at) < 0.6);
    CHECK(retention(t.engine, wreck, summary_at - 1) >= 0.6);
    json = next_tick(t.engine, 0);
    snprintf(part, sizeof part, "{\"at\":%lld,\"entity\":null,\"reason\":{\"kind\":\"decay\"}}",
             summary_at);
    CHECK(json != NULL && strcmp(json, part) == 0);
    rp_string_free(json);

    /* Before then a tick asks for nothing and fades nothing. */
    json = tick_without_model(t.engine, summary_at - 1);
    CHECK(contains(json, "\"faded\":[]"));
    CHECK(contains(json, "\"summarized\":[]"));
    CHECK(contains(json, "\"reflections\":[]"));
    rp_string_free(json);

    /* Then the tick asks the fast model for its summary, as JSON against a schema. */
    CHECK(rp_engine_begin_tick(t.engine, summary_at, NULL, 0, &job) == RP_RESULT_OK);
    json = step(t.engine, job);
    CHECK(starts_with(json, "{\"step\":\"generate\",\"purpose\":{\"kind\":\"summary\"}"));
    CHECK(contains(json, "shipwreck off the northern cape"));
    snprintf(part, sizeof part, "id %llu (with Wren)", ull(wreck));
    CHECK(contains(json, part));
    CHECK(contains(json, "\"json_schema\":{"));
    rp_string_free(json);
    snprintf(part, sizeof part,
             "{\"summaries\": [{\"id\": %llu, \"summary\": \"" WRECK_SUMMARY
             "\", \"feeling\": \"fond\", \"about\": \"Wren\"}]}",
             ull(wreck));
    CHECK(provide_text(t.engine, job, part) == RP_RESULT_OK);
    json = step(t.engine, job);
    CHECK(json != NULL && strcmp(json, "{\"step\":\"done\"}") == 0);
    rp_string_free(json);
    CHECK(rp_job_finish(t.engine, job, &json) == RP_RESULT_OK);
    snprintf(part, sizeof part, "\"summarized\":[%llu]", ull(wreck));
    CHECK(contains(json, part));
    CHECK(contains(json, "\"faded\":[]"));
    rp_string_free(json);
    CHECK(rp_job_free(job) == RP_RESULT_OK);
    job = NULL;

    /* At stage "summary" with its text, the feeling it left and whom it was about. */
    json = memory_json(t.engine, wreck);
    CHECK(contains(json, "\"decay\":\"summary\""));
    CHECK(contains(json, "\"text\":\"" SHIPWRECK "\""));
    CHECK(contains(json, "\"summary\":\"" WRECK_SUMMARY "\""));
    CHECK(contains(json, "\"feeling\":\"fond\""));
    snprintf(part, sizeof part, "\"about\":%llu", ull(t.wren));
    CHECK(contains(json, part));
    rp_string_free(json);
    /* Still recalled, by what it was about, and shown as its summary. */
    json = recall(t.engine, t.tobias, "shipwreck", summary_at);
    snprintf(part, sizeof part, "[{\"id\":%llu,", ull(wreck));
    CHECK(starts_with(json, part));
    CHECK(contains(json, "\"text\":\"" WRECK_SUMMARY "\"}]"));
    CHECK(!contains(json, "northern cape"));
    CHECK(contains(json, "\"retention\":"));
    CHECK(!contains(json, "\"recency\""));
    rp_string_free(json);

    /* Then a residue, which needs no model: its feeling on Tobias's edge toward Wren. */
    residue_at = due(0.35, STABILITY);
    CHECK(rp_engine_next_tick_at(t.engine, summary_at, &at, &is_due) == RP_RESULT_OK);
    CHECK(is_due && llabs(at - residue_at) <= 1);
    residue_at = at;
    json = next_tick(t.engine, summary_at);
    CHECK(contains(json, "\"entity\":null,\"reason\":{\"kind\":\"decay\"}"));
    rp_string_free(json);
    json = tick_without_model(t.engine, residue_at);
    snprintf(part, sizeof part, "\"faded\":[{\"id\":%llu,\"stage\":\"residue\"}]", ull(wreck));
    CHECK(contains(json, part));
    rp_string_free(json);
    json = memory_json(t.engine, wreck);
    CHECK(contains(json, "\"decay\":\"residue\""));
    rp_string_free(json);
    CHECK(rp_engine_edge(t.engine, t.tobias, t.wren, &json) == RP_RESULT_OK);
    CHECK(contains(json, "\"imprints\":[\"fond\"]"));
    rp_string_free(json);
    CHECK(!recalls(t.engine, t.tobias, "shipwreck silver wreck", residue_at, wreck));

    /* Then forgotten: out of recall; nothing more can fade. */
    forget_at = due(0.2, STABILITY);
    CHECK(rp_engine_next_tick_at(t.engine, residue_at, &at, &is_due) == RP_RESULT_OK);
    CHECK(is_due && llabs(at - forget_at) <= 1);
    forget_at = at;
    json = tick_without_model(t.engine, forget_at);
    snprintf(part, sizeof part, "\"faded\":[{\"id\":%llu,\"stage\":\"forgotten\"}]",
             ull(wreck));
    CHECK(contains(json, part));
    rp_string_free(json);
    json = memory_json(t.engine, wreck);
    CHECK(contains(json, "\"decay\":\"forgotten\""));
    rp_string_free(json);
    CHECK(!recalls(t.engine, t.tobias, "shipwreck silver wreck", forget_at, wreck));
    CHECK(rp_engine_next_tick_at(t.engine, forget_at, &at, &is_due) == RP_RESULT_OK);
    CHECK(!is_due && at == 0);
    /* The log has each step, with its own event. */
    CHECK(rp_engine_events(t.engine, before_decay + 1, head(t.engine), &json) == RP_RESULT_OK);
    CHECK(occurrences(json, "\"memories_summarized\"") == 1);
    CHECK(occurrences(json, "\"decay_passed\"") >= 2);
    CHECK(contains(json, WRECK_SUMMARY));
    rp_string_free(json);

    /* Still in the log: a rewind brings it back whole. */
    before = head(t.engine);
    CHECK(before > before_decay);
    json = NULL;
    CHECK(rp_engine_rewind(t.engine, before_decay, &json) == RP_RESULT_OK);
    rp_string_free(json);
    json = memory_json(t.engine, wreck);
    CHECK(contains(json, "\"decay\":\"full\""));
    CHECK(!contains(json, "\"summary\""));
    rp_string_free(json);
    CHECK(recalls(t.engine, t.tobias, "shipwreck", 0, wreck));
    CHECK(rp_engine_edge(t.engine, t.tobias, t.wren, &json) == RP_RESULT_OK);
    CHECK(!contains(json, "\"imprints\""));
    rp_string_free(json);
    rp_engine_free(t.engine);
}

static void test_a_hostile_summary_is_asked_again_once_then_left(void) {
    struct tavern t;
    char part[512], answer[512];
    char *json = NULL;
    rp_job *job = NULL;
    int64_t at = -1;
    bool is_due = false;
    uint64_t song = 0, bread = 0, before = 0;
    long long summary_at = 0;
    int round = 0;

    CHECK(quiet_tavern(&t, ""));
    if (t.engine == NULL) {
        return;
    }
    song = remember(t.engine, t.tobias, t.wren, "Wren sang by the fire", 0.5);
    /* Graver: not yet due when Tobias's is. */
    bread = remember(t.engine, t.mira, t.wren, "Mira burned the bread", 1.0);
    CHECK(rp_engine_next_tick_at(t.engine, 0, &at, &is_due) == RP_RESULT_OK);
    summary_at = at;
    CHECK(is_due && summary_at > 0);
    before = head(t.engine);

    /* The summary of Mira's memory, under Tobias's request: refused with the reason, asked
       once more, then nothing recorded. */
    CHECK(rp_engine_begin_tick(t.engine, summary_at, NULL, 0, &job) == RP_RESULT_OK);
    snprintf(answer, sizeof answer, "{\"summaries\": [{\"id\": %llu, \"summary\": \"bread\"}]}",
             ull(bread));
    for (round = 0; round < 2; round++) {
        json = step(t.engine, job);
        CHECK(contains(json, "\"purpose\":{\"kind\":\"summary\"}"));
        CHECK(contains(json, "sang by the fire"));
        CHECK(!contains(json, "burned the bread"));
        CHECK(contains(json, "could not be used") == (round == 1));
        if (round == 1) {
            snprintf(part, sizeof part, "id %llu: not one of the memories listed", ull(bread));
            CHECK(contains(json, part));
        }
        rp_string_free(json);
        CHECK(provide_text(t.engine, job, answer) == RP_RESULT_OK);
    }
    json = step(t.engine, job);
    CHECK(json != NULL && strcmp(json, "{\"step\":\"done\"}") == 0);
    rp_string_free(json);
    CHECK(rp_job_finish(t.engine, job, &json) == RP_RESULT_OK);
    CHECK(contains(json, "\"summarized\":[]"));
    rp_string_free(json);
    CHECK(rp_job_free(job) == RP_RESULT_OK);
    json = memory_json(t.engine, song);
    CHECK(contains(json, "\"decay\":\"full\""));
    rp_string_free(json);
    json = memory_json(t.engine, bread);
    CHECK(contains(json, "\"decay\":\"full\""));
    CHECK(!contains(json, "\"summary\""));
    rp_string_free(json);
    /* The wait is recorded: asked again in an hour, not in a loop. */
    CHECK(head(t.engine) > before);
    CHECK(rp_engine_next_tick_at(t.engine, summary_at, &at, &is_due) == RP_RESULT_OK);
    CHECK(is_due && at == summary_at + HOUR);
    rp_engine_free(t.engine);
}

/* The tavern in which Tobias reflects once his new memories weigh 1 × (1.5 − his curiosity,
 * 0.6) = 0.9, with two memories of his own (0.4 and 0.7) and one of Mira's; their ids. */
struct reflective {
    struct tavern t;
    uint64_t brother, harbour, recipe;
};

static int reflective_tavern(struct reflective *r) {
    char *json = NULL;
    int ok = 0;
    memset(r, 0, sizeof *r);
    if (!quiet_tavern(&r->t, "\"reflect_threshold\": 1")) {
        return 0;
    }
    r->brother = remember(r->t.engine, r->t.tobias, r->t.wren, "Wren asked about my brother", 0.4);
    /* 0.4 is below his threshold: no reflection due. */
    json = next_tick(r->t.engine, 0);
    CHECK(!contains(json, "\"reflect\""));
    rp_string_free(json);
    r->harbour =
        remember(r->t.engine, r->t.tobias, r->t.wren, "Wren asked about the harbour", 0.7);
    r->recipe = remember(r->t.engine, r->t.mira, 0, "my secret recipe for the stew", 0.6);
    ok = r->brother != 0 && r->harbour != 0 && r->recipe != 0;
    if (!ok) {
        rp_engine_free(r->t.engine);
        r->t.engine = NULL;
    }
    return ok;
}

static void test_tobias_reflects_citing_his_own_memories(void) {
    struct reflective r;
    char part[512];
    char *json = NULL, *before_recipe = NULL;
    rp_job *job = NULL;
    uint64_t insight = 0;

    CHECK(reflective_tavern(&r));
    if (r.t.engine == NULL) {
        return;
    }
    json = next_tick(r.t.engine, 0);
    snprintf(part, sizeof part, "{\"at\":0,\"entity\":%llu,\"reason\":{\"kind\":\"reflect\"}}",
             ull(r.t.tobias));
    CHECK(json != NULL && strcmp(json, part) == 0);
    rp_string_free(json);
    before_recipe = memory_json(r.t.engine, r.recipe);

    CHECK(rp_engine_begin_tick(r.t.engine, 0, NULL, 0, &job) == RP_RESULT_OK);
    json = step(r.t.engine, job);
    snprintf(part, sizeof part,
             "{\"step\":\"generate\",\"purpose\":{\"kind\":\"reflect\",\"speaker\":%llu}",
             ull(r.t.tobias));
    CHECK(starts_with(json, part));
    CHECK(contains(json, "You are Tobias Reed."));
    CHECK(contains(json, "my brother") && contains(json, "harbour"));
    CHECK(!contains(json, "secret recipe"));
    CHECK(contains(json, "\"json_schema\":{"));
    rp_string_free(json);
    snprintf(part, sizeof part,
             "{\"insights\": [{\"text\": \"Wren is curious about my past\", \"sources\": "
             "[%llu, %llu], \"significance\": 0.8}]}",
             ull(r.harbour), ull(r.brother));
    CHECK(provide_text(r.t.engine, job, part) == RP_RESULT_OK);
    json = step(r.t.engine, job);
    CHECK(json != NULL && strcmp(json, "{\"step\":\"done\"}") == 0);
    rp_string_free(json);
    CHECK(rp_job_finish(r.t.engine, job, &json) == RP_RESULT_OK);
    snprintf(part, sizeof part, "\"reflections\":[{\"entity\":%llu,\"insights\":[",
             ull(r.t.tobias));
    CHECK(contains(json, part));
    insight = (uint64_t)number_after(json, part);
    CHECK(insight > r.recipe);
    CHECK(contains(json, "],\"rejected\":null}]"));
    rp_string_free(json);
    CHECK(rp_job_free(job) == RP_RESULT_OK);

    /* The insight is his memory of kind "reflection", witnessed by him alone, citing its
       sources (in id order). */
    json = memory_json(r.t.engine, insight);
    snprintf(part, sizeof part, "\"owner\":%llu,\"witnesses\":[%llu],", ull(r.t.tobias),
             ull(r.t.tobias));
    CHECK(contains(json, part));
    CHECK(contains(json, "\"text\":\"Wren is curious about my past\""));
    CHECK(contains(json, "\"kind\":\"reflection\""));
    CHECK(contains(json, "\"significance\":0.8,"));
    snprintf(part, sizeof part, "\"sources\":[%llu,%llu]", ull(r.brother), ull(r.harbour));
    CHECK(contains(json, part));
    rp_string_free(json);
    /* Its sources are reinforced; Mira's memory is untouched. */
    json = memory_json(r.t.engine, r.brother);
    CHECK(contains(json, "\"access_count\":1,"));
    rp_string_free(json);
    json = memory_json(r.t.engine, r.recipe);
    CHECK(json != NULL && before_recipe != NULL && strcmp(json, before_recipe) == 0);
    rp_string_free(json);
    /* It is recalled like any memory of his, and the count starts again. */
    CHECK(recalls(r.t.engine, r.t.tobias, "curious past", 0, insight));
    CHECK(!recalls(r.t.engine, r.t.mira, "curious past", 0, insight));
    json = next_tick(r.t.engine, 0);
    CHECK(!contains(json, "\"reflect\""));
    rp_string_free(json);
    CHECK(rp_engine_events(r.t.engine, 1, head(r.t.engine), &json) == RP_RESULT_OK);
    CHECK(occurrences(json, "\"reflected\"") == 1);
    rp_string_free(json);
    rp_string_free(before_recipe);
    rp_engine_free(r.t.engine);
}

static void test_a_reflection_citing_another_s_memory_is_rejected(void) {
    struct reflective r;
    char answer[512], part[256];
    char *json = NULL, *before_recipe = NULL, *before_mine = NULL, *feedback = NULL;
    rp_job *job = NULL;
    int round = 0;

    CHECK(reflective_tavern(&r));
    if (r.t.engine == NULL) {
        return;
    }
    before_recipe = memory_json(r.t.engine, r.recipe);
    CHECK(rp_engine_memories_of(r.t.engine, r.t.tobias, &before_mine) == RP_RESULT_OK);
    snprintf(answer, sizeof answer,
             "{\"insights\": [{\"text\": \"the recipe is cumin\", \"sources\": [%llu, %llu]}]}",
             ull(r.brother), ull(r.recipe));
    CHECK(rp_engine_begin_tick(r.t.engine, 0, NULL, 0, &job) == RP_RESULT_OK);
    for (round = 0; round < 2; round++) {
        json = step(r.t.engine, job);
        snprintf(part, sizeof part, "\"purpose\":{\"kind\":\"reflect\",\"speaker\":%llu}",
                 ull(r.t.tobias));
        CHECK(contains(json, part));
        if (round == 1) {
            /* Asked again once, with the reason, which names the memory and not what it
               holds. */
            feedback = json == NULL ? NULL : strstr(json, "That answer could not be used");
            CHECK(feedback != NULL);
            snprintf(part, sizeof part, "%llu is not a memory of", ull(r.recipe));
            CHECK(contains(feedback, part));
            CHECK(!contains(feedback, "recipe") && !contains(feedback, "stew"));
        }
        rp_string_free(json);
        CHECK(provide_text(r.t.engine, job, answer) == RP_RESULT_OK);
    }
    json = step(r.t.engine, job);
    CHECK(json != NULL && strcmp(json, "{\"step\":\"done\"}") == 0);
    rp_string_free(json);
    CHECK(rp_job_finish(r.t.engine, job, &json) == RP_RESULT_OK);
    snprintf(part, sizeof part, "\"reflections\":[{\"entity\":%llu,\"insights\":[],\"rejected\":\"",
             ull(r.t.tobias));
    CHECK(contains(json, part));
    rp_string_free(json);
    CHECK(rp_job_free(job) == RP_RESULT_OK);

    /* Nothing added, Mira's memory untouched; the rejection is recorded, so Tobias is not
       asked again at once. */
    CHECK(rp_engine_memories_of(r.t.engine, r.t.tobias, &json) == RP_RESULT_OK);
    CHECK(json != NULL && before_mine != NULL && strcmp(json, before_mine) == 0);
    CHECK(!contains(json, "cumin"));
    rp_string_free(json);
    json = memory_json(r.t.engine, r.recipe);
    CHECK(json != NULL && before_recipe != NULL && strcmp(json, before_recipe) == 0);
    rp_string_free(json);
    json = next_tick(r.t.engine, 0);
    CHECK(!contains(json, "\"reflect\""));
    rp_string_free(json);
    CHECK(rp_engine_events(r.t.engine, 1, head(r.t.engine), &json) == RP_RESULT_OK);
    CHECK(occurrences(json, "\"reflected\"") == 1);
    CHECK(!contains(json, "cumin"));
    rp_string_free(json);
    rp_string_free(before_recipe);
    rp_string_free(before_mine);
    rp_engine_free(r.t.engine);
}

static void test_bad_memory_settings_are_refused_and_change_nothing(void) {
    struct tavern t;
    static const char *const bad[] = {
        "{\"summary_below\": 2}",
        "{\"reflect_memories\": 0}",
        "{\"summary_below\": 0.3, \"residue_below\": 0.5, \"forget_below\": 0.1}",
        "{\"memory_stability_hours\": 0}",
        "{\"forget_below\": -0.1}",
        "{\"consolidated_days\": -1}",
        "{\"reflect_threshold\": 0}",
        "{\"summary_batch\": 101}",
        "{\"keep_recalls\": -1}",
        "{\"keep_recalls\": 1.5}",
        "{\"summary_below\": \"low\"}",
    };
    char *json = NULL, *world_before = NULL;
    uint64_t before = 0, fire = 0;
    size_t i = 0;

    CHECK(quiet_tavern(&t, ""));
    if (t.engine == NULL) {
        return;
    }
    fire = remember(t.engine, t.tobias, t.wren, "Wren sang by the fire", 0.5);
    before = head(t.engine);
    CHECK(rp_engine_world(t.engine, &world_before) == RP_RESULT_OK);
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK(configure(t.engine, 0, bad[i]) == RP_RESULT_INVALID);
        CHECK(configure(t.engine, t.tobias, bad[i]) == RP_RESULT_INVALID);
    }
    CHECK(head(t.engine) == before);
    CHECK(rp_engine_world(t.engine, &json) == RP_RESULT_OK);
    CHECK(json != NULL && world_before != NULL && strcmp(json, world_before) == 0);
    rp_string_free(json);
    json = NULL;
    CHECK(configure(t.engine, 0, "{\"summary_below\": 2}") == RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "summary_below"));
    CHECK(configure(t.engine, 0, "{\"reflect_memories\": 0}") == RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "reflect_memories"));
    CHECK(configure(t.engine, t.tobias, "{\"summary_below\": 0.3, \"residue_below\": 0.5, "
                                        "\"forget_below\": 0.1}") == RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "residue_below"));
    /* Each setting fine on its own, but the thresholds out of order once the entity's are laid
       over the world's: the same kind. */
    CHECK(configure(t.engine, 0, "{" QUIET ", \"summary_below\": 0.5}") == RP_RESULT_OK);
    before = head(t.engine);
    CHECK(configure(t.engine, t.tobias, "{\"residue_below\": 0.55}") == RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "residue_below"));
    CHECK(configure(t.engine, 999999, "{\"summary_below\": 0.5}") == RP_RESULT_NOT_FOUND);
    CHECK(configure(t.engine, t.wren, "{\"summary_below\": 0.5}") == RP_RESULT_INVALID);
    CHECK(head(t.engine) == before);
    CHECK(close_to(retention(t.engine, fire, 3 * DAY), fsrs(3.0 * DAY, STABILITY)));

    /* A setting in range takes: a longer stability, a flatter curve. */
    CHECK(configure(t.engine, 0, "{" QUIET ", \"memory_stability_hours\": 48}") == RP_RESULT_OK);
    CHECK(close_to(retention(t.engine, fire, 3 * DAY), fsrs(3.0 * DAY, 2 * STABILITY)));
    CHECK(configure(t.engine, t.tobias, "{\"memory_stability_hours\": 12}") == RP_RESULT_OK);
    CHECK(close_to(retention(t.engine, fire, 3 * DAY), fsrs(3.0 * DAY, STABILITY / 2)));
    CHECK(head(t.engine) == before + 2);
    rp_string_free(world_before);
    rp_engine_free(t.engine);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s PATH/TO/examples/tavern.toml\n", argv[0]);
        return 2;
    }
    tavern_path = argv[1];

    test_retention_is_read_at_any_time_and_changes_nothing();
    test_a_memory_fades_in_stages_through_ticks();
    test_a_hostile_summary_is_asked_again_once_then_left();
    test_tobias_reflects_citing_his_own_memories();
    test_a_reflection_citing_another_s_memory_is_rejected();
    test_bad_memory_settings_are_refused_and_change_nothing();

    return checks_done("test_decay");
}
