// rp.hpp: a small header-only C++17 wrapper over the C ABI of rp (rp.h).
//
// - Ownership: rp::Engine, rp::Turn, rp::Job and rp::Condition own their handle
//   (move-only; the destructor frees it). get() lends the raw handle for the
//   calls of rp.h this header does not wrap.
// - Errors: a failed call throws rp::Error, carrying the rp_result code and
//   the message of rp_last_error().
// - Strings: std::string_view in (any bytes, not NUL-terminated; rp checks
//   they are UTF-8), std::string out (rp's strings are copied and released
//   with rp_string_free). Structured values are JSON text, with the schemas
//   documented in rp.h.
// - Threads: as rp.h says; an rp::Engine may be used from several threads,
//   but moving or destroying it while another thread uses it is a data race
//   on the C++ object, as for any C++ object.
//
// Link against librp (static or shared) as for rp.h:
//
//   c++ -std=c++17 -Iinclude app.cpp target/debug/librp.a -lpthread -ldl -lm
// One file on purpose, long as it is: a header-only wrapper users copy whole.
#ifndef RP_HPP
#define RP_HPP

#include "rp.h"

#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace rp {

// A failed rp call: the code it returned and the message rp_last_error()
// gave right after it.
class Error : public std::runtime_error {
public:
    Error(rp_result code, const std::string &message) : std::runtime_error(message), code_(code) {}

    // The RP_RESULT_* code of the failure (never RP_RESULT_OK).
    rp_result code() const noexcept { return code_; }

private:
    rp_result code_;
};

namespace detail {

// Throws rp::Error for a failed call, with this thread's last error.
inline void check(rp_result result) {
    if (result != RP_RESULT_OK) {
        throw Error(result, rp_last_error());
    }
}

// A required string: rp refuses a NULL pointer even with length 0, and an
// empty std::string_view may have one.
inline const char *text(std::string_view s) noexcept { return s.data() != nullptr ? s.data() : ""; }

// An optional string: empty means NULL with length 0 (the call's default).
inline const char *optional_text(std::string_view s) noexcept {
    return s.empty() ? nullptr : s.data();
}

struct StringFree {
    void operator()(char *s) const noexcept { rp_string_free(s); }
};

// Copies a string rp handed out, then releases it (also if copying throws).
inline std::string take(char *s) {
    const std::unique_ptr<char, StringFree> owned(s);
    return owned ? std::string(owned.get()) : std::string();
}

// Runs `call(&out)` for a call with a char ** out-parameter and takes the
// string it wrote.
template <class Call>
std::string string_out(Call &&call) {
    char *out = nullptr;
    check(call(&out));
    return take(out);
}

struct BytesFree {
    std::size_t len;
    void operator()(std::uint8_t *bytes) const noexcept { rp_bytes_free(bytes, len); }
};

// Copies bytes rp handed out, then releases them with rp_bytes_free (also if
// copying throws).
inline std::vector<std::uint8_t> take_bytes(std::uint8_t *bytes, std::size_t len) {
    const std::unique_ptr<std::uint8_t, BytesFree> owned(bytes, BytesFree{len});
    return owned ? std::vector<std::uint8_t>(owned.get(), owned.get() + len)
                 : std::vector<std::uint8_t>();
}

// Runs `call(&bytes, &len)` for a call with uint8_t ** and size_t *
// out-parameters and takes the bytes it wrote.
template <class Call>
std::vector<std::uint8_t> bytes_out(Call &&call) {
    std::uint8_t *bytes = nullptr;
    std::size_t len = 0;
    check(call(&bytes, &len));
    return take_bytes(bytes, len);
}

// Bytes in: rp refuses a NULL pointer even with length 0, and an empty
// std::vector may have one.
inline const std::uint8_t *bytes(const std::vector<std::uint8_t> &b) noexcept {
    static const std::uint8_t none = 0;
    return b.empty() ? &none : b.data();
}
inline const std::uint8_t *bytes(std::string_view b) noexcept {
    return reinterpret_cast<const std::uint8_t *>(text(b));
}

// What the callbacks of one Engine::run_turn share (the user_data of the
// C callbacks).
struct RunStateBase {
    std::string result;              // the result JSON: outlives the callback
    std::string message;             // why a callback failed
    std::exception_ptr error;        // what a callback threw, rethrown by run_turn
};

}  // namespace detail

// The version of the loaded librp, such as "0.1.0".
inline std::string_view version() noexcept { return rp_version(); }

// Throws rp::Error (RP_RESULT_VERSION_MISMATCH) unless the loaded librp is
// exactly `expected`.
inline void check_version(std::string_view expected) {
    detail::check(rp_check_version(detail::text(expected), expected.size()));
}

// rp_sheet_check: whether a fact sheet compiles, as JSON.
inline std::string check_sheet(std::string_view sheet) {
    return detail::string_out(
        [&](char **out) { return rp_sheet_check(detail::text(sheet), sheet.size(), out); });
}

// rp_decision_explain: a decision JSON as text a writer can read.
inline std::string explain(std::string_view decision_json) {
    return detail::string_out([&](char **out) {
        return rp_decision_explain(detail::text(decision_json), decision_json.size(), out);
    });
}

// Where a generate callback of Engine::run_turn streams its tokens
// (rp_token_sink_emit). Valid only while that callback runs.
class TokenSink {
public:
    // Hands `text` to the on_token callback of run_turn. Throws rp::Error
    // when rp refuses it, or what on_token threw.
    void emit(std::string_view piece) {
        const rp_result result = rp_token_sink_emit(sink_, detail::text(piece), piece.size());
        if (state_->error) {
            std::rethrow_exception(state_->error);
        }
        detail::check(result);
    }

    TokenSink(rp_token_sink *sink, detail::RunStateBase *state) noexcept
        : sink_(sink), state_(state) {}

private:
    rp_token_sink *sink_;
    detail::RunStateBase *state_;
};

namespace detail {

template <class Generate, class OnToken>
struct RunState : RunStateBase {
    RunState(Generate &g, OnToken *t) : generate(g), on_token(t) {}
    Generate &generate;
    OnToken *on_token;
};

template <class State>
int generate_trampoline(void *user_data, const char *request_json, std::size_t request_json_len,
                        rp_token_sink *sink, const char **out_result_json,
                        std::size_t *out_result_len) noexcept {
    State *state = static_cast<State *>(user_data);
    try {
        TokenSink token_sink(sink, state);
        state->result = state->generate(std::string_view(request_json, request_json_len),
                                        token_sink);
        *out_result_json = state->result.data();
        *out_result_len = state->result.size();
        return RP_RESULT_OK;
    } catch (...) {
        // No exception crosses into rp: it is kept, the turn is abandoned,
        // and run_turn throws it again.
        state->error = std::current_exception();
        state->message = "the C++ generate callback threw an exception";
        *out_result_json = state->message.data();
        *out_result_len = state->message.size();
        return RP_RESULT_GENERATION;
    }
}

template <class State>
void token_trampoline(void *user_data, std::uint64_t speaker, const char *piece,
                      std::size_t piece_len) noexcept {
    State *state = static_cast<State *>(user_data);
    if (state->error) {
        return;
    }
    try {
        (*state->on_token)(speaker, std::string_view(piece, piece_len));
    } catch (...) {
        state->error = std::current_exception();
    }
}

struct NoTokens {
    void operator()(std::uint64_t, std::string_view) const noexcept {}
};

}  // namespace detail

// The answer of an act callback of Engine::run_turn_with_actions: the game
// did the action (done, with what it did as JSON) or refused it (refuse,
// with why), as Turn::provide_action and Turn::refuse_action say.
class ActAnswer {
public:
    static ActAnswer done(std::string answer_json) {
        return ActAnswer(true, std::move(answer_json));
    }
    static ActAnswer refuse(std::string reason) { return ActAnswer(false, std::move(reason)); }

    bool is_done() const noexcept { return done_; }
    // The answer JSON, or the reason.
    const std::string &text() const noexcept { return text_; }
    std::string &text() noexcept { return text_; }

private:
    ActAnswer(bool done, std::string text) : done_(done), text_(std::move(text)) {}

    bool done_;
    std::string text_;
};

namespace detail {

template <class Generate, class OnToken, class Act>
struct ActState : RunState<Generate, OnToken> {
    ActState(Generate &g, OnToken *t, Act *a) : RunState<Generate, OnToken>(g, t), act(a) {}
    Act *act;
    std::string answer;  // the answer or reason: outlives the callback
};

template <class State>
int act_trampoline(void *user_data, const char *call_json, std::size_t call_json_len,
                   const char **out_answer, std::size_t *out_answer_len) noexcept {
    State *state = static_cast<State *>(user_data);
    if (!state->error) {
        try {
            ActAnswer answer = (*state->act)(std::string_view(call_json, call_json_len));
            state->answer = std::move(answer.text());
            *out_answer = state->answer.data();
            *out_answer_len = state->answer.size();
            return answer.is_done() ? RP_RESULT_OK : RP_RESULT_INVALID;
        } catch (...) {
            // No exception crosses into rp: the action is refused, and so is
            // every later one.
            state->error = std::current_exception();
        }
    }
    state->message = "the C++ act callback threw an exception";
    *out_answer = state->message.data();
    *out_answer_len = state->message.size();
    return RP_RESULT_INVALID;
}

// What the progress callback of Engine::open_with_progress shares.
template <class Progress>
struct ProgressState {
    explicit ProgressState(Progress &p) : progress(p) {}
    Progress &progress;
    std::exception_ptr error;  // what it threw, rethrown by open_with_progress
};

template <class State>
void progress_trampoline(void *user_data, const char *phase, std::uint64_t done,
                         std::uint64_t total) noexcept {
    State *state = static_cast<State *>(user_data);
    if (state->error) {
        return;
    }
    try {
        state->progress(std::string_view(phase != nullptr ? phase : ""), done, total);
    } catch (...) {
        state->error = std::current_exception();
    }
}

}  // namespace detail

// A turn in progress, the poll form (rp_turn_begin ... rp_turn_finish): made
// by Engine::begin_turn, owned (the destructor frees it; a turn freed before
// finish() is abandoned, its input stays committed). It keeps the raw handle
// of its engine: the engine must outlive it (a call after the engine is
// freed throws rp::Error with RP_RESULT_INVALID_HANDLE, never crashes).
class Turn {
public:
    Turn(rp_engine *engine, rp_turn *turn) noexcept : engine_(engine), turn_(turn) {}
    Turn(const Turn &) = delete;
    Turn &operator=(const Turn &) = delete;
    Turn(Turn &&other) noexcept
        : engine_(other.engine_), turn_(std::exchange(other.turn_, nullptr)) {}
    Turn &operator=(Turn &&other) noexcept {
        if (this != &other) {
            reset();
            engine_ = other.engine_;
            turn_ = std::exchange(other.turn_, nullptr);
        }
        return *this;
    }
    ~Turn() { reset(); }

    // What the turn needs next: the step JSON of rp_turn_step
    // ("generate", "embed", "act" or "done").
    std::string step() {
        return detail::string_out([&](char **out) { return rp_turn_step(engine_, turn_, out); });
    }
    // The generation a "generate" step asked for (rp_turn_provide).
    void provide(std::string_view result_json) {
        detail::check(
            rp_turn_provide(engine_, turn_, detail::text(result_json), result_json.size()));
    }
    // The vectors an "embed" step asked for (rp_turn_provide_embeddings).
    void provide_embeddings(std::string_view vectors_json) {
        detail::check(rp_turn_provide_embeddings(engine_, turn_, detail::text(vectors_json),
                                                 vectors_json.size()));
    }
    // What the game did for an "act" step (rp_turn_provide_action).
    void provide_action(std::string_view answer_json) {
        detail::check(rp_turn_provide_action(engine_, turn_, detail::text(answer_json),
                                             answer_json.size(), nullptr, 0));
    }
    // Why the game refused an "act" step (rp_turn_provide_action).
    void refuse_action(std::string_view reason) {
        detail::check(rp_turn_provide_action(engine_, turn_, nullptr, 0, detail::text(reason),
                                             reason.size()));
    }
    // Commits the turn; the outcome JSON of rp_turn_finish.
    std::string finish() {
        return detail::string_out(
            [&](char **out) { return rp_turn_finish(engine_, turn_, out); });
    }

    rp_turn *get() const noexcept { return turn_; }

private:
    void reset() noexcept {
        if (turn_ != nullptr) {
            rp_turn_free(turn_);
            turn_ = nullptr;
        }
    }

    rp_engine *engine_;
    rp_turn *turn_;
};

// A job in progress (rp_job: closing a scene, a time skip, a world query, a
// tick), the poll form: made by Engine::begin_scene_close,
// begin_close_current_scene, begin_time_skip, begin_query or begin_tick; owned (the
// destructor frees it; a job freed before finish() is abandoned, nothing of
// it committed). Run it whole with Engine::run_job. It keeps the raw handle
// of its engine: the engine must outlive it (a call after the engine is
// freed throws rp::Error with RP_RESULT_INVALID_HANDLE, never crashes).
class Job {
public:
    Job(rp_engine *engine, rp_job *job) noexcept : engine_(engine), job_(job) {}
    Job(const Job &) = delete;
    Job &operator=(const Job &) = delete;
    Job(Job &&other) noexcept : engine_(other.engine_), job_(std::exchange(other.job_, nullptr)) {}
    Job &operator=(Job &&other) noexcept {
        if (this != &other) {
            reset();
            engine_ = other.engine_;
            job_ = std::exchange(other.job_, nullptr);
        }
        return *this;
    }
    ~Job() { reset(); }

    // What the job needs next: the step JSON of rp_job_step ("generate" or
    // "done").
    std::string step() {
        return detail::string_out([&](char **out) { return rp_job_step(engine_, job_, out); });
    }
    // The generation a "generate" step asked for (rp_job_provide).
    void provide(std::string_view result_json) {
        detail::check(
            rp_job_provide(engine_, job_, detail::text(result_json), result_json.size()));
    }
    // The vectors an "embed" step asked for (rp_job_provide_embeddings).
    void provide_embeddings(std::string_view vectors_json) {
        detail::check(rp_job_provide_embeddings(engine_, job_, detail::text(vectors_json),
                                                vectors_json.size()));
    }
    // What the game did for an "act" step (rp_job_provide_action).
    void provide_action(std::string_view answer_json) {
        detail::check(rp_job_provide_action(engine_, job_, detail::text(answer_json),
                                            answer_json.size(), nullptr, 0));
    }
    // Why the game refused an "act" step (rp_job_provide_action).
    void refuse_action(std::string_view reason) {
        detail::check(rp_job_provide_action(engine_, job_, nullptr, 0, detail::text(reason),
                                            reason.size()));
    }
    // The host could not answer (rp_job_fail): a query is recorded as failed, a tick holds
    // its initiation back; finish() then reports it.
    void fail(std::string_view reason) {
        detail::check(rp_job_fail(engine_, job_, detail::text(reason), reason.size()));
    }
    // Commits the job; the outcome JSON of rp_job_finish.
    std::string finish() {
        return detail::string_out([&](char **out) { return rp_job_finish(engine_, job_, out); });
    }

    rp_job *get() const noexcept { return job_; }

private:
    void reset() noexcept {
        if (job_ != nullptr) {
            rp_job_free(job_);
            job_ = nullptr;
        }
    }

    rp_engine *engine_;
    rp_job *job_;
};

// A world and the save that keeps its log (rp_engine), owned: the
// destructor closes it (rp_engine_free).
class Engine {
public:
    // rp_engine_in_memory.
    static Engine in_memory(std::string_view name, std::int64_t now = 0) {
        rp_engine *engine = nullptr;
        detail::check(rp_engine_in_memory(detail::text(name), name.size(), now, &engine));
        return Engine(engine);
    }
    // rp_engine_open.
    static Engine open(std::string_view path) {
        rp_engine *engine = nullptr;
        detail::check(rp_engine_open(detail::text(path), path.size(), &engine));
        return Engine(engine);
    }
    // rp_engine_open_with_progress: `progress`, callable as
    // void(std::string_view phase, std::uint64_t done, std::uint64_t total),
    // hears the open's phases on the calling thread and is not kept. An
    // exception from it is thrown again once the open is over (the engine
    // closed); rp never sees it.
    template <class Progress>
    static Engine open_with_progress(std::string_view path, Progress &&progress) {
        using State = detail::ProgressState<std::remove_reference_t<Progress>>;
        State state(progress);
        rp_engine *engine = nullptr;
        const rp_result result =
            rp_engine_open_with_progress(detail::text(path), path.size(),
                                         &detail::progress_trampoline<State>, &state, &engine);
        Engine opened(result == RP_RESULT_OK ? engine : nullptr);
        if (state.error) {
            std::rethrow_exception(state.error);
        }
        detail::check(result);
        return opened;
    }
    // rp_engine_create_from_world_file.
    static Engine create_from_world_file(std::string_view save_path,
                                         std::string_view world_file_path,
                                         std::int64_t now = 0) {
        rp_engine *engine = nullptr;
        detail::check(rp_engine_create_from_world_file(
            detail::text(save_path), save_path.size(), detail::text(world_file_path),
            world_file_path.size(), now, &engine));
        return Engine(engine);
    }

    // Takes ownership of a handle from rp.h.
    explicit Engine(rp_engine *engine) noexcept : engine_(engine) {}
    Engine(const Engine &) = delete;
    Engine &operator=(const Engine &) = delete;
    Engine(Engine &&other) noexcept : engine_(std::exchange(other.engine_, nullptr)) {}
    Engine &operator=(Engine &&other) noexcept {
        if (this != &other) {
            reset();
            engine_ = std::exchange(other.engine_, nullptr);
        }
        return *this;
    }
    ~Engine() { reset(); }

    // The raw handle, still owned by this object.
    rp_engine *get() const noexcept { return engine_; }
    // Gives up ownership: the caller frees the handle with rp_engine_free.
    rp_engine *release() noexcept { return std::exchange(engine_, nullptr); }
    // Closes the engine now, throwing on failure (the destructor ignores
    // failures).
    void close() {
        const rp_result result = rp_engine_free(std::exchange(engine_, nullptr));
        detail::check(result);
    }

    // World files.
    std::size_t load_world_file(std::string_view path) {
        std::size_t events = 0;
        detail::check(rp_engine_load_world_file(engine_, detail::text(path), path.size(), &events));
        return events;
    }
    std::size_t apply_world_file(std::string_view file_name, std::string_view toml) {
        std::size_t events = 0;
        detail::check(rp_engine_apply_world_file(engine_, detail::text(file_name),
                                                 file_name.size(), detail::text(toml),
                                                 toml.size(), &events));
        return events;
    }
    std::string export_world_file() const {
        return detail::string_out(
            [&](char **out) { return rp_engine_export_world_file(engine_, out); });
    }

    // The world model (JSON as documented in rp.h).
    std::uint64_t head() const {
        std::uint64_t seq = 0;
        detail::check(rp_engine_head(engine_, &seq));
        return seq;
    }
    std::uint64_t entity_id(std::string_view name_or_key) const {
        std::uint64_t id = 0;
        detail::check(
            rp_engine_entity_id(engine_, detail::text(name_or_key), name_or_key.size(), &id));
        return id;
    }
    std::uint64_t container_id(std::string_view name_or_key) const {
        std::uint64_t id = 0;
        detail::check(
            rp_engine_container_id(engine_, detail::text(name_or_key), name_or_key.size(), &id));
        return id;
    }
    std::uint64_t next_id() const {
        std::uint64_t id = 0;
        detail::check(rp_engine_next_id(engine_, &id));
        return id;
    }
    std::string world() const {
        return detail::string_out([&](char **out) { return rp_engine_world(engine_, out); });
    }
    std::string entities() const {
        return detail::string_out([&](char **out) { return rp_engine_entities(engine_, out); });
    }
    std::string entity(std::uint64_t id) const {
        return detail::string_out([&](char **out) { return rp_engine_entity(engine_, id, out); });
    }
    std::string containers() const {
        return detail::string_out(
            [&](char **out) { return rp_engine_containers(engine_, out); });
    }
    std::string container(std::uint64_t id) const {
        return detail::string_out(
            [&](char **out) { return rp_engine_container(engine_, id, out); });
    }
    std::string edges() const {
        return detail::string_out([&](char **out) { return rp_engine_edges(engine_, out); });
    }
    std::string edges_from(std::uint64_t from) const {
        return detail::string_out(
            [&](char **out) { return rp_engine_edges_from(engine_, from, out); });
    }
    std::string edge(std::uint64_t from, std::uint64_t to) const {
        return detail::string_out(
            [&](char **out) { return rp_engine_edge(engine_, from, to, out); });
    }
    std::string dialogue() const {
        return detail::string_out([&](char **out) { return rp_engine_dialogue(engine_, out); });
    }
    // Appends a JSON array of events in one transaction; the new head.
    std::uint64_t append(std::string_view events_json) {
        std::uint64_t seq = 0;
        detail::check(
            rp_engine_append(engine_, detail::text(events_json), events_json.size(), &seq));
        return seq;
    }
    std::string events(std::uint64_t first, std::uint64_t last) const {
        return detail::string_out(
            [&](char **out) { return rp_engine_events(engine_, first, last, out); });
    }

    // Branches.
    std::string branches() const {
        return detail::string_out([&](char **out) { return rp_engine_branches(engine_, out); });
    }
    std::string current_branch() const {
        return detail::string_out(
            [&](char **out) { return rp_engine_current_branch(engine_, out); });
    }
    std::string preview_rewind(std::uint64_t to_seq) const {
        return detail::string_out(
            [&](char **out) { return rp_engine_preview_rewind(engine_, to_seq, out); });
    }
    // The name of the branch that keeps the undone events; none when
    // nothing was undone.
    std::optional<std::string> rewind(std::uint64_t to_seq) {
        char *kept = nullptr;
        detail::check(rp_engine_rewind(engine_, to_seq, &kept));
        if (kept == nullptr) {
            return std::nullopt;
        }
        return detail::take(kept);
    }
    // The new branch, as JSON.
    std::string fork(std::uint64_t at_seq, std::string_view name) {
        return detail::string_out([&](char **out) {
            return rp_engine_fork(engine_, at_seq, detail::text(name), name.size(), out);
        });
    }
    void switch_branch(std::string_view name) {
        detail::check(rp_engine_switch_branch(engine_, detail::text(name), name.size()));
    }
    void rename_branch(std::string_view from, std::string_view to) {
        detail::check(rp_engine_rename_branch(engine_, detail::text(from), from.size(),
                                              detail::text(to), to.size()));
    }
    void delete_branch(std::string_view name) {
        detail::check(rp_engine_delete_branch(engine_, detail::text(name), name.size()));
    }

    // The save. rp_engine_backup: every branch to a new save file at `path`.
    void backup(std::string_view path) {
        detail::check(rp_engine_backup(engine_, detail::text(path), path.size()));
    }
    // rp_engine_export_branch: branch `name`'s history to a new save at `path`.
    void export_branch(std::string_view name, std::string_view path) {
        detail::check(rp_engine_export_branch(engine_, detail::text(name), name.size(),
                                              detail::text(path), path.size()));
    }
    // rp_engine_set_durability: "immediate" or "eventual".
    void set_durability(std::string_view name) {
        detail::check(rp_engine_set_durability(engine_, detail::text(name), name.size()));
    }
    // rp_engine_durability: "immediate" or "eventual".
    std::string durability() {
        return detail::string_out([&](char **out) { return rp_engine_durability(engine_, out); });
    }
    // rp_engine_flush: every earlier commit durable.
    void flush() { detail::check(rp_engine_flush(engine_)); }
    // rp_engine_compact: what it did, as JSON.
    std::string compact() {
        return detail::string_out([&](char **out) { return rp_engine_compact(engine_, out); });
    }
    // rp_engine_set_progress, taking the C callback and its user_data as rp.h
    // does (nullptr removes it): the engine keeps them past the call, on
    // whichever thread calls it, so no C++ callable's lifetime can be tied to
    // it. `progress` must not throw (no exception may cross into rp).
    void set_progress(rp_progress_fn progress, void *user_data = nullptr) {
        detail::check(rp_engine_set_progress(engine_, progress, user_data));
    }

    // Response control: the decision JSON (see rp::explain).
    std::string decide(std::uint64_t entity, std::string_view message_json) {
        return detail::string_out([&](char **out) {
            return rp_engine_decide(engine_, entity, detail::text(message_json),
                                    message_json.size(), out);
        });
    }

    // Memories and retrieval.
    std::uint64_t add_memory(std::string_view memory_json) {
        std::uint64_t id = 0;
        detail::check(
            rp_engine_add_memory(engine_, detail::text(memory_json), memory_json.size(), &id));
        return id;
    }
    std::string memory(std::uint64_t memory_id) const {
        return detail::string_out(
            [&](char **out) { return rp_engine_memory(engine_, memory_id, out); });
    }
    std::string memories_of(std::uint64_t owner) const {
        return detail::string_out(
            [&](char **out) { return rp_engine_memories_of(engine_, owner, out); });
    }
    // The past (docs/history.md): what `entity` could recall, and believed, at
    // the point `as_of_json` names ({"seq": 120} or {"time": ms}, optionally
    // with "branch"), as JSON (see rp_engine_memories_at, rp_engine_beliefs_at).
    std::string memories_at(std::uint64_t entity, std::string_view as_of_json) {
        return detail::string_out([&](char **out) {
            return rp_engine_memories_at(engine_, entity, detail::text(as_of_json),
                                         as_of_json.size(), out);
        });
    }
    std::string beliefs_at(std::uint64_t entity, std::string_view as_of_json) {
        return detail::string_out([&](char **out) {
            return rp_engine_beliefs_at(engine_, entity, detail::text(as_of_json),
                                        as_of_json.size(), out);
        });
    }
    void remove_memory(std::uint64_t memory_id) {
        detail::check(rp_engine_remove_memory(engine_, memory_id));
    }
    std::string recall(std::uint64_t speaker, std::string_view query, std::int64_t now,
                       std::string_view options_json = {}) const {
        return detail::string_out([&](char **out) {
            return rp_engine_recall(engine_, speaker, detail::text(query), query.size(), now,
                                    detail::optional_text(options_json), options_json.size(),
                                    out);
        });
    }
    std::uint64_t mark_recalled(const std::vector<std::uint64_t> &memory_ids, std::int64_t at) {
        std::uint64_t seq = 0;
        detail::check(rp_engine_mark_recalled(engine_, memory_ids.data(), memory_ids.size(), at,
                                              &seq));
        return seq;
    }
    // How well `memory_id` is kept at `now`: its retention, 0-1, read without
    // ticking (see rp_engine_retention).
    double retention(std::uint64_t memory_id, std::int64_t now) const {
        double kept = 0.0;
        detail::check(rp_engine_retention(engine_, memory_id, now, &kept));
        return kept;
    }
    std::string search_entities(std::string_view query, std::size_t k) const {
        return detail::string_out([&](char **out) {
            return rp_engine_search_entities(engine_, detail::text(query), query.size(), k, out);
        });
    }
    std::string always_loaded(std::uint64_t speaker, std::size_t recent_scenes) const {
        return detail::string_out([&](char **out) {
            return rp_engine_always_loaded(engine_, speaker, recent_scenes, out);
        });
    }
    // rp_engine_memory_index_origin: where the memory index came from, as JSON.
    std::string memory_index_origin() const {
        return detail::string_out(
            [&](char **out) { return rp_engine_memory_index_origin(engine_, out); });
    }

    // Prompts and system lines. An empty query means the last line the
    // speaker heard; empty options mean the defaults.
    std::string inspect_prompt(std::uint64_t speaker, std::string_view query = {},
                               std::int64_t now = 0,
                               std::string_view prompt_options_json = {}) const {
        return detail::string_out([&](char **out) {
            return rp_engine_inspect_prompt(engine_, speaker, detail::optional_text(query),
                                            query.size(),
                                            now, detail::optional_text(prompt_options_json),
                                            prompt_options_json.size(), out);
        });
    }
    // An empty audience means every character.
    std::uint64_t inject_system_line(std::string_view line,
                                     std::string_view audience_json = {}) {
        std::uint64_t id = 0;
        detail::check(rp_engine_inject_system_line(engine_, detail::text(line), line.size(),
                                                   detail::optional_text(audience_json),
                                                   audience_json.size(), &id));
        return id;
    }
    std::string system_lines() const {
        return detail::string_out(
            [&](char **out) { return rp_engine_system_lines(engine_, out); });
    }

    // Character cards and lorebooks (docs/cards.md). Bytes in as a
    // std::vector<std::uint8_t> or any std::string_view; bytes out as a
    // std::vector<std::uint8_t>.
    // rp_engine_import_card: a card's JSON, PNG or CHARX as a new entity; the
    // import JSON.
    std::string import_card(const std::vector<std::uint8_t> &card, std::int64_t now) {
        return import_card_bytes(detail::bytes(card), card.size(), now);
    }
    std::string import_card(std::string_view card, std::int64_t now) {
        return import_card_bytes(detail::bytes(card), card.size(), now);
    }
    // rp_engine_export_card: `format` "v2", "v3", "png", "charx" or a file name.
    std::vector<std::uint8_t> export_card(std::uint64_t entity, std::string_view format) const {
        return detail::bytes_out([&](std::uint8_t **out, std::size_t *len) {
            return rp_engine_export_card(engine_, entity, detail::text(format), format.size(),
                                         out, len);
        });
    }
    // rp_engine_card_assets: the files of an entity's card, as JSON.
    std::string card_assets(std::uint64_t entity) const {
        return detail::string_out(
            [&](char **out) { return rp_engine_card_assets(engine_, entity, out); });
    }
    // rp_engine_card_asset: one of those files.
    std::vector<std::uint8_t> card_asset(std::uint64_t entity, std::string_view path) const {
        return detail::bytes_out([&](std::uint8_t **out, std::size_t *len) {
            return rp_engine_card_asset(engine_, entity, detail::text(path), path.size(), out,
                                        len);
        });
    }
    // rp_engine_set_card_image: an entity's image, a PNG.
    void set_card_image(std::uint64_t entity, const std::vector<std::uint8_t> &png,
                        std::int64_t now) {
        detail::check(
            rp_engine_set_card_image(engine_, entity, detail::bytes(png), png.size(), now));
    }
    void set_card_image(std::uint64_t entity, std::string_view png, std::int64_t now) {
        detail::check(
            rp_engine_set_card_image(engine_, entity, detail::bytes(png), png.size(), now));
    }
    // rp_engine_import_lorebook: every character's (owner 0) or one's; its id.
    std::uint64_t import_lorebook(std::string_view json, std::uint64_t owner, std::int64_t now) {
        std::uint64_t id = 0;
        detail::check(rp_engine_import_lorebook(engine_, detail::bytes(json), json.size(), owner,
                                                now, &id));
        return id;
    }
    // rp_engine_export_lorebook: `format` "lorebook_v3" or "world_info".
    std::string export_lorebook(std::uint64_t id, std::string_view format) const {
        return detail::string_out([&](char **out) {
            return rp_engine_export_lorebook(engine_, id, detail::text(format), format.size(),
                                             out);
        });
    }
    // rp_engine_lorebooks: every lorebook, as JSON.
    std::string lorebooks() const {
        return detail::string_out([&](char **out) { return rp_engine_lorebooks(engine_, out); });
    }
    // rp_engine_lore_timers: an entity's sticky and cooldown effects, as JSON.
    std::string lore_timers(std::uint64_t entity) const {
        return detail::string_out(
            [&](char **out) { return rp_engine_lore_timers(engine_, entity, out); });
    }
    // rp_engine_expand_macros: `text` with {{char}}, {{user}}... expanded.
    std::string expand_macros(std::string_view text, std::uint64_t speaker,
                              std::uint64_t user) const {
        return detail::string_out([&](char **out) {
            return rp_engine_expand_macros(engine_, detail::text(text), text.size(), speaker,
                                           user, out);
        });
    }

    // Scoped events and threads. Every change takes the host clock `now`
    // (ms), which may not be before the world's clock.
    // Plans an event from its plan JSON; its id.
    std::uint64_t plan_event(std::string_view plan_json, std::int64_t now) {
        std::uint64_t id = 0;
        detail::check(rp_engine_plan_event(engine_, detail::text(plan_json), plan_json.size(),
                                           now, &id));
        return id;
    }
    void start_event(std::uint64_t event_id, std::int64_t now) {
        detail::check(rp_engine_start_event(engine_, event_id, now));
    }
    // An empty promotion promotes nothing.
    void complete_event(std::uint64_t event_id, std::int64_t now,
                        std::string_view promotion_json = {}) {
        detail::check(rp_engine_complete_event(engine_, event_id,
                                               detail::optional_text(promotion_json),
                                               promotion_json.size(), now));
    }
    void cancel_event(std::uint64_t event_id, std::int64_t now) {
        detail::check(rp_engine_cancel_event(engine_, event_id, now));
    }
    void expire_event(std::uint64_t event_id, std::int64_t now) {
        detail::check(rp_engine_expire_event(engine_, event_id, now));
    }
    // What ran: {"started": [...], "expired": [...], "held": [[id, why]]}.
    std::string run_due(std::int64_t now) {
        return detail::string_out([&](char **out) { return rp_engine_run_due(engine_, now, out); });
    }
    std::string scoped_events() const {
        return detail::string_out(
            [&](char **out) { return rp_engine_scoped_events(engine_, out); });
    }
    std::string scoped_event(std::uint64_t event_id) const {
        return detail::string_out(
            [&](char **out) { return rp_engine_scoped_event(engine_, event_id, out); });
    }
    // Opens a thread in the prompts of `participants`; its id.
    std::uint64_t open_thread(std::string_view text,
                              const std::vector<std::uint64_t> &participants, std::int64_t now) {
        std::uint64_t id = 0;
        detail::check(rp_engine_open_thread(engine_, detail::text(text), text.size(),
                                            participants.data(), participants.size(), now, &id));
        return id;
    }
    void resolve_thread(std::uint64_t thread_id, std::int64_t now) {
        detail::check(rp_engine_resolve_thread(engine_, thread_id, now));
    }
    void drop_thread(std::uint64_t thread_id, std::int64_t now) {
        detail::check(rp_engine_drop_thread(engine_, thread_id, now));
    }
    std::string threads() const {
        return detail::string_out([&](char **out) { return rp_engine_threads(engine_, out); });
    }

    // Scenes. Empty options mean the defaults.
    // Opens a scene in a container; its id.
    std::uint64_t open_scene(std::uint64_t container, std::int64_t now) {
        std::uint64_t id = 0;
        detail::check(rp_engine_open_scene(engine_, container, now, &id));
        return id;
    }
    std::string scenes() const {
        return detail::string_out([&](char **out) { return rp_engine_scenes(engine_, out); });
    }
    std::string scene(std::uint64_t scene_id) const {
        return detail::string_out(
            [&](char **out) { return rp_engine_scene(engine_, scene_id, out); });
    }
    // The current scene of a container (entity 0), or of an entity's place.
    std::uint64_t current_scene(std::uint64_t container, std::uint64_t entity = 0) const {
        std::uint64_t id = 0;
        detail::check(rp_engine_current_scene(engine_, container, entity, &id));
        return id;
    }
    std::string due_scenes(std::int64_t now, std::string_view options_json = {}) const {
        return detail::string_out([&](char **out) {
            return rp_engine_due_scenes(engine_, now, detail::optional_text(options_json),
                                        options_json.size(), out);
        });
    }

    // Jobs (nothing committed until Job::finish or run_job).
    Job begin_scene_close(std::uint64_t scene_id, std::int64_t now,
                          std::string_view options_json = {}) {
        rp_job *job = nullptr;
        detail::check(rp_engine_begin_scene_close(engine_, scene_id, now,
                                                  detail::optional_text(options_json),
                                                  options_json.size(), &job));
        return Job(engine_, job);
    }
    Job begin_close_current_scene(std::uint64_t container, std::int64_t now,
                                  std::string_view options_json = {}) {
        rp_job *job = nullptr;
        detail::check(rp_engine_begin_close_current_scene(engine_, container, now,
                                                          detail::optional_text(options_json),
                                                          options_json.size(), &job));
        return Job(engine_, job);
    }
    // `skip_json`: {"kind": "jump", "to": ms} or {"kind": "elision", "entity": id}.
    Job begin_time_skip(std::string_view skip_json, std::string_view options_json = {}) {
        rp_job *job = nullptr;
        detail::check(rp_engine_begin_time_skip(engine_, detail::text(skip_json), skip_json.size(),
                                                detail::optional_text(options_json),
                                                options_json.size(), &job));
        return Job(engine_, job);
    }
    Job begin_query(std::string_view input_json) {
        rp_job *job = nullptr;
        detail::check(
            rp_engine_begin_query(engine_, detail::text(input_json), input_json.size(), &job));
        return Job(engine_, job);
    }
    // A tick at `now` (rp_engine_begin_tick, docs/drives.md): its arithmetic is
    // committed at once, its initiations asked for through the job.
    Job begin_tick(std::int64_t now, std::string_view options_json = {}) {
        rp_job *job = nullptr;
        detail::check(rp_engine_begin_tick(engine_, now, detail::optional_text(options_json),
                                           options_json.size(), &job));
        return Job(engine_, job);
    }

    // Drives (docs/drives.md). A character's drives at `now`, as JSON.
    std::string drives(std::uint64_t entity, std::int64_t now) const {
        return detail::string_out(
            [&](char **out) { return rp_engine_drives(engine_, entity, now, out); });
    }
    // Its candidate initiations at `now`, each with its "explanation".
    std::string initiation_candidates(std::uint64_t entity, std::int64_t now) const {
        return detail::string_out([&](char **out) {
            return rp_engine_initiation_candidates(engine_, entity, now, out);
        });
    }
    // The next moment a tick does something, as JSON (`null`: nothing will).
    std::string next_tick(std::int64_t now) const {
        return detail::string_out(
            [&](char **out) { return rp_engine_next_tick(engine_, now, out); });
    }
    // rp_engine_next_tick_at: when a tick next does something; none: never.
    std::optional<std::int64_t> next_tick_at(std::int64_t now) const {
        std::int64_t at = 0;
        bool due = false;
        detail::check(rp_engine_next_tick_at(engine_, now, &at, &due));
        return due ? std::optional<std::int64_t>(at) : std::nullopt;
    }
    // Delivers a stimulus; returns its id.
    std::uint64_t notify(std::uint64_t entity, std::string_view kind, std::string_view priority,
                         std::string_view payload, std::int64_t now) {
        std::uint64_t id = 0;
        detail::check(rp_engine_notify(engine_, entity, detail::text(kind), kind.size(),
                                       detail::text(priority), priority.size(),
                                       detail::text(payload), payload.size(), now, &id));
        return id;
    }
    // rp_engine_report_availability: 1 present, 0.3 idle, 0 away.
    void report_availability(std::uint64_t entity, double availability, std::int64_t now) {
        detail::check(rp_engine_report_availability(engine_, entity, availability, now));
    }
    // The world's drive settings (entity 0) or an entity's.
    void configure_drives(std::uint64_t entity, std::string_view config_json) {
        detail::check(rp_engine_configure_drives(engine_, entity, detail::text(config_json),
                                                 config_json.size()));
    }
    void set_personality(std::uint64_t entity, std::string_view personality_json) {
        detail::check(rp_engine_set_personality(engine_, entity, detail::text(personality_json),
                                                personality_json.size()));
    }

    // Beliefs about people (docs/beliefs.md). What `observer` believes of each
    // person at `now`, as JSON (see rp_engine_beliefs).
    std::string beliefs(std::uint64_t observer, std::int64_t now) const {
        return detail::string_out(
            [&](char **out) { return rp_engine_beliefs(engine_, observer, now, out); });
    }
    // Records a belief given as JSON (see rp_engine_observe_belief).
    void observe_belief(std::string_view belief_json, std::int64_t now) {
        detail::check(rp_engine_observe_belief(engine_, detail::text(belief_json),
                                               belief_json.size(), now));
    }
    // A person who is only talked about (by: 0 for the host); returns its id.
    std::uint64_t mention_person(std::string_view name, std::string_view facts,
                                 std::uint64_t by, std::int64_t now) {
        std::uint64_t id = 0;
        detail::check(rp_engine_mention_person(engine_, detail::text(name), name.size(),
                                               detail::optional_text(facts), facts.size(), by,
                                               now, &id));
        return id;
    }

    // Rules (docs/rules.md). Gives `entity` a rule given as JSON; returns its
    // id (see rp_engine_add_rule).
    std::uint64_t add_rule(std::uint64_t entity, std::string_view rule_json, std::int64_t now) {
        std::uint64_t id = 0;
        detail::check(rp_engine_add_rule(engine_, entity, detail::text(rule_json),
                                         rule_json.size(), now, &id));
        return id;
    }
    // Takes rule `rule` away (see rp_engine_remove_rule).
    void remove_rule(std::uint64_t rule, std::int64_t now) {
        detail::check(rp_engine_remove_rule(engine_, rule, now));
    }
    // The rules `entity` holds with their weights at `now`, as JSON (see
    // rp_engine_rules).
    std::string rules(std::uint64_t entity, std::int64_t now) const {
        return detail::string_out(
            [&](char **out) { return rp_engine_rules(engine_, entity, now, out); });
    }

    // Requirements (docs/requirements.md). rp_engine_add_requirement: the
    // requirement as the world keeps it, as JSON.
    std::string add_requirement(std::string_view requirement_json) {
        return detail::string_out([&](char **out) {
            return rp_engine_add_requirement(engine_, detail::text(requirement_json),
                                             requirement_json.size(), out);
        });
    }
    // rp_engine_remove_requirement.
    void remove_requirement(std::string_view id) {
        detail::check(rp_engine_remove_requirement(engine_, detail::text(id), id.size()));
    }
    // rp_engine_requirements: every requirement, pending or not, as JSON.
    std::string requirements() const {
        return detail::string_out(
            [&](char **out) { return rp_engine_requirements(engine_, out); });
    }
    // rp_engine_check_action: throws rp::Error (RP_RESULT_REQUIREMENT_UNMET)
    // while a requirement guarding host action `name` of `subject` (0: no
    // one in particular) is pending.
    void check_action(std::string_view name, std::uint64_t subject = 0) const {
        detail::check(rp_engine_check_action(engine_, detail::text(name), name.size(), subject));
    }

    // The callback form (rp_engine_run_job): runs `job` to its end through
    // `generate`, callable as std::string(std::string_view request_json,
    // rp::TokenSink &sink) (what it streams goes nowhere), and returns the
    // outcome JSON. An exception from generate stops the job as a failed
    // generation would (see rp_engine_run_job) and is thrown again.
    template <class Generate>
    std::string run_job(Job &job, Generate &&generate) {
        using State = detail::RunState<std::remove_reference_t<Generate>, detail::NoTokens>;
        detail::NoTokens no_tokens;
        State state(generate, &no_tokens);
        char *outcome = nullptr;
        const rp_result result = rp_engine_run_job(
            engine_, job.get(), &detail::generate_trampoline<State>, &state, &outcome);
        if (result != RP_RESULT_OK && state.error) {
            std::rethrow_exception(state.error);
        }
        detail::check(result);
        return detail::take(outcome);
    }

    // rp_engine_advance: plays host time to `until` through `generate`, as
    // run_job runs a job (an exception from it stops the call and is thrown
    // again; the ticks before stay committed); the ticks' outcomes, as JSON.
    template <class Generate>
    std::string advance(std::int64_t until, std::string_view options_json, Generate &&generate) {
        using State = detail::RunState<std::remove_reference_t<Generate>, detail::NoTokens>;
        detail::NoTokens no_tokens;
        State state(generate, &no_tokens);
        char *outcomes = nullptr;
        const rp_result result = rp_engine_advance(
            engine_, until, detail::optional_text(options_json), options_json.size(),
            &detail::generate_trampoline<State>, &state, &outcomes);
        if (result != RP_RESULT_OK && state.error) {
            std::rethrow_exception(state.error);
        }
        detail::check(result);
        return detail::take(outcomes);
    }

    // World queries and the relationship graph.
    std::string query(std::uint64_t query_id) const {
        return detail::string_out(
            [&](char **out) { return rp_engine_query(engine_, query_id, out); });
    }
    std::string recent_queries(std::size_t limit) const {
        return detail::string_out(
            [&](char **out) { return rp_engine_recent_queries(engine_, limit, out); });
    }
    // A tagged request: {"op": "relationships_of" | "connected" | "path" |
    // "shared_connections" | "stats", ...} (see rp_engine_graph).
    std::string graph(std::string_view request_json) const {
        return detail::string_out([&](char **out) {
            return rp_engine_graph(engine_, detail::text(request_json), request_json.size(), out);
        });
    }

    // The turn, poll form: begins it (the input is committed at once).
    // Empty options mean the defaults.
    Turn begin_turn(std::string_view input_json, std::string_view options_json = {}) {
        rp_turn *turn = nullptr;
        detail::check(rp_turn_begin(engine_, detail::text(input_json), input_json.size(),
                                    detail::optional_text(options_json), options_json.size(),
                                    &turn));
        return Turn(engine_, turn);
    }

    // The turn, callback form (rp_engine_run_turn): runs it through
    // `generate` and returns the outcome JSON.
    //
    // - generate: callable as std::string(std::string_view request_json,
    //   rp::TokenSink &sink), returning the result JSON; it may stream with
    //   sink.emit(text).
    // - on_token: callable as void(std::uint64_t speaker, std::string_view
    //   text), given what generate streams.
    //
    // Both run on the calling thread before run_turn returns, and must not
    // use this engine. An exception from either abandons the turn (its
    // input stays committed) and run_turn throws it again; rp never sees it.
    template <class Generate, class OnToken>
    std::string run_turn(std::string_view input_json, std::string_view options_json,
                         Generate &&generate, OnToken &&on_token) {
        using State = detail::RunState<std::remove_reference_t<Generate>,
                                       std::remove_reference_t<OnToken>>;
        State state(generate, &on_token);
        char *outcome = nullptr;
        const rp_result result = rp_engine_run_turn(
            engine_, detail::text(input_json), input_json.size(),
            detail::optional_text(options_json), options_json.size(),
            &detail::generate_trampoline<State>, &detail::token_trampoline<State>, &state,
            &outcome);
        if (result != RP_RESULT_OK && state.error) {
            std::rethrow_exception(state.error);
        }
        detail::check(result);
        return detail::take(outcome);
    }

    // run_turn without a token callback: what generate streams is dropped.
    template <class Generate>
    std::string run_turn(std::string_view input_json, std::string_view options_json,
                         Generate &&generate) {
        return run_turn(input_json, options_json, std::forward<Generate>(generate),
                        detail::NoTokens{});
    }

    // run_turn with host actions (rp_engine_run_turn_with_actions): `act`,
    // callable as rp::ActAnswer(std::string_view call_json), carries out
    // each action reported, on the calling thread. An exception from act
    // refuses that action and every later one; the turn goes on, and
    // run_turn_with_actions then throws it again.
    template <class Generate, class OnToken, class Act>
    std::string run_turn_with_actions(std::string_view input_json, std::string_view options_json,
                                      Generate &&generate, OnToken &&on_token, Act &&act) {
        using State =
            detail::ActState<std::remove_reference_t<Generate>, std::remove_reference_t<OnToken>,
                             std::remove_reference_t<Act>>;
        State state(generate, &on_token, &act);
        char *outcome = nullptr;
        const rp_result result = rp_engine_run_turn_with_actions(
            engine_, detail::text(input_json), input_json.size(),
            detail::optional_text(options_json), options_json.size(),
            &detail::generate_trampoline<State>, &detail::token_trampoline<State>,
            &detail::act_trampoline<State>, &state, &outcome);
        std::string taken = detail::take(outcome);
        if (state.error) {
            std::rethrow_exception(state.error);
        }
        detail::check(result);
        return taken;
    }

    // run_turn_with_actions without a token callback.
    template <class Generate, class Act>
    std::string run_turn_with_actions(std::string_view input_json, std::string_view options_json,
                                      Generate &&generate, Act &&act) {
        return run_turn_with_actions(input_json, options_json, std::forward<Generate>(generate),
                                     detail::NoTokens{}, std::forward<Act>(act));
    }

    // Edits and swipes (docs/edits.md). Empty options mean the defaults.
    // rp_engine_preview_edit: what editing line `line` to `text` (empty:
    // deleting it) would do, as JSON; changes nothing.
    std::string preview_edit(std::uint64_t line, std::string_view text = {},
                             std::string_view options_json = {}) {
        return detail::string_out([&](char **out) {
            return rp_engine_preview_edit(engine_, line, detail::optional_text(text),
                                          text.size(), detail::optional_text(options_json),
                                          options_json.size(), out);
        });
    }
    // rp_engine_edit_line: the outcome JSON.
    std::string edit_line(std::uint64_t line, std::string_view text,
                          std::string_view options_json = {}) {
        return detail::string_out([&](char **out) {
            return rp_engine_edit_line(engine_, line, detail::text(text), text.size(),
                                       detail::optional_text(options_json), options_json.size(),
                                       out);
        });
    }
    // rp_engine_delete_line: the outcome JSON.
    std::string delete_line(std::uint64_t line, std::string_view options_json = {}) {
        return detail::string_out([&](char **out) {
            return rp_engine_delete_line(engine_, line, detail::optional_text(options_json),
                                         options_json.size(), out);
        });
    }
    // rp_engine_swipe_request: the request asking for the last reply (line
    // 0) again, as JSON.
    std::string swipe_request(std::uint64_t line = 0, std::string_view options_json = {}) {
        return detail::string_out([&](char **out) {
            return rp_engine_swipe_request(engine_, line, detail::optional_text(options_json),
                                           options_json.size(), out);
        });
    }
    // rp_engine_add_alternative: the model's answer to a swipe; its index.
    std::uint64_t add_alternative(std::uint64_t line, std::string_view result_json) {
        std::uint64_t index = 0;
        detail::check(rp_engine_add_alternative(engine_, line, detail::text(result_json),
                                                result_json.size(), &index));
        return index;
    }
    // rp_engine_alternatives: a line's alternatives, as JSON (null: none).
    std::string alternatives(std::uint64_t line) const {
        return detail::string_out(
            [&](char **out) { return rp_engine_alternatives(engine_, line, out); });
    }
    // rp_engine_choose: makes alternative `n` the line, its state-update pass
    // asked of `generate` as run_job asks (an exception from it is thrown
    // again; the choice stands); the pass's outcome JSON.
    template <class Generate>
    std::string choose(std::uint64_t line, std::uint64_t n, std::string_view options_json,
                       Generate &&generate) {
        using State = detail::RunState<std::remove_reference_t<Generate>, detail::NoTokens>;
        detail::NoTokens no_tokens;
        State state(generate, &no_tokens);
        char *outcome = nullptr;
        const rp_result result = rp_engine_choose(
            engine_, line, n, detail::optional_text(options_json), options_json.size(),
            &detail::generate_trampoline<State>, &state, &outcome);
        if (result != RP_RESULT_OK && state.error) {
            std::rethrow_exception(state.error);
        }
        detail::check(result);
        return detail::take(outcome);
    }

private:
    std::string import_card_bytes(const std::uint8_t *card, std::size_t len, std::int64_t now) {
        return detail::string_out(
            [&](char **out) { return rp_engine_import_card(engine_, card, len, now, out); });
    }

    void reset() noexcept {
        if (engine_ != nullptr) {
            rp_engine_free(engine_);
            engine_ = nullptr;
        }
    }

    rp_engine *engine_;
};

// A compiled condition of the fact language (rp_condition), owned.
class Condition {
public:
    static Condition compile(std::string_view source) {
        rp_condition *condition = nullptr;
        detail::check(rp_condition_compile(detail::text(source), source.size(), &condition));
        return Condition(condition);
    }

    explicit Condition(rp_condition *condition) noexcept : condition_(condition) {}
    Condition(const Condition &) = delete;
    Condition &operator=(const Condition &) = delete;
    Condition(Condition &&other) noexcept : condition_(std::exchange(other.condition_, nullptr)) {}
    Condition &operator=(Condition &&other) noexcept {
        if (this != &other) {
            reset();
            condition_ = std::exchange(other.condition_, nullptr);
        }
        return *this;
    }
    ~Condition() { reset(); }

    // Whether it holds in the context (rp_condition_test).
    bool test(std::string_view context_json, std::uint64_t seed = 0) const {
        bool holds = false;
        detail::check(rp_condition_test(condition_, detail::text(context_json),
                                        context_json.size(), seed, &holds, nullptr));
        return holds;
    }

    rp_condition *get() const noexcept { return condition_; }

private:
    void reset() noexcept {
        if (condition_ != nullptr) {
            rp_condition_free(condition_);
            condition_ = nullptr;
        }
    }

    rp_condition *condition_;
};

}  // namespace rp

#endif  // RP_HPP
