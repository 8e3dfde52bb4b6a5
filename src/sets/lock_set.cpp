#include "sqlock/lock_set.hpp"

#include <algorithm>

#include "base/current_pid.hpp"
#include "base/validate.hpp"
#include "lock/lock_state.hpp"
#include "sets/lock_set_state.hpp"

namespace sqlock {
namespace detail {

bool LockSetState::renew_rows(duration new_lease, Heartbeat::clock::time_point deadline) {
    std::vector<Row> rows = locker->pool->with([&](Connection& c) {
        // Bounded by the deadline, then back to the defaults for whoever
        // uses this pooled connection next.
        struct Reset {
            Connection& c;
            ~Reset() { c.set_deadline(Heartbeat::clock::time_point::max()); }
        } reset{c};
        c.set_deadline(deadline);
        return c.renew(claim, ids, locked_by, new_lease);
    });
    for (std::size_t i = 0; i < ids.size(); ++i) {
        const bool renewed =
            std::any_of(rows.begin(), rows.end(), [&](const Row& r) { return r.id == ids[i]; });
        if (!renewed) {
            mark_lost(names[i], ids[i]);
            return false;
        }
    }
    std::string earliest;
    for (const Row& r : rows)
        if (earliest.empty() || r.expires < earliest) earliest = r.expires;
    std::lock_guard<std::mutex> guard(mutex);
    expires = std::move(earliest);
    return true;
}

void LockSetState::mark_lost(const std::string& name, std::int64_t id) noexcept {
    if (lost.exchange(true)) return;
    if (on_lost) {
        try {
            on_lost(name, id);
        } catch (...) {
        }
    }
}

void LockSetState::release_rows() {
    if (heartbeat) heartbeat->stop();
    // As a Lock's release: a retry after a broken link that finds the rows
    // gone says "lost" rather than "released".
    const std::size_t not_ours = locker->pool->with(
        [&](Connection& c) { return c.release(claim, ids, locked_by, min_hold).lost; });
    for (const std::string& name : names) locker->hub->released(name);
    if (not_ours > 0) {
        lost = true;
        throw error(errc::lost, std::to_string(not_ours) + " of the " + describe() +
                                    " were no longer ours at release: they expired and were "
                                    "taken over or deleted (the others were released) [" +
                                    locker->url.redacted + "]");
    }
}

std::string LockSetState::describe() const {
    std::string text =
        "set of " + std::to_string(names.size()) + " lock" + (names.size() == 1 ? "" : "s") + " (";
    for (std::size_t i = 0; i < names.size() && i < 5; ++i)
        text += (i ? ", '" : "'") + printable(names[i]) + "' id " + std::to_string(ids[i]);
    if (names.size() > 5) text += ", ...";
    return text + ")";
}

LockSetState::~LockSetState() {
    end_heartbeat(heartbeat.get(), pid);
}

}  // namespace detail

LockSet::LockSet(std::shared_ptr<detail::LockSetState> state) : state_(std::move(state)) {}
LockSet::LockSet(LockSet&&) noexcept = default;

LockSet& LockSet::operator=(LockSet&& other) noexcept {
    if (this != &other) {
        release_quietly();
        state_ = std::move(other.state_);
    }
    return *this;
}

LockSet::~LockSet() {
    release_quietly();
}

void LockSet::release_quietly() noexcept {
    if (!state_) return;
    detail::release_reporting_failure([this] { release(); });
    state_.reset();
}

static const detail::LockSetState& checked(const std::shared_ptr<detail::LockSetState>& s) {
    if (!s) throw error(errc::invalid_argument, "use of a released or moved-from sqlock::LockSet");
    return *s;
}

// The index of `name` in a set's names, or invalid_argument.
static std::size_t index_of(const detail::LockSetState& s, const std::string& name) {
    auto it = std::lower_bound(s.names.begin(), s.names.end(), name);
    if (it == s.names.end() || *it != name)
        throw error(errc::invalid_argument,
                    "'" + detail::printable(name) + "' is not a name of this " + s.describe());
    return static_cast<std::size_t>(it - s.names.begin());
}

const std::vector<std::string>& LockSet::names() const {
    return checked(state_).names;
}

std::size_t LockSet::size() const {
    return checked(state_).names.size();
}

std::int64_t LockSet::id(const std::string& name) const {
    const auto& s = checked(state_);
    return s.ids[index_of(s, name)];
}

const std::vector<std::int64_t>& LockSet::ids() const {
    return checked(state_).ids;
}

lock_mode LockSet::mode(const std::string& name) const {
    const auto& s = checked(state_);
    return s.claim.entries[index_of(s, name)].shared() ? lock_mode::shared : lock_mode::exclusive;
}

const std::string& LockSet::lockstring(const std::string& name) const {
    const auto& s = checked(state_);
    return s.claim.entries[index_of(s, name)].row();
}

const std::string& LockSet::locked_by() const {
    return checked(state_).locked_by;
}

const std::string& LockSet::owner_token() const {
    return checked(state_).token;
}

std::string LockSet::expires() const {
    const auto& s = checked(state_);
    std::lock_guard<std::mutex> guard(s.mutex);
    return s.expires;
}

std::chrono::steady_clock::time_point LockSet::valid_until() const {
    return checked(state_).validity.until();
}

std::optional<error> LockSet::renewal_failure() const {
    const auto& s = checked(state_);
    if (!s.heartbeat) return std::nullopt;
    return s.heartbeat->last_failure();
}

void LockSet::renew() {
    renew(checked(state_).lease);
}

void LockSet::renew(duration lease) {
    checked(state_);
    detail::validate_lease(lease, "lease");
    auto& s = *state_;
    const auto sent = std::chrono::steady_clock::now();
    if (!s.renew_rows(lease, std::chrono::steady_clock::time_point::max()))
        throw error(errc::lost, "the " + s.describe() +
                                    " is no longer ours: the lease of one of its rows ran out or "
                                    "it was taken over [" +
                                    s.locker->url.redacted + "]");
    s.validity.granted(sent, lease);
}

bool LockSet::held() const {
    const auto& s = checked(state_);
    if (s.lost) return false;
    for (std::size_t i = 0; i < s.ids.size(); ++i) {
        const bool ours = s.locker->pool->with(
            [&](detail::Connection& c) { return c.is_held(s.ids[i], s.locked_by); });
        if (!ours) {
            state_->mark_lost(s.names[i], s.ids[i]);
            return false;
        }
    }
    return true;
}

bool LockSet::lost() const noexcept {
    return state_ && state_->lost.load();
}

bool LockSet::active() const noexcept {
    return state_ != nullptr;
}

void LockSet::detach() {
    checked(state_);
    std::shared_ptr<detail::LockSetState> s = std::move(state_);
    s->released = true;
    if (s->heartbeat) s->heartbeat->stop();
}

void LockSet::release() {
    if (!state_) return;  // second call: no-op
    std::shared_ptr<detail::LockSetState> s = std::move(state_);
    // In a forked child: the set belongs to the parent. Leave it alone.
    if (detail::current_pid() != s->pid) return;
    if (s->released.exchange(true)) return;
    try {
        s->release_rows();
    } catch (const error& e) {
        if (e.category() == errc::lost) throw;
        // A transient failure: the rows are still ours; keep the handle
        // usable for another release(), and for the destructor's.
        s->released = false;
        state_ = std::move(s);
        throw;
    }
}

}  // namespace sqlock
