// Tests of rp.hpp, the C++17 RAII wrapper over rp.h: ownership (moves,
// release, close, a turn outliving its engine), errors as rp::Error with
// their codes, strings in and out, the poll-form and callback-form turns,
// exceptions thrown by the callbacks coming back out of run_turn, scoped
// events and threads, and jobs (scene closes, time skips, queries, ticks),
// scenes, the relationship graph and drives; backups, compaction and
// progress, cards and lorebooks (bytes in and out), requirements, host time
// played through a callback, edits and swipes, and host actions carried out
// by a callback.
//
// Build and run (scripts/test-all does this, then runs it under valgrind and
// AddressSanitizer):
//
//   c++ -std=c++17 -Wall -Wextra -Werror -pedantic -Iinclude
//       rp-ffi/tests/c/test_hpp.cpp target/debug/librp.a -lpthread -ldl -lm
//       -o test_hpp
//   ./test_hpp examples/tavern.toml
//
// Reports each failed check on stderr and closes with "N passed, N failed";
// exits 0 only when every check passed. rp.hpp is included twice on purpose.
// Save files go to a fresh directory under $TMPDIR (or /tmp), removed at the
// end.
#include "rp.hpp"
#include "rp.hpp"

#include "check.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <unistd.h>

namespace {

const char *tavern_path = nullptr;

rp::Engine tavern() {
    rp::Engine engine = rp::Engine::in_memory("test");
    engine.load_world_file(tavern_path);
    return engine;
}

// Runs `body`, returning the code of the rp::Error it throws (RP_RESULT_OK
// when it throws nothing) and its message in `message`.
template <class Body>
rp_result code_of(Body &&body, std::string *message = nullptr) {
    try {
        body();
    } catch (const rp::Error &error) {
        if (message != nullptr) {
            *message = error.what();
        }
        return error.code();
    }
    return RP_RESULT_OK;
}

std::string input(std::uint64_t speaker, std::string_view text, long now) {
    return "{\"speaker\": " + std::to_string(speaker) + ", \"text\": \"" + std::string(text) +
           "\", \"now\": " + std::to_string(now) + "}";
}

struct ModelDown : std::runtime_error {
    ModelDown() : std::runtime_error("the model server is down") {}
};

void test_engines_are_owned_and_moved() {
    rp::Engine engine = tavern();
    rp_engine *raw = engine.get();
    CHECK(raw != nullptr);

    rp::Engine moved = std::move(engine);
    CHECK(moved.get() == raw);
    CHECK(engine.get() == nullptr);  // NOLINT: a moved-from engine is empty
    CHECK(moved.head() > 0);

    // Assigning over an engine frees the one it held.
    rp::Engine other = rp::Engine::in_memory("other");
    rp_engine *other_raw = other.get();
    other = std::move(moved);
    std::uint64_t seq = 0;
    CHECK(rp_engine_head(other_raw, &seq) == RP_RESULT_INVALID_HANDLE);
    CHECK(other.get() == raw);

    // release() hands the handle over; close() frees it now.
    rp_engine *released = other.release();
    CHECK(other.get() == nullptr);
    CHECK(rp_engine_free(released) == RP_RESULT_OK);
    rp::Engine closing = rp::Engine::in_memory("closing");
    closing.close();
    CHECK(closing.get() == nullptr);
    closing.close();  // closing nothing does nothing
}

void test_failures_are_errors_with_their_codes() {
    rp::Engine engine = tavern();
    std::string message;
    CHECK(code_of([&] { engine.entity_id("nobody"); }, &message) == RP_RESULT_NOT_FOUND);
    CHECK(contains(message.c_str(), "nobody"));
    // An empty view is an empty string, not NULL.
    CHECK(code_of([&] { engine.entity_id({}); }) == RP_RESULT_NOT_FOUND);
    CHECK(code_of([&] { engine.append("{not json"); }, &message) == RP_RESULT_INVALID);
    CHECK(contains(message.c_str(), "events JSON"));
    CHECK(code_of([&] { engine.append("[{\"time_advanced\": {\"to\": -5}}]"); }) ==
          RP_RESULT_INVALID);
    CHECK(code_of([&] { engine.switch_branch("nope"); }) == RP_RESULT_NOT_FOUND);
    CHECK(code_of([&] { engine.entity(999999); }) == RP_RESULT_NOT_FOUND);
    CHECK(code_of([&] { engine.load_world_file("/nonexistent/world.toml"); }) ==
          RP_RESULT_WORLD_FILE);
    CHECK(code_of([] { rp::Engine::open("/nonexistent/save.rp"); }) != RP_RESULT_OK);
    CHECK(code_of([] { rp::check_version(rp::version()); }) == RP_RESULT_OK);
    CHECK(code_of([] { rp::check_version("0.0.0-other"); }) == RP_RESULT_VERSION_MISMATCH);
    CHECK(code_of([] { rp::Condition::compile("mentioned &&"); }) == RP_RESULT_FACT_SYNTAX);
    // A bad-UTF-8 argument is refused by rp, not by the wrapper.
    CHECK(code_of([&] { engine.entity_id("\xff"); }) == RP_RESULT_INVALID_UTF8);
    // A moved-from engine is answered, never dereferenced.
    rp::Engine gone = std::move(engine);
    CHECK(code_of([&] { engine.head(); }) == RP_RESULT_NULL_ARGUMENT);  // NOLINT
}

void test_the_world_and_branches_as_strings() {
    rp::Engine engine = tavern();
    const std::uint64_t start = engine.head();
    const std::uint64_t mira = engine.entity_id("Mira Holt");
    CHECK(contains(engine.world().c_str(), "\"branch\":\"main\""));
    CHECK(contains(engine.entity(mira).c_str(), "\"name\":\"Mira Holt\""));
    CHECK(contains(engine.container(engine.container_id("booth")).c_str(), "window seat"));
    CHECK(contains(engine.edges_from(mira).c_str(), "stray dog"));
    CHECK(engine.append("[{\"time_advanced\": {\"to\": 1000}}]") == start + 1);
    CHECK(engine.append("[]") == start + 1);
    CHECK(contains(engine.preview_rewind(start).c_str(), "\"event_count\":1"));
    const std::optional<std::string> kept = engine.rewind(start);
    CHECK(kept.has_value() && *kept == "main~2");
    CHECK(!engine.rewind(start).has_value());
    CHECK(contains(engine.fork(start, "side").c_str(), "\"name\":\"side\""));
    engine.switch_branch("side");
    CHECK(engine.current_branch() == "side");
    engine.rename_branch("main", "trunk");
    engine.switch_branch("trunk");
    engine.delete_branch("side");
    CHECK(!contains(engine.branches().c_str(), "\"side\""));
    CHECK(contains(engine.events(1, 1).c_str(), "world_created"));
    CHECK(contains(engine.export_world_file().c_str(), "Mira Holt"));
    const std::uint64_t memory =
        engine.add_memory("{\"owner\": " + std::to_string(mira) + ", \"text\": \"A quiet night\"}");
    CHECK(contains(engine.memory(memory).c_str(), "A quiet night"));
    CHECK(contains(engine.memories_of(mira).c_str(), "A quiet night"));
    // Retention on FSRS's curve (a day's stability at significance 0.5): whole when formed,
    // 0.9 a day on; reading it records nothing.
    const std::uint64_t before_retention = engine.head();
    CHECK(engine.retention(memory, 0) == 1.0);
    const double day = 86400000.0;
    const double created = std::strtod(
        engine.memory(memory).substr(engine.memory(memory).find("\"created\":") + 10).c_str(),
        nullptr);
    CHECK(std::abs(engine.retention(memory, static_cast<std::int64_t>(created + day)) - 0.9) <
          1e-12);
    CHECK(std::abs(engine.retention(memory, static_cast<std::int64_t>(created + 30 * day)) -
                   std::pow(1.0 + 19.0 / 81.0 * 30.0, -0.5)) < 1e-12);
    CHECK(engine.head() == before_retention);
    CHECK(code_of([&] { engine.retention(999999, 0); }) == RP_RESULT_NOT_FOUND);
    const std::string noted = "{\"seq\": " + std::to_string(engine.head()) + "}";
    engine.remove_memory(memory);
    CHECK(code_of([&] { engine.memory(memory); }) == RP_RESULT_NOT_FOUND);
    CHECK(code_of([&] { engine.retention(memory, 0); }) == RP_RESULT_NOT_FOUND);
    CHECK(contains(engine.memories_at(mira, noted).c_str(), "A quiet night"));
    CHECK(contains(engine.beliefs_at(mira, noted).c_str(), "\"beliefs\":"));
    CHECK(code_of([&] { engine.memories_at(mira, "{\"seq\": 0}"); }) == RP_RESULT_INVALID);
    rp::Condition night = rp::Condition::compile("time.is_night");
    CHECK(night.test("{\"hour\": 23}"));
    CHECK(!night.test("{\"hour\": 12}"));
    CHECK(contains(rp::check_sheet("$if (: x").c_str(), "\"ok\":false"));
}

void test_the_poll_form() {
    rp::Engine engine = tavern();
    const std::uint64_t wren = engine.entity_id("wren");
    rp::Turn turn = engine.begin_turn(input(wren, "Tobias, lights?", 60000));
    std::string step = turn.step();
    CHECK(contains(step.c_str(), "\"step\":\"generate\""));
    CHECK(code_of([&] { turn.finish(); }) == RP_RESULT_CONFLICT);
    turn.provide("{\"text\": \"Green ones.\"}");
    step = turn.step();
    CHECK(contains(step.c_str(), "\"step\":\"done\""));
    const std::string outcome = turn.finish();
    CHECK(contains(outcome.c_str(), "\"text\":\"Green ones.\""));
    CHECK(code_of([&] { turn.step(); }) == RP_RESULT_CONFLICT);

    // A turn that outlives its engine is refused, never a crash.
    rp::Turn orphan = [&] {
        rp::Engine short_lived = tavern();
        return short_lived.begin_turn(input(short_lived.entity_id("wren"), "Hello?", 1000));
    }();
    CHECK(code_of([&] { orphan.step(); }) == RP_RESULT_INVALID_HANDLE);
}

void test_the_callback_form_and_its_exceptions() {
    rp::Engine engine = tavern();
    const std::uint64_t wren = engine.entity_id("wren");
    const std::uint64_t tobias = engine.entity_id("tobias");
    std::string streamed;
    std::uint64_t streamed_by = 0;

    const std::string outcome = engine.run_turn(
        input(wren, "Tobias, lights?", 60000), "{\"max_responders\": 1}",
        [](std::string_view request, rp::TokenSink &sink) {
            CHECK(contains(std::string(request).c_str(), "Tobias, lights?"));
            sink.emit("Green ");
            sink.emit("ones.");
            return std::string("{\"text\": \"Green ones.\"}");
        },
        [&](std::uint64_t speaker, std::string_view piece) {
            streamed_by = speaker;
            streamed += piece;
        });
    CHECK(contains(outcome.c_str(), "\"text\":\"Green ones.\""));
    CHECK(streamed == "Green ones.");
    CHECK(streamed_by == tobias);

    // Without a token callback the tokens are dropped.
    CHECK(contains(engine
                       .run_turn(input(wren, "Tobias, and then?", 61000), {},
                                 [](std::string_view, rp::TokenSink &sink) {
                                     sink.emit("dropped");
                                     return std::string("{\"text\": \"Then nothing.\"}");
                                 })
                       .c_str(),
                   "Then nothing."));

    // An exception from generate abandons the turn (the input stays) and
    // comes back out of run_turn as itself.
    std::uint64_t before = engine.head();
    bool caught = false;
    try {
        engine.run_turn(input(wren, "Tobias?", 62000), {},
                        [](std::string_view, rp::TokenSink &) -> std::string {
                            throw ModelDown();
                        });
    } catch (const ModelDown &) {
        caught = true;
    }
    CHECK(caught);
    CHECK(engine.head() == before + 2);

    // So does one from on_token, through the sink's emit.
    before = engine.head();
    caught = false;
    try {
        engine.run_turn(
            input(wren, "Tobias!", 63000), {},
            [](std::string_view, rp::TokenSink &sink) {
                sink.emit("nothing at all");
                return std::string("{\"text\": \"nothing at all\"}");
            },
            [](std::uint64_t, std::string_view) { throw std::logic_error("display broke"); });
    } catch (const std::logic_error &error) {
        caught = std::string(error.what()) == "display broke";
    }
    CHECK(caught);
    CHECK(engine.head() == before + 2);
    CHECK(!contains(engine.dialogue().c_str(), "nothing at all"));

    // A result rp cannot read is an rp::Error of code GENERATION.
    CHECK(code_of([&] {
              engine.run_turn(input(wren, "Tobias.", 64000), {},
                              [](std::string_view, rp::TokenSink &) {
                                  return std::string("not json");
                              });
          }) == RP_RESULT_GENERATION);
}

void test_scoped_events_and_threads() {
    rp::Engine engine = tavern();
    const std::uint64_t wren = engine.entity_id("wren");
    const std::uint64_t mira = engine.entity_id("mira");
    const std::uint64_t letter = engine.entity_id("letter");
    const std::string plan = "{\"name\": \"the picnic\", \"participants\": [" +
                             std::to_string(wren) + ", " + std::to_string(mira) +
                             "], \"props\": {\"basket\": \"a wicker basket\"}}";
    const std::uint64_t picnic = engine.plan_event(plan, 60000);
    CHECK(contains(engine.scoped_event(picnic).c_str(), "\"status\":\"planned\""));
    std::string message;
    CHECK(code_of([&] { engine.complete_event(picnic, 60000); }, &message) ==
          RP_RESULT_CONFLICT);
    CHECK(contains(message.c_str(), "cannot complete"));
    engine.start_event(picnic, 60000);
    CHECK(contains(engine.inspect_prompt(mira, {}, 60000).c_str(), "a wicker basket"));
    engine.complete_event(picnic, 120000,
                          "{\"items\": [{\"item\": " + std::to_string(letter) +
                              ", \"to\": " + std::to_string(mira) + "}]}");
    CHECK(!contains(engine.inspect_prompt(mira, {}, 120000).c_str(), "a wicker basket"));
    CHECK(contains(engine.entity(mira).c_str(),
                   ("\"inventory\":[" + std::to_string(letter) + "]").c_str()));
    CHECK(contains(engine.scoped_events().c_str(), "\"status\":\"completed\""));
    CHECK(code_of([&] { engine.plan_event("{not json", 120000); }) == RP_RESULT_INVALID);
    CHECK(code_of([&] { engine.cancel_event(picnic, 120000); }) == RP_RESULT_CONFLICT);
    CHECK(code_of([&] { engine.expire_event(999999, 120000); }) == RP_RESULT_NOT_FOUND);
    CHECK(code_of([&] { engine.run_due(0); }) == RP_RESULT_INVALID);
    CHECK(contains(engine.run_due(180000).c_str(), "\"started\":[]"));

    const std::uint64_t thread = engine.open_thread("Who took the ledger?", {mira}, 180000);
    CHECK(contains(engine.threads().c_str(), "Who took the ledger?"));
    CHECK(contains(engine.inspect_prompt(mira, {}, 180000).c_str(), "Who took the ledger?"));
    engine.resolve_thread(thread, 180000);
    CHECK(!contains(engine.inspect_prompt(mira, {}, 180000).c_str(), "Who took the ledger?"));
    CHECK(code_of([&] { engine.drop_thread(thread, 180000); }) == RP_RESULT_CONFLICT);
    CHECK(code_of([&] { engine.open_thread("Nobody?", {}, 180000); }) == RP_RESULT_INVALID);
    const std::uint64_t other = engine.open_thread("Rain?", {wren}, 180000);
    engine.drop_thread(other, 180000);
    CHECK(contains(engine.threads().c_str(), "\"status\":\"dropped\""));
}

void test_jobs_scenes_queries_and_the_graph() {
    rp::Engine engine = tavern();
    const std::uint64_t wren = engine.entity_id("wren");
    const std::uint64_t mira = engine.entity_id("mira");
    const std::uint64_t booth = engine.container_id("booth");
    rp::Turn turn = engine.begin_turn(input(wren, "Tobias, lights?", 1000));
    turn.provide("{\"text\": \"Green ones.\"}");
    turn.finish();

    // The booth's scene, closed through the poll form: one summary each.
    const std::uint64_t scene = engine.current_scene(booth);
    CHECK(engine.current_scene(0, wren) == scene);
    CHECK(contains(engine.scene(scene).c_str(), "\"closed\":null"));
    rp::Job close = engine.begin_close_current_scene(booth, 2000);
    int summaries = 0;
    while (contains(close.step().c_str(), "\"step\":\"generate\"")) {
        close.provide("{\"text\": \"We spoke of lights.\"}");
        summaries++;
    }
    CHECK(summaries == 2);
    CHECK(contains(close.finish().c_str(), "\"summaries\":[["));
    CHECK(code_of([&] { close.step(); }) == RP_RESULT_CONFLICT);
    CHECK(contains(engine.scene(scene).c_str(), "\"closed\":2000"));
    CHECK(contains(engine.memories_of(wren).c_str(), "We spoke of lights."));
    CHECK(code_of([&] { engine.current_scene(booth); }) == RP_RESULT_NOT_FOUND);

    // A scene opened by the host, closed by a time skip run through a callback.
    const std::uint64_t opened = engine.open_scene(booth, 3000);
    CHECK(opened != scene);
    CHECK(contains(engine.scenes().c_str(), ("{\"id\":" + std::to_string(opened)).c_str()));
    CHECK(engine.due_scenes(4000) == "[]");
    rp::Job skip = engine.begin_time_skip("{\"kind\": \"jump\", \"to\": 7200000}");
    const std::string skipped =
        engine.run_job(skip, [](std::string_view, rp::TokenSink &) { return std::string(); });
    CHECK(contains(skipped.c_str(), "\"to\":7200000"));
    CHECK(contains(engine.scene(opened).c_str(), "\"closed\":3000"));

    // A query answered in one round, through a callback, then read back.
    rp::Job query = engine.begin_query("{\"text\": \"Who runs the inn?\", \"now\": 7200000}");
    const std::string answered = engine.run_job(query, [](std::string_view request,
                                                          rp::TokenSink &) {
        CHECK(contains(std::string(request).c_str(), "\"kind\":\"query\""));
        return std::string("{\"text\": \"{\\\"type\\\": \\\"answer\\\", "
                           "\\\"content\\\": \\\"Mira.\\\", "
                           "\\\"confidence\\\": \\\"low\\\"}\"}");
    });
    CHECK(contains(answered.c_str(), "\"status\":\"completed\""));
    CHECK(contains(engine.recent_queries(1).c_str(), "\"content\":\"Mira.\""));
    CHECK(code_of([&] { engine.query(999999); }) == RP_RESULT_NOT_FOUND);

    // An exception from the callback comes back out (the query is recorded as failed).
    rp::Job failing = engine.begin_query("{\"text\": \"Who?\", \"now\": 7200000}");
    bool thrown = false;
    try {
        engine.run_job(failing, [](std::string_view, rp::TokenSink &) -> std::string {
            throw ModelDown();
        });
    } catch (const ModelDown &) {
        thrown = true;
    }
    CHECK(thrown);

    // The graph.
    CHECK(contains(engine.graph("{\"op\": \"stats\"}").c_str(), "\"edges\":5"));
    CHECK(engine.graph("{\"op\": \"path\", \"from\": " + std::to_string(wren) +
                       ", \"to\": " + std::to_string(mira) + "}") ==
          "[" + std::to_string(wren) + "," + std::to_string(mira) + "]");
    CHECK(code_of([&] { engine.graph("{\"op\": \"nope\"}"); }) == RP_RESULT_INVALID);
    CHECK(code_of([&] { engine.begin_time_skip("{\"kind\": \"jump\", \"to\": 1}"); }) ==
          RP_RESULT_INVALID);
}

void test_drives_and_a_tick() {
    rp::Engine engine = tavern();
    const std::uint64_t tobias = engine.entity_id("tobias");
    CHECK(contains(engine.drives(tobias, 0).c_str(), "\"energy\":1.0,"));
    engine.configure_drives(tobias, "{\"social_debt_per_hour\": 20}");
    engine.set_personality(tobias, "{}");
    CHECK(code_of([&] { engine.set_personality(tobias, "{\"shyness\": 1.5}"); }) ==
          RP_RESULT_INVALID);
    CHECK(code_of([&] { engine.configure_drives(0, "{\"social_debt_per_hour\": -1}"); }) ==
          RP_RESULT_INVALID);
    CHECK(code_of([&] { engine.notify(tobias, "smell", "low", "", 0); }) == RP_RESULT_INVALID);
    CHECK(engine.notify(tobias, "sound", "low", "a drip", 0) > 0);
    CHECK(contains(engine.initiation_candidates(tobias, 0).c_str(), "\"explanation\":"));

    // Tobias speaks first to Wren when his pressure crosses.
    const std::string next = engine.next_tick(0);
    CHECK(contains(next.c_str(), "\"reason\":{\"kind\":\"pressure\""));
    const std::int64_t at = std::stoll(next.substr(next.find("\"at\":") + 5));
    rp::Job tick = engine.begin_tick(at);
    CHECK(contains(tick.step().c_str(), "\"purpose\":{\"kind\":\"initiate\""));
    tick.provide("{\"text\": \"Quiet one, aren't you?\"}");
    CHECK(contains(tick.step().c_str(), "\"step\":\"done\""));
    CHECK(contains(tick.finish().c_str(), "\"initiations\":[{"));
    CHECK(code_of([&] { engine.begin_tick(0); }) == RP_RESULT_INVALID);
}

void test_beliefs() {
    rp::Engine engine = tavern();
    const std::uint64_t tobias = engine.entity_id("tobias");
    const std::uint64_t mother = engine.mention_person("Wren's mother", "A seamstress.", 0, 0);
    CHECK(mother > 0);
    engine.observe_belief(
        "{\"observer\": \"tobias\", \"about\": \"wren\", \"mood\": \"tired\", "
        "\"feelings\": [{\"toward\": \"Wren's mother\", \"sentiment\": -0.5}]}",
        0);
    const std::string beliefs = engine.beliefs(tobias, 0);
    CHECK(contains(beliefs.c_str(), "\"mood\":{\"value\":\"tired\",\"confidence\":1.0,"));
    CHECK(contains(beliefs.c_str(), "\"toward_name\":\"Wren's mother\""));
    CHECK(code_of([&] {
              engine.observe_belief("{\"observer\": \"tobias\", \"about\": \"wren\", "
                                    "\"energy\": 2}",
                                    0);
          }) == RP_RESULT_INVALID);
    CHECK(code_of([&] { engine.mention_person("Wren's mother", "", 0, 0); }) ==
          RP_RESULT_CONFLICT);
}

void test_rules() {
    rp::Engine engine = tavern();
    const std::uint64_t tobias = engine.entity_id("tobias");
    const std::uint64_t rule = engine.add_rule(
        tobias,
        "{\"description\": \"ask Wren about the letter\", \"on\": {\"in_hours\": 1}, "
        "\"intent\": {\"initiate\": \"wren\", \"about\": \"the letter\"}}",
        0);
    CHECK(rule > 0);
    const std::string rules = engine.rules(tobias, 0);
    CHECK(contains(rules.c_str(), "\"description\":\"ask Wren about the letter\""));
    CHECK(contains(rules.c_str(), "\"trigger\":{\"at\":3600000}"));
    CHECK(contains(rules.c_str(), "\"weight_now\":0.8,"));
    CHECK(code_of([&] {
              engine.add_rule(tobias,
                              "{\"description\": \"x\", \"on\": {\"in_hours\": 1}, "
                              "\"intent\": {\"note\": \"y\"}, \"weight\": 5}",
                              0);
          }) == RP_RESULT_INVALID);
    CHECK(code_of([&] {
              engine.add_rule(tobias,
                              "{\"description\": \"x\", \"on\": {\"in_hours\": 1}, "
                              "\"intent\": {\"note\": \"y\"}, \"condition\": \"content.(\"}",
                              0);
          }) == RP_RESULT_FACT_SYNTAX);
    CHECK(code_of([&] { engine.rules(999999, 0); }) == RP_RESULT_NOT_FOUND);
    engine.remove_rule(rule, 0);
    CHECK(engine.rules(tobias, 0) == "[]");
    CHECK(code_of([&] { engine.remove_rule(rule, 0); }) == RP_RESULT_NOT_FOUND);
}


// The number after `key` in `json` (0 if absent).
std::uint64_t number_after(const std::string &json, const std::string &key) {
    const std::size_t at = json.find(key);
    return at == std::string::npos ? 0 : std::strtoull(json.c_str() + at + key.size(), nullptr, 10);
}

// A fresh directory under $TMPDIR (or /tmp) for save files.
std::string temp_dir() {
    const char *tmp = std::getenv("TMPDIR");
    std::string dir = std::string(tmp != nullptr && tmp[0] != '\0' ? tmp : "/tmp") +
                      "/rp-test-hpp-XXXXXX";
    CHECK(mkdtemp(dir.data()) != nullptr);
    return dir;
}

// What the C progress callback of test_the_save heard: its user_data.
struct Heard {
    int compact_reports = 0;
    std::uint64_t last_done = 0;
    std::uint64_t total = 0;
};

void heard_progress(void *user_data, const char *phase, std::uint64_t done,
                    std::uint64_t total) noexcept {
    Heard *heard = static_cast<Heard *>(user_data);
    if (std::string_view(phase) == "compact") {
        heard->compact_reports++;
        heard->last_done = done;
        heard->total = total;
    }
}

void test_the_save_backups_compaction_and_progress() {
    const std::string dir = temp_dir();
    const std::string backup = dir + "/backup.rp";
    const std::string side = dir + "/side.rp";
    rp::Engine engine = tavern();
    const std::uint64_t start = engine.head();
    engine.append("[{\"time_advanced\": {\"to\": 60000}}]");
    engine.fork(start, "side");

    // A backup, opened with its progress heard.
    engine.backup(backup);
    std::vector<std::string> phases;
    bool ended = false;
    rp::Engine copy = rp::Engine::open_with_progress(
        backup, [&](std::string_view phase, std::uint64_t done, std::uint64_t total) {
            if (phases.empty() || phases.back() != phase) {
                phases.emplace_back(phase);
            }
            ended = done == total;
        });
    CHECK(phases.size() == 2 && phases[0] == "open.snapshot" && phases[1] == "open.replay");
    CHECK(ended);
    CHECK(copy.head() == engine.head());
    CHECK(contains(copy.branches().c_str(), "\"name\":\"side\""));
    CHECK(contains(copy.compact().c_str(), "\"file_bytes_before\":"));
    // Eventual commits, then a flush; a bad durability throws and changes nothing.
    copy.set_durability("eventual");
    CHECK(copy.durability() == "eventual");
    copy.flush();
    CHECK(code_of([&] { copy.set_durability("sometimes"); }) == RP_RESULT_INVALID);
    CHECK(copy.durability() == "eventual");
    copy.close();

    // One branch, as the only one of a new save.
    engine.export_branch("side", side);
    rp::Engine exported = rp::Engine::open(side);
    CHECK(exported.current_branch() == "side");
    CHECK(exported.head() == start);
    exported.close();

    // Refusals: a path that exists, an unknown branch, a file that is no save, a
    // callback that throws (thrown again, the engine closed).
    std::string message;
    CHECK(code_of([&] { engine.backup(backup); }, &message) == RP_RESULT_CONFLICT);
    CHECK(contains(message.c_str(), "exists"));
    CHECK(code_of([&] { engine.export_branch("nope", dir + "/nope.rp"); }) ==
          RP_RESULT_NOT_FOUND);
    CHECK(code_of([&] { engine.backup(""); }) == RP_RESULT_INVALID);
    CHECK(code_of([] {
              rp::Engine::open_with_progress(tavern_path,
                                             [](std::string_view, std::uint64_t,
                                                std::uint64_t) {});
          }) == RP_RESULT_NOT_A_SAVE);
    bool thrown = false;
    try {
        rp::Engine::open_with_progress(backup, [](std::string_view, std::uint64_t,
                                                  std::uint64_t) { throw ModelDown(); });
    } catch (const ModelDown &) {
        thrown = true;
    }
    CHECK(thrown);

    // Compaction in memory: a report of zeros; its phase reaches the C callback.
    const std::string report = engine.compact();
    CHECK(contains(report.c_str(), "\"snapshots_dropped\":0,\"compacted\":false,"
                                   "\"records_upgraded\":0}"));
    Heard heard;
    engine.set_progress(&heard_progress, &heard);
    engine.compact();
    CHECK(heard.compact_reports >= 2);
    CHECK(heard.total > 0 && heard.last_done == heard.total);
    engine.set_progress(nullptr);
    heard = Heard();
    engine.compact();
    CHECK(heard.compact_reports == 0);

    // Where the memory index came from: nowhere before the first recall.
    CHECK(engine.memory_index_origin() == "null");
    engine.recall(engine.entity_id("tobias"), "marsh", 60000);
    CHECK(engine.memory_index_origin() == "\"memory\"");

    rp::Engine gone = std::move(engine);
    CHECK(code_of([&] { engine.compact(); }) == RP_RESULT_NULL_ARGUMENT);  // NOLINT
    CHECK(unlink(backup.c_str()) == 0);
    CHECK(unlink(side.c_str()) == 0);
    CHECK(rmdir(dir.c_str()) == 0);
}

const std::string card_json =
    "{\"spec\":\"chara_card_v2\",\"spec_version\":\"2.0\",\"data\":{\"name\":\"Aria Vell\","
    "\"description\":\"{{char}} is a bard with a cracked lute.\",\"personality\":\"wry\","
    "\"scenario\":\"\",\"first_mes\":\"*tunes her lute* Evening.\",\"mes_example\":\"\","
    "\"alternate_greetings\":[\"Oh. You again.\"],\"extensions\":{\"fav\":true}}}";

std::string as_text(const std::vector<std::uint8_t> &bytes) {
    return std::string(bytes.begin(), bytes.end());
}

void test_cards_as_bytes() {
    rp::Engine engine = tavern();
    const std::uint64_t tobias = engine.entity_id("tobias");
    const std::uint64_t wren = engine.entity_id("wren");
    const std::string imported = engine.import_card(card_json, 1000);
    CHECK(contains(imported.c_str(), "\"name\":\"Aria Vell\""));
    CHECK(contains(imported.c_str(), "\"alternate\":[\"Oh. You again.\"]"));
    const std::uint64_t aria = engine.entity_id("Aria Vell");
    CHECK(as_text(engine.export_card(aria, "v2")) == card_json);
    CHECK(contains(as_text(engine.export_card(aria, "v3")).c_str(), "\"chara_card_v3\""));

    // Tobias out as a PNG and into another engine, from the vector: its image kept.
    const std::vector<std::uint8_t> png = engine.export_card(tobias, "png");
    CHECK(png.size() > 8 && as_text(png).compare(0, 4, "\x89PNG") == 0);
    CHECK(engine.card_assets(tobias) == "[]");
    rp::Engine other = rp::Engine::in_memory("other");
    CHECK(contains(other.import_card(png, 1000).c_str(), "\"name\":\"Tobias Reed\""));
    const std::uint64_t other_tobias = other.entity_id("Tobias Reed");
    CHECK(contains(other.card_assets(other_tobias).c_str(),
                   "[{\"path\":\"assets/icon/image/main.png\",\"size\":"));
    const std::vector<std::uint8_t> image =
        other.card_asset(other_tobias, "assets/icon/image/main.png");
    CHECK(image.size() > 8 && image.size() < png.size());
    CHECK(as_text(image).compare(0, 4, "\x89PNG") == 0);
    CHECK(as_text(image).find("chara") == std::string::npos);

    // The host's image, on an entity of no card; a broken one refused.
    engine.set_card_image(wren, image, 2000);
    CHECK(contains(engine.card_assets(wren).c_str(), "assets/icon/image/main.png"));
    const std::uint64_t before = engine.head();
    std::string message;
    CHECK(code_of([&] { engine.set_card_image(wren, "GIF89a", 2000); }) == RP_RESULT_INVALID);
    std::vector<std::uint8_t> broken = image;
    broken[broken.size() - 6] ^= 0x01;
    CHECK(code_of([&] { engine.set_card_image(wren, broken, 2000); }, &message) ==
          RP_RESULT_INVALID);
    CHECK(contains(message.c_str(), "CRC"));
    CHECK(code_of([&] { engine.set_card_image(999999, image, 2000); }) == RP_RESULT_NOT_FOUND);
    CHECK(code_of([&] { engine.import_card(card_json, 2000); }) == RP_RESULT_CONFLICT);
    CHECK(code_of([&] { engine.import_card("[1, 2]", 2000); }) == RP_RESULT_INVALID);
    // An empty vector is no bytes, not NULL.
    CHECK(code_of([&] { engine.import_card(std::vector<std::uint8_t>(), 2000); }) ==
          RP_RESULT_INVALID);
    CHECK(code_of([&] { engine.export_card(999999, "v2"); }) == RP_RESULT_NOT_FOUND);
    CHECK(code_of([&] { engine.export_card(tobias, "gif"); }) == RP_RESULT_INVALID);
    CHECK(code_of([&] { other.card_asset(other_tobias, "nope.png"); }) == RP_RESULT_NOT_FOUND);
    CHECK(code_of([&] { engine.card_assets(999999); }) == RP_RESULT_NOT_FOUND);
    CHECK(engine.head() == before);
}

void test_lorebooks_timers_and_macros() {
    rp::Engine engine = tavern();
    const std::uint64_t tobias = engine.entity_id("tobias");
    const std::uint64_t wren = engine.entity_id("wren");
    const std::string book = "{\"entries\": {\"0\": {\"uid\": 0, \"key\": [\"bell\"], "
                             "\"content\": \"The bell is cracked.\", \"sticky\": 4}}}";
    const std::uint64_t id = engine.import_lorebook(book, 0, 1000);
    CHECK(id > 0);
    CHECK(engine.import_lorebook(book, tobias, 1000) > id);
    CHECK(contains(engine.lorebooks().c_str(), "\"owner\":null"));
    CHECK(engine.export_lorebook(id, "world_info") == book);
    CHECK(contains(engine.export_lorebook(id, "lorebook_v3").c_str(),
                   "\"spec\":\"lorebook_v3\""));
    CHECK(code_of([&] { engine.export_lorebook(id, "yaml"); }) == RP_RESULT_INVALID);
    CHECK(code_of([&] { engine.export_lorebook(999999, "world_info"); }) ==
          RP_RESULT_NOT_FOUND);
    CHECK(code_of([&] { engine.import_lorebook("{\"entries\": 5}", 0, 1000); }) ==
          RP_RESULT_INVALID);
    CHECK(code_of([&] { engine.import_lorebook(book, 999999, 1000); }) == RP_RESULT_NOT_FOUND);

    // A sticky entry, activated in a turn, leaves a timer.
    CHECK(engine.lore_timers(tobias) == "[]");
    engine.run_turn(input(wren, "Did you hear the bell, Tobias?", 5000), {},
                    [](std::string_view, rp::TokenSink &) {
                        return std::string("{\"text\": \"Aye.\"}");
                    });
    const std::string timers = engine.lore_timers(tobias);
    CHECK(contains(timers.c_str(), "\"kind\":\"sticky\""));
    CHECK(contains(timers.c_str(), "\"entry\":0"));
    CHECK(code_of([&] { engine.lore_timers(99999); }) == RP_RESULT_NOT_FOUND);

    // Macros, as the speaker's prompt expands them.
    const std::string greeting = "*waves at {{user}}* I am {{char}}.{{// a note}}";
    const std::string expanded = engine.expand_macros(greeting, tobias, wren);
    CHECK(expanded == "*waves at Wren* I am Tobias Reed.");
    CHECK(code_of([&] { engine.expand_macros(greeting, 99999, wren); }) == RP_RESULT_NOT_FOUND);
    CHECK(code_of([&] { engine.expand_macros("\xff", tobias, wren); }) ==
          RP_RESULT_INVALID_UTF8);
}

void test_requirements() {
    rp::Engine engine = tavern();
    const std::uint64_t wren = engine.entity_id("wren");
    const std::uint64_t tobias = engine.entity_id("tobias");
    const std::string fare =
        "{\"id\": \"fare\", \"name\": \"The fare\", \"subject\": \"wren\", "
        "\"condition\": \"self.fare_paid == true\", "
        "\"guards\": [{\"leave\": \"booth\"}, {\"time_skip\": true}, {\"action\": \"board\"}], "
        "\"text\": \"Wren must settle the bill before leaving the booth.\"}";
    const std::string added = engine.add_requirement(fare);
    CHECK(starts_with(added.c_str(), ("{\"id\":\"fare\",\"name\":\"The fare\",\"subject\":" +
                                      std::to_string(wren) + ",")
                                         .c_str()));
    const std::string all = engine.requirements();
    CHECK(starts_with(all.c_str(), "[{\"requirement\":{\"id\":\"fare\""));
    CHECK(contains(all.c_str(), "\"pending\":true,\"announced\":true}]"));

    // A host action it guards: refused for Wren and for no one, not for Tobias.
    std::string message;
    CHECK(code_of([&] { engine.check_action("board", wren); }, &message) ==
          RP_RESULT_REQUIREMENT_UNMET);
    CHECK(contains(message.c_str(), "The fare"));
    CHECK(code_of([&] { engine.check_action("board"); }) == RP_RESULT_REQUIREMENT_UNMET);
    engine.check_action("board", tobias);
    engine.check_action("sing", wren);
    CHECK(code_of([&] { engine.check_action("\xff"); }) == RP_RESULT_INVALID_UTF8);

    // Refusals change nothing.
    const std::uint64_t before = engine.head();
    CHECK(code_of([&] { engine.add_requirement("not json"); }) == RP_RESULT_INVALID);
    CHECK(code_of([&] { engine.add_requirement(fare); }) == RP_RESULT_CONFLICT);
    CHECK(code_of([&] { engine.remove_requirement("nope"); }) == RP_RESULT_NOT_FOUND);
    CHECK(engine.head() == before);

    engine.remove_requirement("fare");
    CHECK(engine.requirements() == "[]");
    engine.check_action("board", wren);
}

const std::int64_t minute = 60000;
const std::int64_t hour = 3600000;
const std::int64_t noon = 12 * hour;

void test_host_time_availability_and_the_next_tick() {
    // The world begins at midnight; nights last from ten to six: a tick puts them to sleep
    // now, the next wakes them at six.
    rp::Engine night = tavern();
    night.configure_drives(0, "{\"night_start\": 22, \"night_end\": 6}");
    CHECK(night.next_tick_at(0) == std::optional<std::int64_t>(0));
    rp::Job sleep = night.begin_tick(0);
    CHECK(contains(sleep.finish().c_str(), "\"initiations\":[]"));
    CHECK(night.next_tick_at(0) == std::optional<std::int64_t>(6 * hour));
    // A world where nothing will happen: none.
    CHECK(!rp::Engine::in_memory("empty").next_tick_at(0).has_value());

    // Tobias misses Wren, reported present at noon.
    rp::Engine engine = tavern();
    const std::uint64_t tobias = engine.entity_id("tobias");
    const std::uint64_t wren = engine.entity_id("wren");
    engine.configure_drives(tobias, "{\"social_debt_per_hour\": 20}");
    engine.set_personality(tobias, "{}");
    engine.report_availability(wren, 1.0, noon);
    CHECK(contains(engine.beliefs(tobias, noon).c_str(), "\"availability\":{\"value\":1.0"));
    CHECK(code_of([&] { engine.report_availability(wren, 1.5, noon); }) == RP_RESULT_INVALID);
    CHECK(code_of([&] { engine.report_availability(999999, 0.5, noon); }) ==
          RP_RESULT_NOT_FOUND);
    CHECK(code_of([&] { engine.next_tick_at(0); }) == RP_RESULT_INVALID);
    CHECK(engine.next_tick_at(noon) == std::optional<std::int64_t>(noon));

    // Host time played through a callback: Tobias speaks first.
    int calls = 0;
    const std::string played = engine.advance(
        noon + 10 * minute, "{\"max_initiations\": 1}",
        [&](std::string_view request, rp::TokenSink &) {
            calls++;
            return std::string(contains(std::string(request).c_str(), "\"kind\":\"initiate\"")
                                   ? "{\"text\": \"Still here, traveller?\"}"
                                   : "{\"text\": \"Tobias talked about the rain.\"}");
        });
    CHECK(calls >= 1);
    CHECK(starts_with(played.c_str(), "[{\"seq\":"));
    CHECK(contains(played.c_str(), "\"initiations\":[{\"candidate\":{"));
    CHECK(contains(played.c_str(), "Still here, traveller?"));
    CHECK(contains(engine.world().c_str(), "\"now\":43800000,"));

    // An exception from the callback comes back out; refusals get their codes.
    bool thrown = false;
    try {
        engine.advance(noon + 2 * hour, {},
                       [](std::string_view, rp::TokenSink &) -> std::string { throw ModelDown(); });
    } catch (const ModelDown &) {
        thrown = true;
    }
    CHECK(thrown);
    const auto silent = [](std::string_view, rp::TokenSink &) { return std::string(); };
    CHECK(code_of([&] { engine.advance(0, {}, silent); }) == RP_RESULT_INVALID);
    CHECK(code_of([&] { engine.advance(noon + 3 * hour, "{\"x\": 1}", silent); }) ==
          RP_RESULT_INVALID);
}

// Wren says `text` at `now`; Tobias answers `reply`. The ids of both lines.
std::pair<std::uint64_t, std::uint64_t> say(rp::Engine &engine, std::string_view text,
                                            const std::string &reply, long now) {
    const std::string outcome =
        engine.run_turn(input(engine.entity_id("wren"), text, now), {},
                        [&](std::string_view, rp::TokenSink &) { return reply; });
    return {number_after(outcome, "\"input\":"), number_after(outcome, "\"utterance\":")};
}

void test_edits_and_swipes() {
    rp::Engine engine = tavern();
    const std::uint64_t tobias = engine.entity_id("tobias");
    const auto first = say(engine, "I carry a sealed letter.",
                           "{\"text\": \"Aye, the ferryman.\"}", 5000);
    const auto second = say(engine, "Is it far?", "{\"text\": \"Nay.\"}", 65000);
    CHECK(first.first != 0 && first.second != 0 && second.first != 0);

    const std::uint64_t before = engine.head();
    CHECK(contains(engine.preview_edit(first.first, "I carry a wet letter.").c_str(),
                   "\"kind\":\"user_turn\",\"why\":\"the line, edited\""));
    CHECK(contains(engine.preview_edit(first.first).c_str(), "\"dropped\":"));
    CHECK(engine.head() == before);
    CHECK(contains(engine.edit_line(first.first, "I carry a wet letter.").c_str(),
                   "\"old_branch\":\"main~"));
    CHECK(contains(engine.memories_of(tobias).c_str(), "I carry a wet letter."));
    engine.delete_line(first.second, "{\"on_invalid\": \"drop\"}");
    CHECK(!contains(engine.memories_of(tobias).c_str(), "Aye, the ferryman."));
    CHECK(contains(engine.memories_of(tobias).c_str(), "Nay."));

    // Refusals change nothing.
    const std::uint64_t edited = engine.head();
    CHECK(code_of([&] { engine.edit_line(999999, "x"); }) == RP_RESULT_NOT_FOUND);
    CHECK(code_of([&] { engine.edit_line(second.first, "  "); }) == RP_RESULT_INVALID);
    CHECK(code_of([&] { engine.edit_line(second.first, {}); }) == RP_RESULT_INVALID);
    CHECK(code_of([&] { engine.delete_line(second.first, "{\"on_invalid\": \"explode\"}"); }) ==
          RP_RESULT_INVALID);
    CHECK(code_of([&] { engine.preview_edit(999999, "x"); }) == RP_RESULT_NOT_FOUND);
    CHECK(engine.head() == edited);

    // A swipe: the request again, another answer recorded, then chosen.
    rp::Engine swiped = tavern();
    const auto sit = say(swiped, "May I sit?", "{\"text\": \"Aye.\"}", 5000);
    const std::string request = swiped.swipe_request();
    CHECK(number_after(request, "\"line\":") == sit.second);
    CHECK(contains(request.c_str(), "May I sit?"));
    CHECK(swiped.alternatives(sit.second) == "null");
    CHECK(swiped.add_alternative(
              sit.second,
              "{\"text\": \"Tobias Reed: Sit down, stranger.\", \"model\": \"m\"}") == 1);
    CHECK(contains(swiped.alternatives(sit.second).c_str(),
                   "\"texts\":[\"Aye.\",\"Sit down, stranger.\"]"));
    swiped.choose(sit.second, 1, {}, [](std::string_view, rp::TokenSink &) {
        return std::string("{\"text\": \"{\\\"reports\\\": []}\"}");
    });
    CHECK(contains(swiped.alternatives(sit.second).c_str(), "\"chosen\":1"));
    CHECK(contains(swiped.memories_of(tobias).c_str(), "Sit down, stranger."));

    const std::uint64_t chosen = swiped.head();
    const auto none = [](std::string_view, rp::TokenSink &) { return std::string(); };
    CHECK(code_of([&] { swiped.choose(sit.second, 7, {}, none); }) == RP_RESULT_NOT_FOUND);
    CHECK(code_of([&] { swiped.add_alternative(sit.second, "{\"text\": \" \"}"); }) ==
          RP_RESULT_INVALID);
    CHECK(code_of([&] { swiped.swipe_request(sit.first); }) == RP_RESULT_CONFLICT);
    CHECK(code_of([&] { swiped.swipe_request(0, "{\"shout\": true}"); }) == RP_RESULT_INVALID);
    CHECK(swiped.head() == chosen);
}

const std::string actions_on =
    "{\"updates\": {\"enabled\": true, \"actions\": [{\"name\": \"open_door\", "
    "\"description\": \"someone opens a door\", \"parameters\": {\"type\": \"object\", "
    "\"additionalProperties\": false, \"required\": [\"door\"], "
    "\"properties\": {\"door\": {\"enum\": [\"cellar\", \"front\"]}}}}]}}";

// The reply, then a state update reporting the front door opened and a feeling.
std::string door_generate(std::string_view request, rp::TokenSink &sink) {
    if (!contains(std::string(request).c_str(), "\"purpose\":{\"kind\":\"state_update\"}")) {
        sink.emit("Aye.");
        return "{\"text\": \"Aye.\"}";
    }
    return "{\"text\": \"{\\\"reports\\\": ["
           "{\\\"type\\\": \\\"open_door\\\", \\\"who\\\": \\\"Tobias Reed\\\", "
           "\\\"door\\\": \\\"front\\\"}, "
           "{\\\"type\\\": \\\"feeling\\\", \\\"who\\\": \\\"Tobias Reed\\\", "
           "\\\"toward\\\": \\\"Wren\\\", \\\"affinity\\\": \\\"warmer\\\"}]}\"}";
}

void test_host_actions_through_a_callback() {
    rp::Engine engine = tavern();
    const std::uint64_t wren = engine.entity_id("wren");
    const std::uint64_t tobias = engine.entity_id("tobias");
    std::string call;
    std::string streamed;
    int acts = 0;

    // Done: the answer recorded, its system line injected.
    std::string outcome = engine.run_turn_with_actions(
        input(wren, "Tobias, the front door?", 1000), actions_on, door_generate,
        [&](std::uint64_t, std::string_view piece) { streamed += piece; },
        [&](std::string_view call_json) {
            acts++;
            call = std::string(call_json);
            return rp::ActAnswer::done(
                "{\"opened\": true, \"system_line\": \"The door creaks.\"}");
        });
    CHECK(acts == 1);
    CHECK(call == "{\"name\":\"open_door\",\"who\":" + std::to_string(tobias) +
                      ",\"arguments\":{\"door\":\"front\"},\"report\":0}");
    CHECK(streamed == "Aye.");
    CHECK(contains(outcome.c_str(), "\"answer\":\"{\\\"opened\\\":true,"));
    CHECK(contains(engine.system_lines().c_str(), "\"text\":\"The door creaks.\""));

    // Refused, with a reason: recorded as rejected; the turn goes on.
    outcome = engine.run_turn_with_actions(
        input(wren, "Tobias, the front door again?", 2000), actions_on, door_generate,
        [&](std::string_view) {
            acts++;
            return rp::ActAnswer::refuse("the front door is barred");
        });
    CHECK(acts == 2);
    CHECK(contains(outcome.c_str(),
                   "\"rejected\":\"the front door is barred\",\"answer\":null"));

    // An exception from act refuses the action; the turn is committed, and it comes out.
    const std::uint64_t before = engine.head();
    bool thrown = false;
    try {
        engine.run_turn_with_actions(input(wren, "Tobias, the door?", 3000), actions_on,
                                     door_generate, [](std::string_view) -> rp::ActAnswer {
                                         throw std::logic_error("the game broke");
                                     });
    } catch (const std::logic_error &error) {
        thrown = std::string(error.what()) == "the game broke";
    }
    CHECK(thrown);
    CHECK(engine.head() > before + 2);
    CHECK(contains(engine.dialogue().c_str(), "Tobias, the door?"));

    // So does one from generate: the turn abandoned, its input committed.
    const std::uint64_t abandoned = engine.head();
    thrown = false;
    try {
        engine.run_turn_with_actions(
            input(wren, "Tobias?", 4000), actions_on,
            [](std::string_view, rp::TokenSink &) -> std::string { throw ModelDown(); },
            [](std::string_view) { return rp::ActAnswer::done("{}"); });
    } catch (const ModelDown &) {
        thrown = true;
    }
    CHECK(thrown);
    CHECK(engine.head() == abandoned + 2);
    CHECK(code_of([&] {
              engine.run_turn_with_actions(
                  input(wren, "Tobias?", 5000), "{\"semantic\": true}", door_generate,
                  [](std::string_view) { return rp::ActAnswer::done("{}"); });
          }) == RP_RESULT_INVALID);
}

}  // namespace

int main(int argc, char **argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s PATH/TO/examples/tavern.toml\n", argv[0]);
        return 2;
    }
    tavern_path = argv[1];
    test_engines_are_owned_and_moved();
    test_failures_are_errors_with_their_codes();
    test_the_world_and_branches_as_strings();
    test_the_poll_form();
    test_the_callback_form_and_its_exceptions();
    test_scoped_events_and_threads();
    test_jobs_scenes_queries_and_the_graph();
    test_drives_and_a_tick();
    test_beliefs();
    test_rules();
    test_the_save_backups_compaction_and_progress();
    test_cards_as_bytes();
    test_lorebooks_timers_and_macros();
    test_requirements();
    test_host_time_availability_and_the_next_tick();
    test_edits_and_swipes();
    test_host_actions_through_a_callback();
    return checks_done("test_hpp");
}
