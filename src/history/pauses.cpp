// Pauses (sqlock/pauses.hpp), pausing jobs of a Locker's lock table: validation, the
// missing-table rules and the statements' use; the SQL is each backend's
// StatementSet (statement_set.hpp).
#include "sqlock/pauses.hpp"

#include <chrono>

#include "base/owner.hpp"
#include "base/validate.hpp"
#include "contract/records.hpp"
#include "contract/table_family.hpp"
#include "state/access.hpp"
#include "state/batch_pacing.hpp"
#include "state/locker_state.hpp"
#include "state/side_table.hpp"

namespace sqlock {

namespace {

// Pauses need their table, which only init() creates on a server.
template <typename F>
auto with_pauses(detail::LockerState& s, F&& f)
    -> decltype(f(std::declval<detail::Connection&>())) {
    return detail::with_side_table(s, detail::SideTable::pauses, std::forward<F>(f));
}

}  // namespace

Pauses::Pauses(const Locker& locker) : state_(detail::Access::session(locker)) {}

PauseInfo Pauses::pause(const std::string& name, std::optional<duration> for_,
                        const std::string& reason) {
    detail::validate_lock_name(name);
    if (for_) detail::validate_lease(*for_, "pause duration");
    if (reason.size() > 1024)
        throw error(errc::invalid_argument, "a pause reason is at most 1024 bytes");
    if (!detail::is_valid_utf8(reason))
        throw error(errc::invalid_argument, "a pause reason must be UTF-8 text");
    std::string by = detail::this_user() + "@" + detail::this_host();
    if (by.size() > 255 || !detail::is_valid_utf8(by)) by = detail::printable(by, 200);
    detail::ensure_initialized(*state_);
    using detail::Value;
    const std::vector<Value> params = {Value::text(name), Value::text(by), Value::text(reason),
                                       for_ ? Value::millis(*for_) : Value::null()};
    return with_pauses(*state_, [&](detail::Connection& c) {
        return detail::read_pause(
            detail::first_row(c.query(detail::Query::pause, params), detail::Query::pause, params));
    });
}

bool Pauses::resume(const std::string& name) {
    detail::validate_lock_name(name);
    detail::ensure_initialized(*state_);
    return with_pauses(*state_, [&](detail::Connection& c) {
        const detail::Rows r = c.query(detail::Query::resume, {detail::Value::text(name)});
        // No row: there was no pause; else whether the deleted one was in force.
        return !r.rows.empty() && detail::as_bool(r.rows[0].at(0));
    });
}

std::optional<PauseInfo> Pauses::find(const std::string& name) {
    detail::validate_lock_name(name);
    detail::ensure_initialized(*state_);
    return state_->pool->with([&](detail::Connection& c) -> std::optional<PauseInfo> {
        // No table: a deployment from before pauses, where nothing is paused.
        if (!c.has(detail::SideTable::pauses)) return std::nullopt;
        const detail::Rows r = c.query(detail::Query::paused, {detail::Value::text(name)});
        if (r.rows.empty()) return std::nullopt;
        return detail::read_pause(r.rows[0]);
    });
}

std::vector<PauseInfo> Pauses::all() {
    detail::ensure_initialized(*state_);
    return state_->pool->with([&](detail::Connection& c) -> std::vector<PauseInfo> {
        if (!c.has(detail::SideTable::pauses)) return {};
        std::vector<PauseInfo> all;
        for (const auto& row : c.query(detail::Query::pauses, {}).rows)
            all.push_back(detail::read_pause(row));
        return all;
    });
}

std::size_t Pauses::purge_expired(std::size_t batch_size) {
    if (batch_size == 0) throw error(errc::invalid_argument, "purge batch size must be positive");
    detail::ensure_initialized(*state_);
    // A lock table made before sqlock had pauses has none to delete: the
    // reaper must keep working on such a deployment.
    if (!state_->pool->with([](detail::Connection& c) { return c.has(detail::SideTable::pauses); }))
        return 0;
    return detail::in_paced_batches(
        batch_size, [&](auto&& op) { return with_pauses(*state_, op); },
        [&](detail::Connection& c) {
            return static_cast<std::size_t>(
                c.query(detail::Query::purge_pauses,
                        {detail::Value::integer(static_cast<std::int64_t>(batch_size))})
                    .affected);
        });
}

std::size_t Pauses::count_expired() {
    detail::ensure_initialized(*state_);
    return state_->pool->with([](detail::Connection& c) -> std::size_t {
        if (!c.has(detail::SideTable::pauses)) return 0;
        return static_cast<std::size_t>(detail::query_int64(c, detail::Query::count_pauses));
    });
}

}  // namespace sqlock
