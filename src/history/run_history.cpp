// RunHistory (sqlock/run_history.hpp), the run history and once-per windows
// of a Locker's lock table:
// validation, the window arithmetic, the decision and the statements' use;
// the SQL is each backend's StatementSet (statement_set.hpp).
#include "sqlock/run_history.hpp"

#include <unistd.h>

#include <cstdio>
#include <tuple>
#include <utility>

#include "base/owner.hpp"
#include "base/utc_time.hpp"
#include "base/validate.hpp"
#include "contract/records.hpp"
#include "contract/table_family.hpp"
#include "held/held_claim.hpp"
#include "sqlock/lock.hpp"
#include "state/access.hpp"
#include "state/batch_pacing.hpp"
#include "state/side_table.hpp"

namespace sqlock {

const char* to_string(run_outcome outcome) noexcept {
    switch (outcome) {
        case run_outcome::running:
            return "running";
        case run_outcome::succeeded:
            return "succeeded";
        case run_outcome::failed:
            return "failed";
        case run_outcome::killed:
            return "killed";
        case run_outcome::lost:
            return "lost";
        case run_outcome::timed_out:
            return "timed_out";
        case run_outcome::after_failed:
            return "after_failed";
        case run_outcome::after_pending:
            return "after_pending";
    }
    return "lost";
}

const char* to_string(predecessor_state state) noexcept {
    switch (state) {
        case predecessor_state::succeeded:
            return "succeeded";
        case predecessor_state::running:
            return "running";
        case predecessor_state::failed:
            return "failed";
        case predecessor_state::missing:
            return "missing";
    }
    return "missing";
}

std::optional<run_outcome> parse_run_outcome(const std::string& text) noexcept {
    for (run_outcome o : all_run_outcomes)
        if (text == to_string(o)) return o;
    return std::nullopt;
}

namespace detail {

// Milliseconds since the epoch as the databases write times: UTC
// "YYYY-MM-DD HH:MM:SS.mmm". Arithmetic on a value the database gave, never
// the client's clock. Written by hand (days to a civil date: H. Hinnant's
// algorithm) rather than with gmtime_r and snprintf: it is on the acquire
// path twice per PostgreSQL lock, and gmtime_r takes glibc's time zone lock.
std::string utc_text(std::int64_t ms) {
    std::int64_t secs = ms / 1000, rest = ms % 1000;
    if (rest < 0) {
        rest += 1000;
        secs -= 1;
    }
    std::int64_t days = secs / 86400, day_secs = secs % 86400;
    if (day_secs < 0) {
        day_secs += 86400;
        days -= 1;
    }
    const std::int64_t z = days + 719468;
    const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const std::int64_t doe = z - era * 146097;
    const std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const std::int64_t mp = (5 * doy + 2) / 153;
    const std::int64_t day = doy - (153 * mp + 2) / 5 + 1;
    const std::int64_t month = mp < 10 ? mp + 3 : mp - 9;
    const std::int64_t year = yoe + era * 400 + (month <= 2 ? 1 : 0);
    if (year < 0 || year > 9999) {  // not a time sqlock writes: the slow, general way
        char buf[160];
        std::snprintf(buf, sizeof buf, "%lld-%02lld-%02lld %02lld:%02lld:%02lld.%03lld",
                      static_cast<long long>(year), static_cast<long long>(month),
                      static_cast<long long>(day), static_cast<long long>(day_secs / 3600),
                      static_cast<long long>(day_secs / 60 % 60),
                      static_cast<long long>(day_secs % 60), static_cast<long long>(rest));
        return buf;
    }
    char text[] = "0000-00-00 00:00:00.000";
    auto put = [&](int at, std::int64_t value, int digits) {
        for (int i = digits - 1; i >= 0; --i, value /= 10)
            text[at + i] = static_cast<char>('0' + value % 10);
    };
    put(0, year, 4);
    put(5, month, 2);
    put(8, day, 2);
    put(11, day_secs / 3600, 2);
    put(14, day_secs / 60 % 60, 2);
    put(17, day_secs % 60, 2);
    put(20, rest, 3);
    return std::string(text, sizeof text - 1);
}

std::int64_t window_start_ms(std::int64_t now_ms, std::int64_t length_ms, std::int64_t offset_ms) {
    std::int64_t shifted = now_ms - offset_ms;
    std::int64_t index = shifted / length_ms;
    if (shifted % length_ms < 0) --index;  // floor, for times before the epoch
    return index * length_ms + offset_ms;
}

}  // namespace detail

RunHistory::RunHistory(const Locker& locker) : state_(detail::Access::session(locker)) {}

namespace {

// The run history needs its table, which only init() creates on a server.
// `retry_on_broken` as for ConnectionPool::with(): off for a statement that
// must not run twice.
template <typename F>
auto with_history(detail::LockerState& s, F&& f, bool retry_on_broken = true)
    -> decltype(f(std::declval<detail::Connection&>())) {
    return detail::with_side_table(s, detail::SideTable::runs, std::forward<F>(f), retry_on_broken);
}

// Inserting a run is not idempotent: after a connection broke, the insert
// may have committed with only its answer lost, and a retry would record a
// second run, left "running" until it reads lost. The error (errc::connection)
// goes to the caller, which carries on without a run id as for any other.
constexpr bool once = false;

// Milliseconds since the Unix epoch by the database's clock.
std::int64_t now_millis(detail::Connection& c) {
    return detail::query_int64(c, detail::Query::now_millis, {});
}

// The runs `key` reads with `params`.
std::vector<RunRecord> query_runs(detail::Connection& c, detail::Query key,
                                  const std::vector<detail::Value>& params) {
    return detail::read_runs(c.query(key, params));
}

// Runs of `name` (all if empty) started within `since` of now (all if
// zero), newest first, at most `limit`.
std::vector<RunRecord> history_of(detail::Connection& c, const std::string& name, duration since,
                                  std::size_t limit) {
    using detail::Value;
    // NULL: all of them, whatever their start time says (another program's
    // row may have one no arithmetic on the clock reaches).
    const Value back = since > duration::zero() ? Value::millis(since) : Value::null();
    const Value n = Value::integer(static_cast<std::int64_t>(limit));
    if (name.empty()) return query_runs(c, detail::Query::history_all, {back, n});
    return query_runs(c, detail::Query::history_name, {back, n, Value::text(name)});
}

// The parameters of Query::start_run for `name` under lock row `fencing_id`.
std::vector<detail::Value> run_start_params(const std::string& name, std::int64_t fencing_id,
                                            const RunStart& info) {
    using detail::Value;
    return {
        Value::text(name),
        info.window_start_ms ? Value::text(detail::utc_text(*info.window_start_ms)) : Value::null(),
        Value::text(info.host),
        Value::integer(info.pid),
        Value::text(info.user),
        Value::text(info.program),
        Value::integer(fencing_id)};
}

// The claim `lock` holds, which must come from this Locker (same table).
const detail::HeldClaim& state_of(const std::shared_ptr<detail::LockerState>& locker,
                                  const Lock& handle) {
    const std::shared_ptr<detail::HeldClaim>& lock = detail::Access::held(handle);
    if (!lock) throw error(errc::invalid_argument, "the Lock was moved from: it holds nothing");
    if (lock->locker != locker)
        throw error(errc::invalid_argument,
                    "lock '" + detail::printable(lock->row()) +
                        "' was taken through another Locker; the run history is kept beside "
                        "the lock table it was taken in");
    return *lock;
}

}  // namespace

OncePerWindow RunHistory::once_per_window(const Lock& lock, duration length, duration offset,
                                          bool any_outcome) {
    state_of(state_, lock);  // a moved-from Lock or another Locker's: said first
    detail::validate_lease(length, "once-per window");
    detail::validate_non_negative(offset, "once-per offset");
    if (offset >= length)
        throw error(errc::invalid_argument, "the once-per offset (" + format_duration(offset) +
                                                ") must be shorter than the window (" +
                                                format_duration(length) + ")");
    return once_per_window(
        lock,
        [&](std::int64_t now) {
            const std::int64_t start = detail::window_start_ms(now, length.count(), offset.count());
            return std::make_pair(start, start + length.count());
        },
        any_outcome);
}

OncePerWindow RunHistory::once_per_window(const Lock& lock, const window_rule& rule,
                                          bool any_outcome) {
    const detail::HeldClaim& held = state_of(state_, lock);
    if (!lock.active())
        throw error(errc::invalid_argument,
                    "lock '" + detail::printable(held.row()) +
                        "' is released: decide on a once-per window while holding its lock");
    detail::ensure_initialized(*state_);
    OncePerWindow w;
    std::vector<RunRecord> runs;
    with_history(*state_, [&](detail::Connection& c) {
        const std::int64_t now = now_millis(c);
        std::tie(w.start_ms, w.end_ms) = rule(now);
        // The reaper keeps a window's runs for 366 days (prunable_runs).
        constexpr std::int64_t longest = 366LL * 24 * 3600 * 1000;
        if (!(w.start_ms <= now && now < w.end_ms) || w.end_ms - w.start_ms > longest)
            throw error(errc::invalid_argument,
                        "the once-per window from " + detail::utc_text(w.start_ms) + " to " +
                            detail::utc_text(w.end_ms) + " does not hold the database's now, " +
                            detail::utc_text(now) + ", or is longer than 366 days");
        w.start = detail::utc_text(w.start_ms);
        w.end = detail::utc_text(w.end_ms);
        runs = query_runs(c, detail::Query::window_runs,
                          {detail::Value::text(held.name()), detail::Value::text(w.start)});
        return 0;
    });
    for (auto& run : runs) {
        // A skip ran nothing: it never does a window.
        const bool counts =
            run.outcome == run_outcome::succeeded ||
            (any_outcome && run.outcome != run_outcome::running && !is_skip(run.outcome));
        if (counts) {
            w.done = true;
            w.done_by = std::move(run);
            break;
        }
    }
    return w;
}

namespace {

// Fills in the empty fields of `info` from this process and cuts the rest
// to what the history's columns hold; throws for a released lock.
RunStart complete_run_start(const detail::HeldClaim& held, const Lock& lock, RunStart info) {
    if (!lock.active())
        throw error(errc::invalid_argument, "lock '" + detail::printable(held.row()) +
                                                "' is released: start a run while holding it");
    if (info.host.empty()) info.host = detail::this_host();
    if (info.pid == 0) info.pid = getpid();
    if (info.user.empty()) info.user = detail::this_user();
    if (info.program.empty()) info.program = detail::this_program();
    for (auto* field : {&info.host, &info.user})
        if (field->size() > 255) *field = detail::printable(*field, 200);
    if (info.program.size() > 1024) info.program = detail::printable(info.program, 900);
    for (auto* field : {&info.host, &info.user, &info.program})
        if (!detail::is_valid_utf8(*field)) *field = detail::printable(*field, 200);
    return info;
}

}  // namespace

std::int64_t RunHistory::start_run(const Lock& lock, RunStart info) {
    const detail::HeldClaim& held = state_of(state_, lock);
    info = complete_run_start(held, lock, std::move(info));
    const auto params = run_start_params(held.name(), held.ids.front(), info);
    detail::ensure_initialized(*state_);
    return with_history(
        *state_,
        [&](detail::Connection& c) {
            return detail::query_int64(c, detail::Query::start_run, params);
        },
        once);
}

RunStartOutcome RunHistory::start_run_unless_paused(const Lock& lock, RunStart info) {
    const detail::HeldClaim& held = state_of(state_, lock);
    info = complete_run_start(held, lock, std::move(info));
    const auto params = run_start_params(held.name(), held.ids.front(), info);
    detail::ensure_initialized(*state_);
    return with_history(
        *state_,
        [&](detail::Connection& c) {
            RunStartOutcome out;
            // No pauses table: a deployment from before pauses, where nothing
            // is paused (as Pauses::find() says).
            if (!c.has(detail::SideTable::pauses)) {
                out.run_id = detail::query_int64(c, detail::Query::start_run, params);
                return out;
            }
            const auto key = detail::Query::start_run_unless_paused;
            return detail::read_run_start(detail::first_row(c.query(key, params), key, params),
                                          params);
        },
        once);
}

run_outcome RunHistory::finish_run(const Lock& lock, std::int64_t run_id, const RunEnd& end) {
    const detail::HeldClaim& held = state_of(state_, lock);
    if (end.outcome == run_outcome::running || is_skip(end.outcome))
        throw error(errc::invalid_argument,
                    std::string("finish_run needs how the run ended, not '") +
                        to_string(end.outcome) + "'");
    using detail::Value;
    const std::vector<Value> params = {
        Value::integer(run_id),
        Value::integer(held.ids.front()),
        Value::text(held.locked_by),
        end.exit_status ? Value::integer(*end.exit_status) : Value::null(),
        end.signal ? Value::integer(*end.signal) : Value::null(),
        Value::text(to_string(end.outcome))};
    const std::vector<Value> ours(params.begin(), params.begin() + 3);
    auto recorded = with_history(*state_, [&](detail::Connection& c) -> std::optional<run_outcome> {
        detail::Rows r = c.query(detail::Query::finish_run, params);
        // No row: the run was no longer marked running. Its end may be this
        // call's own, sent again after its answer was lost (the link or a
        // node went away mid-statement), or an earlier call's: read back
        // while the lock row is still ours, never from another holder's row
        // under the same id.
        if (r.rows.empty()) r = c.query(detail::Query::finished_run, ours);
        if (r.rows.empty()) return std::nullopt;
        return parse_run_outcome(detail::as_text(r.rows[0].at(0)));
    });
    return recorded.value_or(run_outcome::lost);
}

std::int64_t RunHistory::record_skip(const Lock& lock, run_outcome outcome, RunStart info) {
    const detail::HeldClaim& held = state_of(state_, lock);
    if (!is_skip(outcome))
        throw error(errc::invalid_argument,
                    std::string("record_skip needs a skip, not '") + to_string(outcome) + "'");
    info = complete_run_start(held, lock, std::move(info));
    auto params = run_start_params(held.name(), held.ids.front(), info);
    params.push_back(detail::Value::text(to_string(outcome)));
    detail::ensure_initialized(*state_);
    return with_history(
        *state_,
        [&](detail::Connection& c) {
            return detail::query_int64(c, detail::Query::skip_run, params);
        },
        once);
}

Predecessors RunHistory::predecessors(const std::vector<std::string>& names, duration within) {
    detail::validate_lease(within, "predecessors' window");
    return predecessors(names, [&](std::int64_t now) { return now - within.count(); });
}

Predecessors RunHistory::predecessors(const std::vector<std::string>& names,
                                      const since_rule& rule) {
    if (names.empty())
        throw error(errc::invalid_argument, "predecessors needs at least one job name");
    for (const std::string& name : names) detail::validate_lock_name(name);
    detail::ensure_initialized(*state_);
    Predecessors out;
    with_history(*state_, [&](detail::Connection& c) {
        out.jobs.clear();
        out.now_ms = now_millis(c);
        out.since_ms = rule(out.now_ms);
        for (const std::string& name : names) {
            Predecessor job;
            job.name = name;
            auto newest = query_runs(c, detail::Query::recent_runs,
                                     {detail::Value::integer(1), detail::Value::text(name)});
            if (!newest.empty()) job.run = std::move(newest.front());
            out.jobs.push_back(std::move(job));
        }
        return 0;
    });
    out.since = detail::utc_text(out.since_ms);
    for (Predecessor& job : out.jobs) {
        if (!job.run) continue;  // missing: never ran
        const RunRecord& run = *job.run;
        if (run.outcome == run_outcome::running) {
            job.state = predecessor_state::running;
        } else if (run.outcome != run_outcome::succeeded) {
            job.state = predecessor_state::failed;
        } else {
            const std::string& at = run.ended.value_or(run.started);
            const auto ended_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                      detail::parse_utc(at).time_since_epoch())
                                      .count();
            job.state = ended_ms >= out.since_ms ? predecessor_state::succeeded
                                                 : predecessor_state::missing;
        }
    }
    return out;
}

std::vector<RunRecord> RunHistory::runs(const HistoryQuery& query) {
    if (!query.name.empty()) detail::validate_lock_name(query.name);
    detail::validate_non_negative(query.since, "history since");
    if (query.limit == 0 || query.limit > 1000000)
        throw error(errc::invalid_argument, "history limit must be between 1 and 1000000");
    detail::ensure_initialized(*state_);
    return with_history(*state_, [&](detail::Connection& c) {
        return history_of(c, query.name, query.since, query.limit);
    });
}

std::vector<RunCount> RunHistory::run_counts() {
    detail::ensure_initialized(*state_);
    return with_history(*state_, [](detail::Connection& c) {
        const detail::Rows r = c.query(detail::Query::run_counts, {});
        std::vector<RunCount> counts;
        for (const auto& row : r.rows) {
            auto outcome = parse_run_outcome(detail::as_text(row.at(1)));
            if (!outcome) continue;  // a value another program wrote
            counts.push_back({detail::as_text(row.at(0)), *outcome, detail::as_int64(row.at(2))});
        }
        return counts;
    });
}

JobStatus RunHistory::job_status(const std::string& name) {
    detail::validate_lock_name(name);
    detail::ensure_initialized(*state_);
    JobStatus status;
    status.name = name;
    std::vector<RunRecord> recent;
    with_history(*state_, [&](detail::Connection& c) {
        status.now_ms = now_millis(c);
        auto success = query_runs(c, detail::Query::last_success, {detail::Value::text(name)});
        if (!success.empty()) status.last_success = std::move(success.front());
        recent =
            query_runs(c, detail::Query::recent_runs,
                       {detail::Value::integer(static_cast<std::int64_t>(job_status_recent_runs)),
                        detail::Value::text(name)});
        auto skip = query_runs(c, detail::Query::last_skip, {detail::Value::text(name)});
        if (!skip.empty() && (recent.empty() || skip.front().id > recent.front().id))
            status.skipped = std::move(skip.front());
        return 0;
    });
    status.now = detail::utc_text(status.now_ms);
    for (auto& run : recent) {
        if (run.outcome == run_outcome::running) {
            if (!status.running) status.running = run;
        } else if (!status.last_finished) {
            status.last_finished = run;
        }
    }
    if (status.last_success) {
        const std::string& at = status.last_success->ended.value_or(status.last_success->started);
        const auto ended_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                  detail::parse_utc(at).time_since_epoch())
                                  .count();
        status.last_success_end_ms = ended_ms;
        status.success_age_seconds = static_cast<double>(status.now_ms - ended_ms) / 1000.0;
    }
    return status;
}

std::size_t RunHistory::prune(duration retention, std::size_t batch_size) {
    detail::validate_lease(retention, "history retention");
    if (batch_size == 0) throw error(errc::invalid_argument, "prune batch size must be positive");
    detail::ensure_initialized(*state_);
    // A lock table without a history (one not initialised since sqlock
    // had one) has nothing to prune.
    if (!state_->pool->with([](detail::Connection& c) { return c.has(detail::SideTable::runs); }))
        return 0;
    return detail::in_paced_batches(
        batch_size, [&](auto&& op) { return with_history(*state_, op); },
        [&](detail::Connection& c) {
            return static_cast<std::size_t>(
                c.query(detail::Query::prune_runs,
                        {detail::Value::millis(retention),
                         detail::Value::integer(static_cast<std::int64_t>(batch_size))})
                    .affected);
        });
}

std::size_t RunHistory::count_prunable(duration retention) {
    detail::validate_lease(retention, "history retention");
    detail::ensure_initialized(*state_);
    return state_->pool->with([&](detail::Connection& c) -> std::size_t {
        // As prune(): no history table, nothing to prune.
        if (!c.has(detail::SideTable::runs)) return 0;
        return static_cast<std::size_t>(
            detail::query_int64(c, detail::Query::count_runs, {detail::Value::millis(retention)}));
    });
}

}  // namespace sqlock
