#include "sqlock/lock.hpp"

#include <unistd.h>

#include <cstdio>
#include <mutex>

#include "base/current_pid.hpp"
#include "base/owner.hpp"
#include "base/validate.hpp"
#include "lock/lock_state.hpp"
#include "monitoring/observer.hpp"

namespace sqlock {
namespace {

std::mutex handler_mutex;
release_error_handler& handler_slot() {
    static release_error_handler handler;
    return handler;
}

}  // namespace

namespace {

void report_release_error(const error& e) noexcept {
    release_error_handler handler;
    {
        std::lock_guard<std::mutex> guard(handler_mutex);
        handler = handler_slot();
    }
    try {
        if (handler)
            handler(e);
        else
            std::fprintf(stderr, "sqlock: release failed (%s): %s\n", to_string(e.category()),
                         e.what());
    } catch (...) {
        // A handler that throws must not escape a destructor.
    }
}

}  // namespace

void detail::release_reporting_failure(const std::function<void()>& release) noexcept {
    try {
        release();
    } catch (const error& e) {
        report_release_error(e);
    } catch (const std::exception& e) {
        report_release_error(error(errc::backend, e.what()));
    } catch (...) {
        report_release_error(error(errc::backend, "unknown failure during release"));
    }
}

void detail::end_heartbeat(Heartbeat* heartbeat, pid_t owner) noexcept {
    if (!heartbeat) return;
    // In a forked child the heartbeat's threads do not exist: forget them.
    if (current_pid() != owner)
        heartbeat->abandon();
    else
        heartbeat->stop();
}

release_error_handler set_release_error_handler(release_error_handler handler) {
    std::lock_guard<std::mutex> guard(handler_mutex);
    release_error_handler previous = std::move(handler_slot());
    handler_slot() = std::move(handler);
    return previous;
}

namespace detail {

std::optional<Row> renew_row(Connection& c, const LockState& st, duration lease) {
    std::vector<Row> rows =
        c.renew(held_claim(st.name, st.lockstring, st.shared), {st.id}, st.locked_by, lease);
    if (rows.empty()) return std::nullopt;
    return std::move(rows.front());
}

Claim held_claim(const std::string& name, const std::string& lockstring, bool shared) {
    Claim held;
    held.entries.push_back(shared ? ClaimEntry::shared_as(name, lockstring)
                                  : ClaimEntry::exclusive(lockstring));
    return held;
}

void tell_renewed(LockState& s, std::chrono::steady_clock::time_point sent) noexcept {
    LockObserver* observer = s.locker->options.observer.get();
    if (!observer) return;
    const int failed = s.failed_renewals.exchange(0);
    tell(observer, [&](LockObserver& o) {
        o.on_renew(RenewEvent{
            s.name, s.id,
            std::chrono::duration_cast<duration>(std::chrono::steady_clock::now() - sent),
            failed > 0, failed});
    });
}

void LockState::mark_lost() noexcept {
    if (lost.exchange(true)) return;
    if (on_lost) {
        try {
            on_lost(name, id);
        } catch (...) {
        }
    }
    tell(locker->options.observer.get(), [&](LockObserver& o) { o.on_loss(LossEvent{name, id}); });
}

void LockState::detach() noexcept {
    if (heartbeat) heartbeat->stop();
    std::lock_guard<std::mutex> guard(locker->holds_mutex);
    auto it = locker->holds.find(lockstring);
    if (it != locker->holds.end()) {
        auto current = it->second.lock();
        if (!current || current.get() == this) locker->holds.erase(it);
    }
}

void LockState::release_row() {
    detach();
    // If the link breaks mid-release, the pool retries once; a DELETE that
    // committed just before the break then finds no row and reports "lost".
    // Erring that way is deliberate: "released" for a lock that was in fact
    // taken over would tell the caller its critical section was protected.
    // Not even "the retry was answered before valid_until" rules that out:
    // a crash failover to an asynchronous standby can lose the row itself,
    // and the link breaks exactly then.
    const ClaimRelease outcome = locker->pool->with(
        // The claim is made here, not kept: a process may hold many locks.
        [&](Connection& c) {
            return c.release(held_claim(name, lockstring, shared), {id}, locked_by, min_hold);
        });
    // A shared release may have freed the name (its last holder left).
    if (!outcome.lost && !outcome.kept) locker->hub->released(shared ? name : lockstring);
    if (outcome.lost) {
        if (!lost.exchange(true))
            tell(locker->options.observer.get(), [&](LockObserver& o) {
                o.on_loss(LossEvent{name, id});
            });
        throw error(errc::lost, "lock '" + printable(lockstring) + "' (id " + std::to_string(id) +
                                    ") was no longer ours at release: it expired and was taken "
                                    "over or deleted [" +
                                    locker->url.redacted + "]");
    }
    tell(locker->options.observer.get(), [&](LockObserver& o) {
        o.on_release(ReleaseEvent{
            name, id,
            std::chrono::duration_cast<duration>(std::chrono::steady_clock::now() - acquired_at)});
    });
}

LockState::~LockState() {
    end_heartbeat(heartbeat.get(), pid);
}

}  // namespace detail

Lock::Lock(std::shared_ptr<detail::LockState> state) : state_(std::move(state)) {}
Lock::Lock(Lock&&) noexcept = default;

Lock& Lock::operator=(Lock&& other) noexcept {
    if (this != &other) {
        release_quietly();
        state_ = std::move(other.state_);
    }
    return *this;
}

Lock::~Lock() {
    release_quietly();
}

void Lock::release_quietly() noexcept {
    if (!state_) return;
    detail::release_reporting_failure([this] { release(); });
    state_.reset();
}

static const detail::LockState& checked(const std::shared_ptr<detail::LockState>& s) {
    if (!s) throw error(errc::invalid_argument, "use of a released or moved-from sqlock::Lock");
    return *s;
}

const std::string& Lock::name() const {
    return checked(state_).name;
}
const std::string& Lock::lockstring() const {
    return checked(state_).lockstring;
}
int Lock::slot() const {
    return checked(state_).slot;
}
lock_mode Lock::mode() const {
    return checked(state_).shared ? lock_mode::shared : lock_mode::exclusive;
}
std::int64_t Lock::id() const {
    return checked(state_).id;
}
const std::string& Lock::locked_by() const {
    return checked(state_).locked_by;
}
const std::string& Lock::owner_token() const {
    return checked(state_).token;
}

std::string Lock::created() const {
    const auto& s = checked(state_);
    std::lock_guard<std::mutex> guard(s.mutex);
    return s.created;
}

std::string Lock::expires() const {
    const auto& s = checked(state_);
    std::lock_guard<std::mutex> guard(s.mutex);
    return s.expires;
}

std::chrono::system_clock::time_point Lock::created_time() const {
    LockInfo info;  // one parser of the database's time text: LockInfo's
    info.created = created();
    return info.created_time();
}

std::chrono::system_clock::time_point Lock::expires_time() const {
    LockInfo info;
    info.expires = expires();
    return info.expires_time();
}

void Lock::renew() {
    renew(checked(state_).lease);
}

void Lock::renew(duration lease) {
    checked(state_);
    detail::validate_lease(lease, "lease");
    auto& s = *state_;
    const auto sent = std::chrono::steady_clock::now();
    std::optional<detail::Row> row;
    try {
        row = s.locker->pool->with(
            [&](detail::Connection& c) { return detail::renew_row(c, s, lease); });
    } catch (const error&) {
        ++s.failed_renewals;  // the next success is late (observer.hpp)
        throw;
    }
    if (!row) {
        s.mark_lost();
        throw error(errc::lost,
                    "lock '" + detail::printable(s.lockstring) + "' (id " + std::to_string(s.id) +
                        ") is no longer ours: its lease ran out or it was taken over [" +
                        s.locker->url.redacted + "]");
    }
    s.validity.granted(sent, lease);
    {
        std::lock_guard<std::mutex> guard(s.mutex);
        s.expires = row->expires;
    }
    detail::tell_renewed(s, sent);
}

std::chrono::steady_clock::time_point Lock::valid_until() const {
    return checked(state_).validity.until();
}

std::optional<error> Lock::renewal_failure() const {
    const auto& s = checked(state_);
    if (!s.heartbeat) return std::nullopt;
    return s.heartbeat->last_failure();
}

bool Lock::held() const {
    const auto& s = checked(state_);
    if (s.lost) return false;
    bool ours =
        s.locker->pool->with([&](detail::Connection& c) { return c.is_held(s.id, s.locked_by); });
    if (!ours) state_->mark_lost();
    return ours;
}

bool Lock::lost() const noexcept {
    return state_ && state_->lost.load();
}

bool Lock::active() const noexcept {
    return state_ != nullptr;
}

LockInfo Lock::detach() {
    checked(state_);
    std::shared_ptr<detail::LockState> s = std::move(state_);
    s->released = true;
    s->detach();
    LockInfo info;
    info.id = s->id;
    info.name = s->lockstring;
    info.locked_by = s->locked_by;
    info.holder = detail::parse_holder(s->locked_by);
    std::lock_guard<std::mutex> guard(s->mutex);
    info.created = s->created;
    info.expires = s->expires;
    return info;
}

void Lock::release() {
    if (!state_) return;  // second call: no-op
    std::shared_ptr<detail::LockState> s = std::move(state_);
    // In a forked child: the lock belongs to the parent. Leave it alone.
    if (detail::current_pid() != s->pid) return;
    {
        std::lock_guard<std::mutex> guard(s->locker->holds_mutex);
        if (s->depth > 1) {
            --s->depth;  // an outer re-entrant hold remains
            return;
        }
        s->depth = 0;
    }
    if (s->released.exchange(true)) return;
    try {
        s->release_row();
    } catch (const error& e) {
        if (e.category() == errc::lost) throw;
        // A transient failure (database busy, connection down): the row is
        // still ours, so keep the handle usable for another release(), and
        // for the destructor's. The heartbeat stays stopped.
        s->released = false;
        {
            std::lock_guard<std::mutex> guard(s->locker->holds_mutex);
            s->depth = 1;
        }
        state_ = std::move(s);
        throw;
    }
}

}  // namespace sqlock
