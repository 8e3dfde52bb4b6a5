// Pausing jobs through a Locker (sqlock/pause.hpp): validation and the
// missing-table rules; the SQL is each backend's (backend.hpp).
#include "sqlock/pause.hpp"

#include <chrono>

#include "batch_pacing.hpp"
#include "locker_state.hpp"
#include "owner.hpp"
#include "schema.hpp"
#include "side_table.hpp"
#include "sqlock/locker.hpp"
#include "validate.hpp"

namespace sqlock {

namespace {

// Pauses need their table, which only init() creates on a server.
template <typename F>
auto with_pauses(detail::LockerState& s, F&& f)
    -> decltype(f(std::declval<detail::Connection&>())) {
    return detail::with_side_table(
        s, "pauses table", detail::pauses_table_name(s.table),
        [](detail::Connection& c) { return c.has_pauses(); }, std::forward<F>(f));
}

}  // namespace

PauseInfo Locker::pause(const std::string& name, std::optional<duration> for_,
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
    return with_pauses(*state_,
                       [&](detail::Connection& c) { return c.pause(name, by, reason, for_); });
}

bool Locker::resume(const std::string& name) {
    detail::validate_lock_name(name);
    detail::ensure_initialized(*state_);
    return with_pauses(*state_, [&](detail::Connection& c) { return c.resume(name); });
}

std::optional<PauseInfo> Locker::paused(const std::string& name) {
    detail::validate_lock_name(name);
    detail::ensure_initialized(*state_);
    return state_->pool->with([&](detail::Connection& c) -> std::optional<PauseInfo> {
        // No table: a deployment from before pauses, where nothing is paused.
        if (!c.has_pauses()) return std::nullopt;
        return c.paused(name);
    });
}

std::vector<PauseInfo> Locker::pauses() {
    detail::ensure_initialized(*state_);
    return state_->pool->with([&](detail::Connection& c) -> std::vector<PauseInfo> {
        if (!c.has_pauses()) return {};
        return c.pauses();
    });
}

std::size_t Locker::purge_expired_pauses(std::size_t batch_size) {
    if (batch_size == 0) throw error(errc::invalid_argument, "purge batch size must be positive");
    detail::ensure_initialized(*state_);
    // A lock table made before sqlock had pauses has none to delete: the
    // reaper must keep working on such a deployment.
    if (!state_->pool->with([](detail::Connection& c) { return c.has_pauses(); })) return 0;
    return detail::in_paced_batches(
        batch_size, [&](auto&& op) { return with_pauses(*state_, op); },
        [&](detail::Connection& c) { return c.purge_expired_pauses_batch(batch_size); });
}

std::size_t Locker::count_expired_pauses() {
    detail::ensure_initialized(*state_);
    return state_->pool->with([](detail::Connection& c) -> std::size_t {
        if (!c.has_pauses()) return 0;
        return c.count_expired_pauses();
    });
}

}  // namespace sqlock
