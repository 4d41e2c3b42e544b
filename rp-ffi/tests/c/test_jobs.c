/*
 * Tests of jobs from C (rp_job: closing a scene, a time skip, a world query, a tick), scenes,
 * world queries and graph queries: a scene of the booth closed through the poll form with one
 * summary per witness, each in its own owner's memories only; a time jump run through
 * rp_engine_run_job across scheduled scoped events, which fire in time order, then undone by
 * rp_engine_rewind with the world JSON restored byte for byte; a query answered in one round
 * (poll form) and one after a needs-more-info round (callback form), both recorded; a graph
 * request of each op; a semantic tick whose "embed" step is answered with
 * rp_job_provide_embeddings, and a tick whose "act" step is answered (or refused) with
 * rp_job_provide_action; and the unhappy paths: NULL arguments, freed jobs, a job used with
 * another engine, bad JSON, vectors or actions a job did not ask for, finished jobs, a failing
 * callback (nothing committed), unknown ids.
 *
 * Build and run (scripts/test-all does this, then runs it under valgrind and
 * AddressSanitizer):
 *
 *   cc -std=c99 -Wall -Wextra -Werror -pedantic -Iinclude \
 *      rp-ffi/tests/c/test_jobs.c target/debug/librp.a -lpthread -ldl -lm \
 *      -o test_jobs
 *   ./test_jobs examples/tavern.toml
 *
 * The one argument is the path of the demo world file.
 *
 * Reports each failed check on stderr and closes with "N passed, N failed";
 * exits 0 only when every check passed.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rp.h"
#include "check.h"
#include "tavern.h"

#define HOUR 3600000LL
#define NOON (12 * HOUR)

#define TOBIAS_LINE "Still here, traveller? The lights will be out on the marsh tonight."

#define WREN_SUMMARY "I asked Tobias what he saw; he spoke of lights on the marsh."
#define TOBIAS_SUMMARY "The traveller asked about the lights. I told the truth for once."

static unsigned long long ull(uint64_t n) { return (unsigned long long)n; }

/* The number after the first `key` in `json` (0 if absent). */
static uint64_t number_after(const char *json, const char *key) {
    const char *at = json == NULL ? NULL : strstr(json, key);
    return at == NULL ? 0 : (uint64_t)strtoull(at + strlen(key), NULL, 10);
}

/* Wren asks Tobias something in the booth at `now` (a finished turn, poll form): the booth's
 * scene gets a line. 1 on success. */
static int booth_turn(const struct tavern *t, long long now) {
    static const char reply[] = "{\"text\": \"Lights, out past the reeds.\"}";
    char input[256];
    char *json = NULL;
    rp_turn *turn = NULL;
    int ok;
    snprintf(input, sizeof input,
             "{\"speaker\": %llu, \"text\": \"Tobias, what did you see out there?\", "
             "\"now\": %lld}",
             ull(t->wren), now);
    if (rp_turn_begin(t->engine, input, strlen(input), NULL, 0, &turn) != RP_RESULT_OK) {
        return 0;
    }
    ok = rp_turn_provide(t->engine, turn, reply, strlen(reply)) == RP_RESULT_OK;
    ok = ok && rp_turn_finish(t->engine, turn, &json) == RP_RESULT_OK;
    rp_string_free(json);
    rp_turn_free(turn);
    return ok;
}

static char *step(rp_engine *engine, rp_job *job) {
    char *json = NULL;
    CHECK(rp_job_step(engine, job, &json) == RP_RESULT_OK);
    return json;
}

static rp_result provide(rp_engine *engine, rp_job *job, const char *result) {
    return rp_job_provide(engine, job, result, strlen(result));
}

static rp_result embed(rp_engine *engine, rp_job *job, const char *vectors) {
    return rp_job_provide_embeddings(engine, job, vectors, strlen(vectors));
}

/* Answers a job's "act" step with `answer` (JSON) or `refusal`; NULL for the one not given. */
static rp_result act(rp_engine *engine, rp_job *job, const char *answer, const char *refusal) {
    return rp_job_provide_action(engine, job, answer, answer == NULL ? 0 : strlen(answer),
                                 refusal, refusal == NULL ? 0 : strlen(refusal));
}

static char *read_of(rp_result (*read)(const rp_engine *, uint64_t, char **),
                     const rp_engine *engine, uint64_t id) {
    char *json = NULL;
    CHECK(read(engine, id, &json) == RP_RESULT_OK);
    return json;
}

static char *world_json(const rp_engine *engine) {
    char *json = NULL;
    CHECK(rp_engine_world(engine, &json) == RP_RESULT_OK);
    return json;
}

/* The summary of whoever the step's prompt is for: Wren's or Tobias's, as a result JSON. */
static const char *summary_for(const char *step_json) {
    if (contains(step_json, "You are Wren.")) {
        return "{\"text\": \"" WREN_SUMMARY "\"}";
    }
    if (contains(step_json, "You are Tobias Reed.")) {
        return "{\"text\": \"" TOBIAS_SUMMARY "\"}";
    }
    return "{\"text\": \"someone else\"}";
}

static void test_a_scene_closes_with_a_summary_per_witness_in_its_own_store(void) {
    struct tavern t;
    char part[128];
    char *json = NULL;
    char *first = NULL;
    char *second = NULL;
    rp_job *job = NULL;
    uint64_t scene = 0, again = 0, before = 0;

    CHECK(open_tavern(&t));
    if (t.engine == NULL) {
        return;
    }
    CHECK(booth_turn(&t, 1000));
    /* The turn opened the booth's scene: Wren and Tobias witnessed its line. */
    CHECK(rp_engine_current_scene(t.engine, t.booth, 0, &scene) == RP_RESULT_OK);
    CHECK(rp_engine_current_scene(t.engine, 0, t.tobias, &again) == RP_RESULT_OK);
    CHECK(scene != 0 && again == scene);
    json = read_of(rp_engine_scene, t.engine, scene);
    snprintf(part, sizeof part, "{\"id\":%llu,\"container\":%llu,", ull(scene), ull(t.booth));
    CHECK(starts_with(json, part));
    CHECK(contains(json, "\"closed\":null"));
    snprintf(part, sizeof part, "%llu", ull(t.wren));
    CHECK(contains(json, part));
    snprintf(part, sizeof part, "%llu", ull(t.tobias));
    CHECK(contains(json, part));
    CHECK(contains(json, "\"lines\":2"));
    rp_string_free(json);

    /* Closing it asks each witness for its own summary, then commits. */
    before = head(t.engine);
    CHECK(rp_engine_begin_close_current_scene(t.engine, t.booth, 2000, NULL, 0, &job) ==
          RP_RESULT_OK);
    CHECK(head(t.engine) == before);
    first = step(t.engine, job);
    CHECK(starts_with(first, "{\"step\":\"generate\",\"purpose\":{\"kind\":\"summary\"}"));
    json = step(t.engine, job);
    CHECK(json != NULL && first != NULL && strcmp(json, first) == 0);
    rp_string_free(json);
    CHECK(rp_job_finish(t.engine, job, &json) == RP_RESULT_CONFLICT);
    CHECK(contains(rp_last_error(), "the job is not done"));
    CHECK(provide(t.engine, job, "{\"text\": \"   \"}") == RP_RESULT_INVALID);
    CHECK(provide(t.engine, job, summary_for(first)) == RP_RESULT_OK);
    second = step(t.engine, job);
    CHECK(contains(second, "\"kind\":\"summary\""));
    CHECK(contains(first, "You are Wren.") != contains(second, "You are Wren."));
    CHECK(contains(first, "You are Tobias Reed.") != contains(second, "You are Tobias Reed."));
    CHECK(provide(t.engine, job, summary_for(second)) == RP_RESULT_OK);
    rp_string_free(first);
    rp_string_free(second);
    json = step(t.engine, job);
    CHECK(json != NULL && strcmp(json, "{\"step\":\"done\"}") == 0);
    rp_string_free(json);
    CHECK(provide(t.engine, job, "{\"text\": \"late\"}") == RP_RESULT_CONFLICT);
    CHECK(head(t.engine) == before);
    CHECK(rp_job_finish(t.engine, job, &json) == RP_RESULT_OK);
    snprintf(part, sizeof part, "{\"seq\":%llu,\"scene\":%llu,\"summaries\":[[",
             ull(head(t.engine)), ull(scene));
    CHECK(starts_with(json, part));
    CHECK(contains(json, "\"group\":null}"));
    rp_string_free(json);
    CHECK(head(t.engine) > before);
    json = read_of(rp_engine_scene, t.engine, scene);
    CHECK(contains(json, "\"closed\":2000"));
    rp_string_free(json);

    /* Each summary is its owner's memory, and no one else's. */
    json = read_of(rp_engine_memories_of, t.engine, t.wren);
    CHECK(contains(json, WREN_SUMMARY));
    CHECK(contains(json, "\"kind\":\"scene_summary\""));
    CHECK(!contains(json, TOBIAS_SUMMARY));
    rp_string_free(json);
    json = read_of(rp_engine_memories_of, t.engine, t.tobias);
    CHECK(contains(json, TOBIAS_SUMMARY));
    CHECK(!contains(json, WREN_SUMMARY));
    rp_string_free(json);
    json = read_of(rp_engine_memories_of, t.engine, t.mira);
    CHECK(!contains(json, WREN_SUMMARY) && !contains(json, TOBIAS_SUMMARY));
    rp_string_free(json);

    /* Over: only freeing is left. */
    CHECK(rp_job_step(t.engine, job, &json) == RP_RESULT_CONFLICT);
    CHECK(contains(rp_last_error(), "`job` is over"));
    CHECK(rp_job_finish(t.engine, job, &json) == RP_RESULT_CONFLICT);
    CHECK(provide(t.engine, job, "{\"text\": \"x\"}") == RP_RESULT_CONFLICT);
    CHECK(rp_job_free(job) == RP_RESULT_OK);
    CHECK(rp_job_free(job) == RP_RESULT_INVALID_HANDLE);
    CHECK(rp_job_step(t.engine, job, &json) == RP_RESULT_INVALID_HANDLE);

    /* The booth has no open scene now; closing it again is refused. */
    CHECK(rp_engine_current_scene(t.engine, t.booth, 0, &again) == RP_RESULT_NOT_FOUND);
    CHECK(rp_engine_begin_scene_close(t.engine, scene, 3000, NULL, 0, &job) ==
          RP_RESULT_CONFLICT);
    CHECK(contains(rp_last_error(), "already closed"));

    /* A scene opened by the host, due by time only after max_gap_ms. */
    CHECK(rp_engine_open_scene(t.engine, t.booth, 3000, &again) == RP_RESULT_OK);
    CHECK(again != scene);
    CHECK(rp_engine_open_scene(t.engine, t.booth, 3000, &scene) == RP_RESULT_CONFLICT);
    CHECK(rp_engine_due_scenes(t.engine, 4000, NULL, 0, &json) == RP_RESULT_OK);
    CHECK(json != NULL && strcmp(json, "[]") == 0);
    rp_string_free(json);
    CHECK(rp_engine_due_scenes(t.engine, 3000 + HOUR, NULL, 0, &json) == RP_RESULT_OK);
    snprintf(part, sizeof part, "[{\"scene\":%llu,\"reason\":\"gap\",\"since\":3000}]",
             ull(again));
    CHECK(json != NULL && strcmp(json, part) == 0);
    rp_string_free(json);
    CHECK(rp_engine_due_scenes(t.engine, 4000, "{\"max_gap_ms\": 500}", 19, &json) ==
          RP_RESULT_OK);
    CHECK(contains(json, "\"reason\":\"gap\""));
    rp_string_free(json);
    CHECK(rp_engine_scenes(t.engine, &json) == RP_RESULT_OK);
    CHECK(starts_with(json, "[{\"id\":"));
    snprintf(part, sizeof part, "{\"id\":%llu,", ull(again));
    CHECK(contains(json, part));
    CHECK(contains(json, "\"closed\":2000"));
    rp_string_free(json);

    /* Nothing was said in it: it closes with no summary, asking for nothing. */
    CHECK(rp_engine_begin_scene_close(t.engine, again, 5000, NULL, 0, &job) == RP_RESULT_OK);
    json = step(t.engine, job);
    CHECK(json != NULL && strcmp(json, "{\"step\":\"done\"}") == 0);
    rp_string_free(json);
    CHECK(rp_job_finish(t.engine, job, &json) == RP_RESULT_OK);
    CHECK(contains(json, "\"summaries\":[]"));
    rp_string_free(json);
    CHECK(rp_job_free(job) == RP_RESULT_OK);
    rp_engine_free(t.engine);
}

/* The generate callback of the time skip: answers each summary, and tries to use its own
 * job and engine (refused, never a deadlock). */
struct summarist {
    rp_engine *engine;
    rp_job *job;
    int calls;
    int fail;
    rp_result reentrant;
    const char *answer;
};

static int summarist_generate(void *user_data, const char *request_json, size_t request_json_len,
                              rp_token_sink *sink, const char **out_result_json,
                              size_t *out_result_len) {
    struct summarist *s = user_data;
    char *json = NULL;
    s->calls++;
    CHECK(strlen(request_json) == request_json_len);
    CHECK(starts_with(request_json, "{\"purpose\":{\"kind\":\"summary\"}"));
    CHECK(rp_token_sink_emit(sink, "ok", 2) == RP_RESULT_OK);
    s->reentrant = rp_job_step(s->engine, s->job, &json);
    if (s->fail) {
        *out_result_json = "the model server is down";
        *out_result_len = strlen(*out_result_json);
        return RP_RESULT_GENERATION;
    }
    s->answer = summary_for(request_json);
    *out_result_json = s->answer;
    *out_result_len = strlen(s->answer);
    return RP_RESULT_OK;
}

static void test_a_time_jump_fires_due_events_in_order_and_rewind_restores_the_world(void) {
    struct tavern t;
    char plan[256];
    char part[256];
    char *json = NULL;
    char *before_world = NULL;
    char *after = NULL;
    char *kept = NULL;
    rp_job *job = NULL;
    uint64_t market = 0, dawn = 0, ferry = 0, later = 0, before = 0;
    struct summarist s;
    static const char jump[] = "{\"kind\": \"jump\", \"to\": 36000000}";

    CHECK(open_tavern(&t));
    if (t.engine == NULL) {
        return;
    }
    CHECK(booth_turn(&t, 1000));
    /* Planned in an order that is not their time order. */
    snprintf(plan, sizeof plan,
             "{\"name\": \"the market\", \"participants\": [%llu], \"start_at\": %lld}",
             ull(t.mira), 9 * HOUR);
    CHECK(rp_engine_plan_event(t.engine, plan, strlen(plan), 2000, &market) == RP_RESULT_OK);
    snprintf(plan, sizeof plan,
             "{\"name\": \"the dawn bell\", \"participants\": [%llu, %llu], \"start_at\": %lld}",
             ull(t.wren), ull(t.mira), 6 * HOUR);
    CHECK(rp_engine_plan_event(t.engine, plan, strlen(plan), 2000, &dawn) == RP_RESULT_OK);
    snprintf(plan, sizeof plan,
             "{\"name\": \"the ferry\", \"participants\": [%llu], \"start_at\": %lld}",
             ull(t.wren), 7 * HOUR);
    CHECK(rp_engine_plan_event(t.engine, plan, strlen(plan), 2000, &ferry) == RP_RESULT_OK);
    snprintf(plan, sizeof plan,
             "{\"name\": \"the evening\", \"participants\": [%llu], \"start_at\": %lld}",
             ull(t.wren), 20 * HOUR);
    CHECK(rp_engine_plan_event(t.engine, plan, strlen(plan), 2000, &later) == RP_RESULT_OK);

    before = head(t.engine);
    before_world = world_json(t.engine);

    /* The callback form: each witness of the booth's scene summarises it. */
    CHECK(rp_engine_begin_time_skip(t.engine, jump, strlen(jump), NULL, 0, &job) ==
          RP_RESULT_OK);
    memset(&s, 0, sizeof s);
    s.engine = t.engine;
    s.job = job;
    CHECK(rp_engine_run_job(t.engine, job, summarist_generate, &s, &json) == RP_RESULT_OK);
    CHECK(s.calls == 2);
    CHECK(s.reentrant == RP_RESULT_CONFLICT);
    snprintf(part, sizeof part, "{\"seq\":%llu,\"from\":2000,\"to\":36000000,\"closed_scenes\":[{",
             ull(head(t.engine)));
    CHECK(starts_with(json, part));
    snprintf(part, sizeof part, "\"due\":{\"started\":[%llu,%llu,%llu],\"expired\":[]",
             ull(dawn), ull(ferry), ull(market));
    CHECK(contains(json, part));
    snprintf(part, sizeof part, "\"reset\":[%llu]}", ull(t.mira));
    CHECK(contains(json, part));
    rp_string_free(json);
    CHECK(rp_job_step(t.engine, job, &json) == RP_RESULT_CONFLICT);
    CHECK(rp_engine_run_job(t.engine, job, summarist_generate, &s, &json) == RP_RESULT_CONFLICT);
    CHECK(rp_job_free(job) == RP_RESULT_OK);

    after = world_json(t.engine);
    CHECK(contains(after, "\"now\":36000000"));
    rp_string_free(after);
    json = read_of(rp_engine_scoped_event, t.engine, dawn);
    CHECK(contains(json, "\"status\":\"active\""));
    CHECK(contains(json, "\"started\":21600000"));
    rp_string_free(json);
    json = read_of(rp_engine_scoped_event, t.engine, later);
    CHECK(contains(json, "\"status\":\"planned\""));
    rp_string_free(json);
    json = read_of(rp_engine_memories_of, t.engine, t.tobias);
    CHECK(contains(json, TOBIAS_SUMMARY));
    rp_string_free(json);

    /* One commit: rewinding to the head before it restores the world byte for byte. */
    CHECK(rp_engine_rewind(t.engine, before, &kept) == RP_RESULT_OK);
    CHECK(kept != NULL);
    rp_string_free(kept);
    CHECK(head(t.engine) == before);
    after = world_json(t.engine);
    CHECK(before_world != NULL && after != NULL && strcmp(before_world, after) == 0);
    rp_string_free(after);
    rp_string_free(before_world);

    /* An elision needs an action with a duration: Mira's has none. */
    snprintf(plan, sizeof plan, "{\"kind\": \"elision\", \"entity\": %llu}", ull(t.mira));
    CHECK(rp_engine_begin_time_skip(t.engine, plan, strlen(plan), NULL, 0, &job) ==
          RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "no duration"));
    rp_engine_free(t.engine);
}

/* The generate callback of the queries: answers from a script, one entry per call. */
struct oracle {
    const char *const *script;
    int count;
    int calls;
};

static int oracle_generate(void *user_data, const char *request_json, size_t request_json_len,
                           rp_token_sink *sink, const char **out_result_json,
                           size_t *out_result_len) {
    struct oracle *o = user_data;
    const char *answer;
    (void)request_json_len;
    (void)sink;
    CHECK(starts_with(request_json, "{\"purpose\":{\"kind\":\"query\"}"));
    if (o->calls >= o->count) {
        *out_result_json = "no more answers";
        *out_result_len = strlen(*out_result_json);
        return RP_RESULT_GENERATION;
    }
    answer = o->script[o->calls++];
    *out_result_json = answer;
    *out_result_len = strlen(answer);
    return RP_RESULT_OK;
}

static void test_queries_are_answered_and_recorded(void) {
    struct tavern t;
    char input[512];
    char answer[512];
    char more[512];
    char part[128];
    char *json = NULL;
    const char *script[2];
    struct oracle o;
    rp_job *job = NULL;
    uint64_t before = 0, first = 0, second = 0;

    CHECK(open_tavern(&t));
    if (t.engine == NULL) {
        return;
    }
    /* One round, poll form. */
    snprintf(input, sizeof input, "{\"text\": \"Who runs the Crooked Lantern?\", \"now\": 5000}");
    before = head(t.engine);
    CHECK(rp_engine_begin_query(t.engine, input, strlen(input), &job) == RP_RESULT_OK);
    CHECK(head(t.engine) == before);
    json = step(t.engine, job);
    CHECK(starts_with(json, "{\"step\":\"generate\",\"purpose\":{\"kind\":\"query\"}"));
    CHECK(contains(json, "\"json_schema\":"));
    CHECK(contains(json, "Who runs the Crooked Lantern?"));
    rp_string_free(json);
    snprintf(answer, sizeof answer,
             "{\"text\": \"{\\\"type\\\": \\\"answer\\\", \\\"content\\\": \\\"Mira Holt runs "
             "it.\\\", \\\"confidence\\\": \\\"high\\\", \\\"sources\\\": [{\\\"entity_id\\\": "
             "%llu, \\\"contribution\\\": \\\"her facts\\\", \\\"relevance\\\": 0.9}]}\"}",
             ull(t.mira));
    CHECK(provide(t.engine, job, answer) == RP_RESULT_OK);
    json = step(t.engine, job);
    CHECK(json != NULL && strcmp(json, "{\"step\":\"done\"}") == 0);
    rp_string_free(json);
    CHECK(rp_job_fail(t.engine, job, "late", 4) == RP_RESULT_CONFLICT);
    CHECK(rp_job_finish(t.engine, job, &json) == RP_RESULT_OK);
    snprintf(part, sizeof part, "{\"seq\":%llu,\"query\":{\"id\":", ull(before + 2));
    CHECK(starts_with(json, part));
    CHECK(contains(json, "\"status\":\"completed\""));
    CHECK(contains(json, "\"iterations\":0}"));
    first = number_after(json, "\"query\":{\"id\":");
    rp_string_free(json);
    CHECK(head(t.engine) == before + 2);
    CHECK(rp_job_free(job) == RP_RESULT_OK);
    json = read_of(rp_engine_query, t.engine, first);
    snprintf(part, sizeof part, "{\"id\":%llu,\"text\":\"Who runs the Crooked Lantern?\"",
             ull(first));
    CHECK(starts_with(json, part));
    CHECK(contains(json, "\"content\":\"Mira Holt runs it.\""));
    rp_string_free(json);

    /* A needs-more-info round, then the answer: callback form. */
    snprintf(more, sizeof more,
             "{\"text\": \"{\\\"type\\\": \\\"needs_more_info\\\", \\\"reason\\\": \\\"who is "
             "he\\\", \\\"requests\\\": [{\\\"capability_id\\\": \\\"EXPAND_ENTITY\\\", "
             "\\\"params\\\": {\\\"entity_id\\\": %llu}, \\\"reason\\\": \\\"his facts\\\"}]}\"}",
             ull(t.tobias));
    snprintf(answer, sizeof answer,
             "{\"text\": \"{\\\"type\\\": \\\"answer\\\", \\\"content\\\": \\\"Lights on the "
             "marsh.\\\", \\\"confidence\\\": \\\"medium\\\"}\"}");
    script[0] = more;
    script[1] = answer;
    o.script = script;
    o.count = 2;
    o.calls = 0;
    snprintf(input, sizeof input,
             "{\"text\": \"What did Tobias Reed see on the marsh?\", \"now\": 6000, "
             "\"config\": {\"max_info_requests\": 2}}");
    CHECK(rp_engine_begin_query(t.engine, input, strlen(input), &job) == RP_RESULT_OK);
    CHECK(rp_engine_run_job(t.engine, job, oracle_generate, &o, &json) == RP_RESULT_OK);
    CHECK(o.calls == 2);
    CHECK(contains(json, "\"status\":\"completed\""));
    CHECK(contains(json, "\"iterations\":1}"));
    CHECK(contains(json, "\"capability_id\":\"EXPAND_ENTITY\""));
    CHECK(!contains(json, "\"refused\""));
    second = number_after(json, "\"query\":{\"id\":");
    rp_string_free(json);
    CHECK(rp_job_free(job) == RP_RESULT_OK);
    CHECK(second > first);
    json = read_of(rp_engine_query, t.engine, second);
    CHECK(contains(json, "\"info_requests\":1"));
    CHECK(contains(json, "\"content\":\"Lights on the marsh.\""));
    CHECK(!contains(json, "\"asked_as\""));
    rp_string_free(json);

    /* Newest first. */
    CHECK(rp_engine_recent_queries(t.engine, 10, &json) == RP_RESULT_OK);
    snprintf(part, sizeof part, "[{\"id\":%llu,", ull(second));
    CHECK(starts_with(json, part));
    snprintf(part, sizeof part, "{\"id\":%llu,", ull(first));
    CHECK(contains(json, part));
    rp_string_free(json);
    CHECK(rp_engine_recent_queries(t.engine, 1, &json) == RP_RESULT_OK);
    CHECK(!contains(json, part));
    rp_string_free(json);

    /* A query the host ends, asked as Wren: recorded as failed, with the reason. */
    snprintf(input, sizeof input,
             "{\"text\": \"Who is the Ferryman?\", \"now\": 7000, \"asked_as\": %llu}",
             ull(t.wren));
    CHECK(rp_engine_begin_query(t.engine, input, strlen(input), &job) == RP_RESULT_OK);
    CHECK(rp_job_fail(t.engine, job, "the model is asleep", 19) == RP_RESULT_OK);
    CHECK(rp_job_finish(t.engine, job, &json) == RP_RESULT_OK);
    snprintf(part, sizeof part, "\"asked_as\":%llu", ull(t.wren));
    CHECK(contains(json, part));
    CHECK(contains(json, "\"status\":\"failed\""));
    CHECK(contains(json, "\"error\":\"the model is asleep\""));
    rp_string_free(json);
    CHECK(rp_job_free(job) == RP_RESULT_OK);

    /* A callback that fails: the query is recorded as failed, as rp-core's run_query does. */
    o.calls = o.count;
    before = head(t.engine);
    CHECK(rp_engine_begin_query(t.engine, input, strlen(input), &job) == RP_RESULT_OK);
    CHECK(rp_engine_run_job(t.engine, job, oracle_generate, &o, &json) == RP_RESULT_GENERATION);
    CHECK(contains(rp_last_error(), "no more answers"));
    CHECK(head(t.engine) == before + 2);
    CHECK(rp_job_step(t.engine, job, &json) == RP_RESULT_CONFLICT);
    CHECK(rp_job_free(job) == RP_RESULT_OK);
    CHECK(rp_engine_recent_queries(t.engine, 1, &json) == RP_RESULT_OK);
    CHECK(contains(json, "\"status\":\"failed\""));
    CHECK(contains(json, "generation failed"));
    rp_string_free(json);

    /* Bad input. */
    CHECK(rp_engine_begin_query(t.engine, "{\"text\": \"x\"}", 13, &job) == RP_RESULT_INVALID);
    CHECK(starts_with(rp_last_error(), "invalid query input: "));
    snprintf(input, sizeof input, "{\"text\": \"   \", \"now\": 8000}");
    CHECK(rp_engine_begin_query(t.engine, input, strlen(input), &job) == RP_RESULT_INVALID);
    snprintf(input, sizeof input,
             "{\"text\": \"Who?\", \"now\": 8000, \"config\": {\"temperature\": 9}}");
    CHECK(rp_engine_begin_query(t.engine, input, strlen(input), &job) == RP_RESULT_INVALID);
    snprintf(input, sizeof input, "{\"text\": \"Who?\", \"now\": 8000, \"asked_as\": 999999}");
    CHECK(rp_engine_begin_query(t.engine, input, strlen(input), &job) == RP_RESULT_NOT_FOUND);
    CHECK(rp_engine_query(t.engine, 999999, &json) == RP_RESULT_NOT_FOUND);
    rp_engine_free(t.engine);
}

/* The tavern with Tobias missing Wren, as test_drives.c sets it up: he knows her (the world
 * file's edge), his social debt builds fast, his personality is even, and Wren is reported
 * present at noon (the clock moves there). Then a tick begins with `options` at the time
 * rp_engine_next_tick_at gives from noon, and asks for his first line. 0 on failure. */
static int tobias_misses_wren(struct tavern *t, const char *options, rp_job **job) {
    static const char debt[] = "{\"social_debt_per_hour\": 20}";
    int64_t at = -1;
    bool due = false;
    if (!open_tavern(t)) {
        return 0;
    }
    return rp_engine_configure_drives(t->engine, t->tobias, debt, strlen(debt)) ==
               RP_RESULT_OK &&
           rp_engine_set_personality(t->engine, t->tobias, "{}", 2) == RP_RESULT_OK &&
           rp_engine_report_availability(t->engine, t->wren, 1.0, NOON) == RP_RESULT_OK &&
           rp_engine_next_tick_at(t->engine, NOON, &at, &due) == RP_RESULT_OK && due &&
           at == NOON &&
           rp_engine_begin_tick(t->engine, at, options, strlen(options), job) == RP_RESULT_OK;
}

/* Gives the tick's first step, Tobias's initiating line. 1 when it was that step. */
static int tobias_speaks(const struct tavern *t, rp_job *job) {
    static const char line[] = "{\"text\": \"" TOBIAS_LINE "\"}";
    char part[128];
    char *json = step(t->engine, job);
    int ok;
    snprintf(part, sizeof part,
             "{\"step\":\"generate\",\"purpose\":{\"kind\":\"initiate\",\"speaker\":%llu}",
             ull(t->tobias));
    ok = starts_with(json, part);
    rp_string_free(json);
    return ok && provide(t->engine, job, line) == RP_RESULT_OK;
}

static void test_a_semantic_tick_asks_for_vectors_answered_through_the_job(void) {
    static const char semantic[] = "{\"turn\": {\"semantic\": true}}";
    struct tavern t;
    char *json = NULL;
    char *again = NULL;
    rp_job *job = NULL;

    CHECK(tobias_misses_wren(&t, semantic, &job));
    if (t.engine == NULL || job == NULL) {
        rp_engine_free(t.engine);
        return;
    }
    /* While the tick asks for his line (a "generate" step), vectors and actions are refused;
       the job goes on. */
    json = step(t.engine, job);
    CHECK(contains(json, "{\"step\":\"generate\",\"purpose\":{\"kind\":\"initiate\""));
    rp_string_free(json);
    CHECK(embed(t.engine, job, "[[1.0]]") == RP_RESULT_CONFLICT);
    CHECK(contains(rp_last_error(), "the turn is not waiting for vectors"));
    CHECK(act(t.engine, job, "{\"opened\": true}", NULL) == RP_RESULT_CONFLICT);
    CHECK(contains(rp_last_error(), "the turn is not waiting for a host action"));
    CHECK(tobias_speaks(&t, job));

    /* Then a vector for his line, to remember it. */
    json = step(t.engine, job);
    CHECK(json != NULL &&
          strcmp(json, "{\"step\":\"embed\",\"texts\":[\"Tobias Reed: " TOBIAS_LINE "\"]}") == 0);
    CHECK(rp_job_finish(t.engine, job, &again) == RP_RESULT_CONFLICT);
    CHECK(contains(rp_last_error(), "the tick still needs vectors"));
    CHECK(again == NULL);
    CHECK(provide(t.engine, job, "{\"text\": \"x\"}") == RP_RESULT_CONFLICT);

    /* Bad vectors and arguments: refused, the step unchanged. */
    CHECK(embed(t.engine, job, "[[1, 0], [0, 1]]") == RP_RESULT_INVALID); /* two for one */
    CHECK(contains(rp_last_error(), "2 vectors for 1 texts"));
    CHECK(embed(t.engine, job, "[]") == RP_RESULT_INVALID);
    CHECK(embed(t.engine, job, "[[\"a\"]]") == RP_RESULT_INVALID);
    CHECK(embed(t.engine, job, "not json") == RP_RESULT_INVALID);
    CHECK(starts_with(rp_last_error(), "invalid embeddings JSON: "));
    CHECK(rp_job_provide_embeddings(t.engine, job, "\xff", 1) == RP_RESULT_INVALID_UTF8);
    CHECK(rp_job_provide_embeddings(t.engine, NULL, "[[1]]", 5) == RP_RESULT_NULL_ARGUMENT);
    CHECK(strcmp(rp_last_error(), "`job` is NULL") == 0);
    CHECK(rp_job_provide_embeddings(NULL, job, "[[1]]", 5) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_job_provide_embeddings(t.engine, job, NULL, 0) == RP_RESULT_NULL_ARGUMENT);
    CHECK(act(t.engine, job, "{\"opened\": true}", NULL) == RP_RESULT_CONFLICT);
    again = step(t.engine, job);
    CHECK(json != NULL && again != NULL && strcmp(json, again) == 0);
    rp_string_free(again);
    rp_string_free(json);

    CHECK(embed(t.engine, job, "[[0.6, 0.8]]") == RP_RESULT_OK);
    json = step(t.engine, job);
    CHECK(json != NULL && strcmp(json, "{\"step\":\"done\"}") == 0);
    rp_string_free(json);
    CHECK(embed(t.engine, job, "[[0.6, 0.8]]") == RP_RESULT_CONFLICT);
    CHECK(contains(rp_last_error(), "not waiting for vectors"));
    CHECK(rp_job_finish(t.engine, job, &json) == RP_RESULT_OK);
    CHECK(contains(json, "\"initiations\":[{\"candidate\":"));
    CHECK(contains(json, TOBIAS_LINE));
    rp_string_free(json);

    /* Over: only freeing is left. */
    CHECK(embed(t.engine, job, "[[0.6, 0.8]]") == RP_RESULT_CONFLICT);
    CHECK(contains(rp_last_error(), "`job` is over"));
    CHECK(act(t.engine, job, NULL, "no") == RP_RESULT_CONFLICT);
    CHECK(rp_job_free(job) == RP_RESULT_OK);
    CHECK(embed(t.engine, job, "[[0.6, 0.8]]") == RP_RESULT_INVALID_HANDLE);
    CHECK(act(t.engine, job, "{}", NULL) == RP_RESULT_INVALID_HANDLE);
    rp_engine_free(t.engine);
}

/* A tick whose turns declare the host action "open_door" (its one field an enum, as in
 * test_turn.c). */
static const char tick_with_doors[] =
    "{\"turn\": {\"updates\": {\"enabled\": true, \"actions\": [{\"name\": \"open_door\", "
    "\"description\": \"someone opens a door\", \"parameters\": {\"type\": \"object\", "
    "\"additionalProperties\": false, \"required\": [\"door\"], "
    "\"properties\": {\"door\": {\"enum\": [\"cellar\", \"front\"]}}}}]}}}";

static const char door_creaks[] = "{\"opened\": true, \"system_line\": \"The door creaks.\"}";

/* Tobias misses Wren, with open_door declared: his line, then the state-update pass reports
 * that he opens the cellar. 1 when the job's next step is that action. */
static int tick_at_the_door(struct tavern *t, rp_job **job) {
    static const char doors[] =
        "{\"text\": \"{\\\"reports\\\": [{\\\"type\\\": \\\"open_door\\\", "
        "\\\"who\\\": \\\"Tobias Reed\\\", \\\"door\\\": \\\"cellar\\\"}]}\"}";
    char *json = NULL;
    int ok;
    if (!tobias_misses_wren(t, tick_with_doors, job) || !tobias_speaks(t, *job)) {
        return 0;
    }
    json = step(t->engine, *job);
    ok = starts_with(json, "{\"step\":\"generate\",\"purpose\":{\"kind\":\"state_update\"}");
    rp_string_free(json);
    /* Not an action yet: refused, the pass goes on. */
    ok = ok && act(t->engine, *job, door_creaks, NULL) == RP_RESULT_CONFLICT &&
         contains(rp_last_error(), "not waiting for a host action");
    return ok && provide(t->engine, *job, doors) == RP_RESULT_OK;
}

static void test_a_tick_hands_a_host_action_to_the_job(void) {
    struct tavern t;
    char expected[256];
    char *json = NULL;
    rp_job *job = NULL;

    CHECK(tick_at_the_door(&t, &job));
    if (t.engine == NULL || job == NULL) {
        rp_engine_free(t.engine);
        return;
    }
    json = step(t.engine, job);
    snprintf(expected, sizeof expected,
             "{\"step\":\"act\",\"name\":\"open_door\",\"who\":%llu,"
             "\"arguments\":{\"door\":\"cellar\"},\"report\":0}",
             ull(t.tobias));
    CHECK(json != NULL && strcmp(json, expected) == 0);
    rp_string_free(json);
    json = NULL;

    /* Not done while the action waits; nothing else is taken in its place. */
    CHECK(rp_job_finish(t.engine, job, &json) == RP_RESULT_CONFLICT);
    CHECK(contains(rp_last_error(), "the tick still needs a host action"));
    CHECK(json == NULL);
    CHECK(provide(t.engine, job, "{\"text\": \"x\"}") == RP_RESULT_CONFLICT);
    CHECK(embed(t.engine, job, "[[1.0]]") == RP_RESULT_CONFLICT);

    /* Exactly one of answer and refusal; the answer must be JSON. */
    CHECK(act(t.engine, job, door_creaks, "locked") == RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "both"));
    CHECK(act(t.engine, job, NULL, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(act(t.engine, job, "{opened", NULL) == RP_RESULT_INVALID);
    CHECK(starts_with(rp_last_error(), "invalid action answer: "));
    CHECK(rp_job_provide_action(t.engine, job, NULL, 0, "\xff", 1) == RP_RESULT_INVALID_UTF8);
    CHECK(rp_job_provide_action(NULL, job, door_creaks, strlen(door_creaks), NULL, 0) ==
          RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_job_provide_action(t.engine, NULL, door_creaks, strlen(door_creaks), NULL, 0) ==
          RP_RESULT_NULL_ARGUMENT);
    CHECK(strcmp(rp_last_error(), "`job` is NULL") == 0);
    json = step(t.engine, job);
    CHECK(starts_with(json, "{\"step\":\"act\"")); /* still waiting */
    rp_string_free(json);

    CHECK(act(t.engine, job, door_creaks, NULL) == RP_RESULT_OK);
    json = step(t.engine, job);
    CHECK(json != NULL && strcmp(json, "{\"step\":\"done\"}") == 0);
    rp_string_free(json);
    CHECK(act(t.engine, job, door_creaks, NULL) == RP_RESULT_CONFLICT);
    CHECK(contains(rp_last_error(), "not waiting for an action"));
    CHECK(rp_job_finish(t.engine, job, &json) == RP_RESULT_OK);
    CHECK(contains(json, TOBIAS_LINE));
    CHECK(contains(json, "\"rejected\":null,\"answer\":"
                         "\"{\\\"opened\\\":true,\\\"system_line\\\":\\\"The door creaks.\\\"}\""));
    rp_string_free(json);
    CHECK(rp_job_free(job) == RP_RESULT_OK);
    /* The answer's system line waits for the next prompts. */
    CHECK(rp_engine_system_lines(t.engine, &json) == RP_RESULT_OK);
    CHECK(contains(json, "\"text\":\"The door creaks.\""));
    rp_string_free(json);
    rp_engine_free(t.engine);

    /* A refusal is recorded as the action's rejection; the tick goes on. */
    job = NULL;
    CHECK(tick_at_the_door(&t, &job));
    if (t.engine == NULL || job == NULL) {
        rp_engine_free(t.engine);
        return;
    }
    CHECK(act(t.engine, job, NULL, "the cellar is locked") == RP_RESULT_OK);
    CHECK(rp_job_finish(t.engine, job, &json) == RP_RESULT_OK);
    CHECK(contains(json, "\"rejected\":\"the cellar is locked\",\"answer\":null"));
    rp_string_free(json);
    CHECK(rp_job_free(job) == RP_RESULT_OK);
    rp_engine_free(t.engine);
}

static rp_result graph(const rp_engine *engine, const char *request, char **out) {
    return rp_engine_graph(engine, request, strlen(request), out);
}

static void test_graph_requests_of_each_op(void) {
    struct tavern t;
    char request[256];
    char expected[256];
    char *json = NULL;

    CHECK(open_tavern(&t));
    if (t.engine == NULL) {
        return;
    }
    /* Mira's edges: to Tobias and Wren (outgoing), from Tobias and Wren (incoming). */
    snprintf(request, sizeof request,
             "{\"op\": \"relationships_of\", \"entities\": [%llu], \"direction\": \"outgoing\"}",
             ull(t.mira));
    CHECK(graph(t.engine, request, &json) == RP_RESULT_OK);
    snprintf(expected, sizeof expected, "[{\"from\":%llu,\"to\":", ull(t.mira));
    CHECK(starts_with(json, expected));
    CHECK(number_after(json, "\"from\":") == t.mira);
    CHECK(contains(json, "stray dog") && contains(json, "trouble"));
    CHECK(!contains(json, "only person in town"));
    rp_string_free(json);
    snprintf(request, sizeof request,
             "{\"op\": \"relationships_of\", \"entities\": [%llu], \"limit\": 4}", ull(t.mira));
    CHECK(graph(t.engine, request, &json) == RP_RESULT_OK);
    CHECK(contains(json, "only person in town") && contains(json, "knows things"));
    rp_string_free(json);

    /* Wren reaches Tobias only through Mira. */
    snprintf(request, sizeof request,
             "{\"op\": \"connected\", \"from\": %llu, \"max_hops\": 2, \"direction\": "
             "\"outgoing\", \"limit\": 100}",
             ull(t.wren));
    CHECK(graph(t.engine, request, &json) == RP_RESULT_OK);
    snprintf(expected, sizeof expected, "[{\"entity\":%llu,\"hops\":1},{\"entity\":%llu,\"hops\":2}]",
             ull(t.mira), ull(t.tobias));
    CHECK(json != NULL && strcmp(json, expected) == 0);
    rp_string_free(json);
    snprintf(request, sizeof request, "{\"op\": \"path\", \"from\": %llu, \"to\": %llu}",
             ull(t.wren), ull(t.tobias));
    CHECK(graph(t.engine, request, &json) == RP_RESULT_OK);
    snprintf(expected, sizeof expected, "[%llu,%llu,%llu]", ull(t.wren), ull(t.mira),
             ull(t.tobias));
    CHECK(json != NULL && strcmp(json, expected) == 0);
    rp_string_free(json);
    snprintf(request, sizeof request, "{\"op\": \"path\", \"from\": %llu, \"to\": %llu}",
             ull(t.wren), ull(t.letter));
    CHECK(graph(t.engine, request, &json) == RP_RESULT_OK);
    CHECK(json != NULL && strcmp(json, "null") == 0);
    rp_string_free(json);

    /* Wren and Tobias share Mira; Wren and Mira share Tobias (who has an eye on Wren). */
    snprintf(request, sizeof request, "{\"op\": \"shared_connections\", \"entity\": %llu}",
             ull(t.wren));
    CHECK(graph(t.engine, request, &json) == RP_RESULT_OK);
    snprintf(expected, sizeof expected,
             "[{\"entity\":%llu,\"shared\":1},{\"entity\":%llu,\"shared\":1}]", ull(t.mira),
             ull(t.tobias));
    CHECK(json != NULL && strcmp(json, expected) == 0);
    rp_string_free(json);

    CHECK(graph(t.engine, "{\"op\": \"stats\"}", &json) == RP_RESULT_OK);
    CHECK(starts_with(json, "{\"entities\":4,\"edges\":5,\"mutual_pairs\":2,\"isolated\":1,"));
    rp_string_free(json);

    /* Refused: unknown ops and fields, bounds out of range, unknown entities, NULLs. */
    CHECK(graph(t.engine, "{\"op\": \"everything\"}", &json) == RP_RESULT_INVALID);
    CHECK(starts_with(rp_last_error(), "invalid graph request: "));
    CHECK(graph(t.engine, "{\"op\": \"stats\", \"deep\": true}", &json) == RP_RESULT_INVALID);
    snprintf(request, sizeof request, "{\"op\": \"shared_connections\", \"entity\": %llu, "
             "\"limt\": 3}", ull(t.wren));
    CHECK(graph(t.engine, request, &json) == RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "limt"));
    snprintf(request, sizeof request, "{\"op\": \"connected\", \"from\": %llu, \"max_hops\": 0}",
             ull(t.wren));
    CHECK(graph(t.engine, request, &json) == RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "max_hops"));
    snprintf(request, sizeof request, "{\"op\": \"connected\", \"from\": %llu, \"direction\": "
             "\"sideways\"}", ull(t.wren));
    CHECK(graph(t.engine, request, &json) == RP_RESULT_INVALID);
    snprintf(request, sizeof request, "{\"op\": \"shared_connections\", \"entity\": %llu, "
             "\"limit\": 0}", ull(t.wren));
    CHECK(graph(t.engine, request, &json) == RP_RESULT_INVALID);
    CHECK(graph(t.engine, "{\"op\": \"path\", \"from\": 999999, \"to\": 1}", &json) ==
          RP_RESULT_NOT_FOUND);
    CHECK(graph(t.engine, "{\"op\": \"stats\"", &json) == RP_RESULT_INVALID);
    CHECK(rp_engine_graph(t.engine, NULL, 0, &json) == RP_RESULT_NULL_ARGUMENT);
    CHECK(graph(t.engine, "{\"op\": \"stats\"}", NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(graph(NULL, "{\"op\": \"stats\"}", &json) == RP_RESULT_NULL_ARGUMENT);
    rp_engine_free(t.engine);
}

static void test_a_failing_callback_commits_nothing_and_leaves_the_job_as_it_was(void) {
    struct tavern t;
    struct summarist s;
    char *json = NULL;
    rp_job *job = NULL;
    uint64_t before = 0;
    static const char jump[] = "{\"kind\": \"jump\", \"to\": 9000}";

    CHECK(open_tavern(&t));
    if (t.engine == NULL) {
        return;
    }
    CHECK(booth_turn(&t, 1000));
    before = head(t.engine);
    CHECK(rp_engine_begin_close_current_scene(t.engine, t.booth, 2000, NULL, 0, &job) ==
          RP_RESULT_OK);
    memset(&s, 0, sizeof s);
    s.engine = t.engine;
    s.job = job;
    s.fail = 1;
    CHECK(rp_engine_run_job(t.engine, job, summarist_generate, &s, &json) ==
          RP_RESULT_GENERATION);
    CHECK(json == NULL);
    CHECK(contains(rp_last_error(), "the model server is down"));
    CHECK(s.calls == 1);
    CHECK(head(t.engine) == before);
    /* The job is where it was: poll it on, then run it to its end. */
    json = step(t.engine, job);
    CHECK(contains(json, "\"kind\":\"summary\""));
    CHECK(provide(t.engine, job, summary_for(json)) == RP_RESULT_OK);
    rp_string_free(json);
    s.fail = 0;
    s.calls = 0;
    CHECK(rp_engine_run_job(t.engine, job, summarist_generate, &s, &json) == RP_RESULT_OK);
    CHECK(s.calls == 1);
    CHECK(contains(json, "\"summaries\":[["));
    rp_string_free(json);
    CHECK(head(t.engine) > before);
    CHECK(rp_job_free(job) == RP_RESULT_OK);

    /* A time skip whose callback fails: nothing committed either. */
    CHECK(booth_turn(&t, 3000));
    before = head(t.engine);
    CHECK(rp_engine_begin_time_skip(t.engine, jump, strlen(jump), NULL, 0, &job) == RP_RESULT_OK);
    s.job = job;
    s.fail = 1;
    CHECK(rp_engine_run_job(t.engine, job, summarist_generate, &s, &json) ==
          RP_RESULT_GENERATION);
    CHECK(head(t.engine) == before);
    json = world_json(t.engine);
    CHECK(contains(json, "\"now\":3000"));
    rp_string_free(json);
    CHECK(rp_job_free(job) == RP_RESULT_OK);

    /* A scene close the host fails (as any machine can be): its next step is "done", and
       finishing commits nothing and says why. */
    CHECK(booth_turn(&t, 5000));
    before = head(t.engine);
    CHECK(rp_engine_begin_close_current_scene(t.engine, t.booth, 6000, NULL, 0, &job) ==
          RP_RESULT_OK);
    CHECK(rp_job_fail(t.engine, job, "no model", 8) == RP_RESULT_OK);
    json = step(t.engine, job);
    CHECK(json != NULL && strcmp(json, "{\"step\":\"done\"}") == 0);
    rp_string_free(json);
    CHECK(rp_job_fail(t.engine, job, "again", 5) == RP_RESULT_CONFLICT);
    CHECK(rp_job_finish(t.engine, job, &json) == RP_RESULT_GENERATION);
    CHECK(contains(rp_last_error(), "no model"));
    CHECK(head(t.engine) == before);
    CHECK(rp_job_free(job) == RP_RESULT_OK);
    rp_engine_free(t.engine);
}

static void test_jobs_refuse_bad_handles_engines_json_and_ids(void) {
    struct tavern t;
    struct tavern other;
    char *json = NULL;
    rp_job *job = NULL;
    rp_job *stale = NULL;
    uint64_t id = 0, before = 0;
    static const char jump[] = "{\"kind\": \"jump\", \"to\": 9000}";

    CHECK(open_tavern(&t));
    CHECK(open_tavern(&other));
    if (t.engine == NULL || other.engine == NULL) {
        rp_engine_free(t.engine);
        rp_engine_free(other.engine);
        return;
    }
    CHECK(booth_turn(&t, 1000));
    before = head(t.engine);

    /* NULL arguments. */
    CHECK(rp_engine_begin_close_current_scene(t.engine, t.booth, 2000, NULL, 0, NULL) ==
          RP_RESULT_NULL_ARGUMENT);
    CHECK(strcmp(rp_last_error(), "`out_job` is NULL") == 0);
    CHECK(rp_engine_begin_close_current_scene(NULL, t.booth, 2000, NULL, 0, &job) ==
          RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_begin_scene_close(t.engine, 1, 2000, NULL, 5, &job) ==
          RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_begin_time_skip(t.engine, NULL, 0, NULL, 0, &job) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_begin_query(t.engine, NULL, 0, &job) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_open_scene(t.engine, t.bar, 2000, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_current_scene(t.engine, t.booth, 0, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_scenes(t.engine, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_recent_queries(NULL, 1, &json) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_begin_close_current_scene(t.engine, t.booth, 2000, NULL, 0, &job) ==
          RP_RESULT_OK);
    CHECK(rp_job_step(t.engine, NULL, &json) == RP_RESULT_NULL_ARGUMENT);
    CHECK(strcmp(rp_last_error(), "`job` is NULL") == 0);
    CHECK(rp_job_step(NULL, job, &json) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_job_step(t.engine, job, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_job_provide(t.engine, job, NULL, 0) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_job_provide_embeddings(t.engine, job, NULL, 0) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_job_provide_embeddings(t.engine, NULL, "[[1]]", 5) == RP_RESULT_NULL_ARGUMENT);
    CHECK(act(t.engine, job, NULL, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(act(t.engine, NULL, "{}", NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_job_finish(t.engine, job, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_run_job(t.engine, job, NULL, NULL, &json) == RP_RESULT_NULL_ARGUMENT);
    CHECK(strcmp(rp_last_error(), "`generate` is NULL") == 0);
    CHECK(rp_job_free(NULL) == RP_RESULT_OK);

    /* Another engine. */
    CHECK(rp_job_step(other.engine, job, &json) == RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "another engine"));
    CHECK(rp_job_finish(other.engine, job, &json) == RP_RESULT_INVALID);
    CHECK(rp_engine_run_job(other.engine, job, summarist_generate, NULL, &json) ==
          RP_RESULT_INVALID);
    CHECK(embed(other.engine, job, "[[1.0]]") == RP_RESULT_INVALID);
    CHECK(act(other.engine, job, "{}", NULL) == RP_RESULT_INVALID);

    /* A scene close asks for no vectors and no host actions. */
    CHECK(embed(t.engine, job, "[[1.0]]") == RP_RESULT_CONFLICT);
    CHECK(contains(rp_last_error(), "asks for no embeddings"));
    CHECK(act(t.engine, job, "{\"opened\": true}", NULL) == RP_RESULT_CONFLICT);
    CHECK(contains(rp_last_error(), "asks for no actions"));
    CHECK(act(t.engine, job, NULL, "no door here") == RP_RESULT_CONFLICT);

    /* Bad JSON and results the job refuses: the job goes on. */
    CHECK(provide(t.engine, job, "{text") == RP_RESULT_INVALID);
    CHECK(starts_with(rp_last_error(), "invalid generation result: "));
    CHECK(provide(t.engine, job, "{\"text\": 3}") == RP_RESULT_INVALID);
    CHECK(rp_job_provide(t.engine, job, "\xff", 1) == RP_RESULT_INVALID_UTF8);
    CHECK(provide(t.engine, job, "{\"text\": \"\"}") == RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "empty"));
    json = step(t.engine, job);
    CHECK(contains(json, "\"kind\":\"summary\""));
    rp_string_free(json);

    /* The world moved: the job is refused from then on. */
    CHECK(rp_engine_open_scene(t.engine, t.bar, 1500, &id) == RP_RESULT_OK);
    CHECK(rp_job_step(t.engine, job, &json) == RP_RESULT_CONFLICT);
    CHECK(contains(rp_last_error(), "world changed"));
    CHECK(rp_job_free(job) == RP_RESULT_OK);
    before = head(t.engine);

    /* A freed job. */
    CHECK(rp_engine_begin_time_skip(t.engine, jump, strlen(jump), NULL, 0, &stale) ==
          RP_RESULT_OK);
    CHECK(rp_job_free(stale) == RP_RESULT_OK);
    CHECK(rp_job_step(t.engine, stale, &json) == RP_RESULT_INVALID_HANDLE);
    CHECK(provide(t.engine, stale, "{\"text\": \"x\"}") == RP_RESULT_INVALID_HANDLE);
    CHECK(embed(t.engine, stale, "[[1.0]]") == RP_RESULT_INVALID_HANDLE);
    CHECK(act(t.engine, stale, "{}", NULL) == RP_RESULT_INVALID_HANDLE);
    CHECK(rp_job_finish(t.engine, stale, &json) == RP_RESULT_INVALID_HANDLE);
    CHECK(rp_engine_run_job(t.engine, stale, summarist_generate, NULL, &json) ==
          RP_RESULT_INVALID_HANDLE);
    CHECK(rp_job_free(stale) == RP_RESULT_INVALID_HANDLE);

    /* Bad skips and options: no job, nothing changed. */
    job = NULL;
    CHECK(rp_engine_begin_time_skip(t.engine, "{\"kind\": \"warp\"}", 16, NULL, 0, &job) ==
          RP_RESULT_INVALID);
    CHECK(starts_with(rp_last_error(), "invalid time skip: "));
    CHECK(rp_engine_begin_time_skip(t.engine, "{\"kind\": \"jump\", \"to\": 9000, \"x\": 1}", 35,
                                    NULL, 0, &job) == RP_RESULT_INVALID);
    CHECK(rp_engine_begin_time_skip(t.engine, "{\"kind\": \"jump\", \"to\": 10}", 26, NULL, 0,
                                    &job) == RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "a skip goes forward"));
    CHECK(rp_engine_begin_time_skip(t.engine, "{\"kind\": \"elision\", \"entity\": 999999}", 37,
                                    NULL, 0, &job) == RP_RESULT_NOT_FOUND);
    CHECK(rp_engine_begin_time_skip(t.engine, jump, strlen(jump), "{\"loud\": 1}", 11, &job) ==
          RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "loud"));
    CHECK(rp_engine_begin_time_skip(t.engine, jump, strlen(jump), "{\"summary_lines\": 0}", 20,
                                    &job) == RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "summary_lines"));
    CHECK(rp_engine_due_scenes(t.engine, 0, "[]", 2, &json) == RP_RESULT_INVALID);
    CHECK(job == NULL);

    /* Unknown ids. */
    CHECK(rp_engine_begin_scene_close(t.engine, 999999, 3000, NULL, 0, &job) ==
          RP_RESULT_NOT_FOUND);
    CHECK(rp_engine_begin_close_current_scene(t.engine, 999999, 3000, NULL, 0, &job) ==
          RP_RESULT_NOT_FOUND);
    CHECK(rp_engine_begin_close_current_scene(t.engine, t.hall, 3000, NULL, 0, &job) ==
          RP_RESULT_NOT_FOUND);
    CHECK(contains(rp_last_error(), "open scene"));
    CHECK(rp_engine_open_scene(t.engine, 999999, 3000, &id) == RP_RESULT_NOT_FOUND);
    CHECK(rp_engine_scene(t.engine, 999999, &json) == RP_RESULT_NOT_FOUND);
    CHECK(rp_engine_current_scene(t.engine, 999999, 0, &id) == RP_RESULT_NOT_FOUND);
    CHECK(rp_engine_current_scene(t.engine, 0, 999999, &id) == RP_RESULT_NOT_FOUND);
    CHECK(rp_engine_current_scene(t.engine, t.hall, 0, &id) == RP_RESULT_NOT_FOUND);
    CHECK(job == NULL);
    /* A time before the world's clock. */
    CHECK(rp_engine_open_scene(t.engine, t.hall, 10, &id) == RP_RESULT_INVALID);
    CHECK(head(t.engine) == before);

    rp_engine_free(t.engine);
    rp_engine_free(other.engine);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s PATH/TO/examples/tavern.toml\n", argv[0]);
        return 2;
    }
    tavern_path = argv[1];

    test_a_scene_closes_with_a_summary_per_witness_in_its_own_store();
    test_a_time_jump_fires_due_events_in_order_and_rewind_restores_the_world();
    test_queries_are_answered_and_recorded();
    test_graph_requests_of_each_op();
    test_a_semantic_tick_asks_for_vectors_answered_through_the_job();
    test_a_tick_hands_a_host_action_to_the_job();
    test_a_failing_callback_commits_nothing_and_leaves_the_job_as_it_was();
    test_jobs_refuse_bad_handles_engines_json_and_ids();

    return checks_done("test_jobs");
}
