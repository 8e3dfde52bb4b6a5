// sqlock::Locker, the front door: a session with the lock table (the
// LockerState its locks share), the lock kinds and the admin calls. What is
// built over the session stands in its own types and folders (RunHistory,
// Pauses, Election, diagnose(), lock_transaction()).
#include "sqlock/locker.hpp"

#include "base/current_pid.hpp"
#include "base/validate.hpp"
#include "contract/records.hpp"
#include "contract/table_family.hpp"
#include "loading/backend_factory.hpp"
#include "lock/lock_acquirer.hpp"
#include "monitoring/lock_activity.hpp"
#include "sets/set_acquirer.hpp"
#include "state/access.hpp"
#include "state/batch_pacing.hpp"
#include "waiting/contention_text.hpp"

namespace sqlock {
namespace detail {

LockerState::~LockerState() {
    if (current_pid() != creator_pid) {
        // A forked child must not close the parent's connections: closing a
        // PostgreSQL socket would end the parent's session for it.
        if (hub) hub->abandon();
        (void)hub.release();
        (void)pool.release();
        (void)backend.release();
    }
}

void ensure_initialized(LockerState& s) {
    if (!s.needs_init.load()) return;
    std::lock_guard<std::mutex> guard(s.init_mutex);
    if (!s.needs_init.load()) return;
    s.pool->with([](Connection& c) {
        c.init_schema();
        c.forget_missing_queue();
        try {
            (void)c.upgrade_schema();
        } catch (const error&) {
            // What it adds is for monitoring alone: never a reason to fail
            // a lock (a read-only window, say); `sqlock init` tells.
        }
        return 0;
    });
    s.needs_init = false;
}

const std::shared_ptr<LockerState>& Access::session(const Locker& locker) {
    if (!locker.state_) throw error(errc::invalid_argument, "use of a moved-from sqlock::Locker");
    return locker.state_;
}

}  // namespace detail

static_assert(Locker::max_set_size == detail::max_set_names);

Locker::Locker(const std::string& url, LockerOptions options) {
    auto s = std::make_shared<detail::LockerState>();
    s->creator_pid = detail::current_pid();
    s->url = detail::parse_database_url(url);
    s->table = options.table;
    s->options = options;
    if (options.pool_size == 0 || options.pool_size > 1000)
        throw error(errc::invalid_argument, "pool_size must be between 1 and 1000");
    detail::validate_non_negative(options.pool_timeout, "pool_timeout");
    detail::validate_lease(options.db_timeout, "db_timeout");
    s->backend = detail::make_backend(s->url, s->table, options.db_timeout);
    detail::Backend* backend = s->backend.get();
    s->pool = std::make_unique<detail::ConnectionPool>([backend] { return backend->connect(); },
                                                       options.pool_size, options.pool_timeout);
    s->hub = std::make_unique<detail::ReleaseHub>([backend] { return backend->listen(); });
    using mode = LockerOptions::auto_init_mode;
    s->needs_init = options.auto_init == mode::always ||
                    (options.auto_init == mode::when_default && s->url.is_embedded_default);
    state_ = std::move(s);
}

Locker::Locker(Locker&&) noexcept = default;
Locker& Locker::operator=(Locker&&) noexcept = default;
Locker::~Locker() = default;

std::string Locker::default_url() {
    const char* env = std::getenv("SQLOCK_DB");
    if (env && *env) return env;
    return "sqlite://" + detail::embedded_default_path();
}

std::vector<std::string> Locker::init() {
    state_->backend->create_database();
    std::vector<std::string> notes;
    state_->pool->with([&](detail::Connection& c) {
        notes.clear();
        c.init_schema();
        c.forget_missing_queue();
        c.check_access();
        std::optional<std::string> why;
        try {
            why = c.upgrade_schema();
        } catch (const error& e) {
            if (e.category() == errc::connection) throw;  // the pool tries again
            why = std::string("adding it failed: ") + e.what();
        }
        if (why)
            notes.push_back("queue table " +
                            detail::side_table_name(state_->table, detail::SideTable::queue) +
                            " has no column joined, so the oldest waiter's age is not known "
                            "(sqlock metrics leaves sqlock_lock_oldest_waiter_seconds out): " +
                            *why);
        return 0;
    });
    state_->needs_init = false;
    return notes;
}

std::optional<Lock> Locker::try_lock(const std::string& name, const LockOptions& options) {
    return detail::try_lock_name(state_, name, options);
}

Lock Locker::lock(const std::string& name, const LockOptions& options) {
    return detail::lock_name(state_, name, options);
}

std::optional<Lock> Locker::try_acquire_slot(const std::string& name, int capacity,
                                             const LockOptions& options) {
    return detail::try_acquire_slot(state_, name, capacity, options);
}

Lock Locker::acquire_slot(const std::string& name, int capacity, const LockOptions& options) {
    return detail::acquire_slot(state_, name, capacity, options);
}

std::optional<LockSet> Locker::try_lock_all(const std::vector<std::string>& names,
                                            const LockOptions& options) {
    return detail::try_lock_all(state_, names, options);
}

LockSet Locker::lock_all(const std::vector<std::string>& names, const LockOptions& options) {
    return detail::lock_all(state_, names, options);
}

std::optional<LockSet> Locker::try_lock_members(const std::vector<SetMember>& members,
                                                const LockOptions& options) {
    return detail::try_lock_members(state_, members, options);
}

LockSet Locker::lock_members(const std::vector<SetMember>& members, const LockOptions& options) {
    return detail::lock_members(state_, members, options);
}

std::size_t Locker::purge_expired(std::size_t batch_size) {
    if (batch_size == 0) throw error(errc::invalid_argument, "purge batch size must be positive");
    detail::ensure_initialized(*state_);
    return detail::in_paced_batches(
        batch_size, [&](auto&& op) { return state_->pool->with(op); },
        [&](detail::Connection& c) { return c.purge_expired_batch(batch_size); });
}

namespace {

std::vector<LockInfo> read_rows(const std::shared_ptr<detail::LockerState>& state,
                                const std::string& prefix, bool expired_only) {
    detail::ensure_initialized(*state);
    auto found =
        state->pool->with([&](detail::Connection& c) { return c.list(prefix, expired_only); });
    std::vector<LockInfo> out;
    out.reserve(found.size());
    for (const auto& r : found) out.push_back(detail::to_info(r));
    return out;
}

}  // namespace

std::vector<LockInfo> Locker::list(const std::string& prefix) {
    return read_rows(state_, prefix, false);
}

std::vector<LockInfo> Locker::list_expired() {
    return read_rows(state_, "", true);
}

LockCounts Locker::lock_counts() {
    detail::ensure_initialized(*state_);
    return state_->pool->with([](detail::Connection& c) {
        const auto key = detail::Query::lock_counts;
        const detail::Rows r = c.query(key, {});
        const auto& row = detail::first_row(r, key, {});
        LockCounts counts;
        counts.held = detail::as_int64(row.at(0));
        counts.expired = detail::as_int64(row.at(1)) - counts.held;
        return counts;
    });
}

LockActivity Locker::lock_activity() {
    detail::ensure_initialized(*state_);
    return detail::lock_activity(*state_);
}

std::optional<LockInfo> Locker::show(const std::string& name) {
    detail::validate_lock_name(name);
    detail::ensure_initialized(*state_);
    auto row = state_->pool->with([&](detail::Connection& c) { return c.find(name); });
    if (!row) return std::nullopt;
    return detail::to_info(*row);
}

std::vector<LockInfo> Locker::shared_holders(const std::string& name) {
    detail::validate_lock_name(name);
    std::vector<LockInfo> live;
    for (LockInfo& info : read_rows(state_, detail::shared_prefix(name), false))
        if (!info.expired() && detail::shared_name_of(info.name) == name)
            live.push_back(std::move(info));
    return live;
}

std::size_t Locker::queue_length(const std::string& name) {
    detail::validate_lock_name(name);
    detail::ensure_initialized(*state_);
    return state_->pool->with([&](detail::Connection& c) -> std::size_t {
        if (!c.has(detail::SideTable::queue)) return 0;
        return static_cast<std::size_t>(
            detail::query_int64(c, detail::Query::queue_length, {detail::Value::text(name)}));
    });
}

namespace {

// The claim one held row of `name` is released and renewed by: its own
// row, or a shared holder's row `lockstring` of `name`.
detail::Claim held_row(const std::string& name, const std::string& lockstring, bool shared) {
    detail::Claim held;
    held.entries.push_back(shared ? detail::ClaimEntry::shared_as(name, lockstring)
                                  : detail::ClaimEntry::exclusive(lockstring));
    return held;
}

// The row of `name` if the owner token `token` holds it; nullopt if there is
// no row; errc::lost if somebody else holds it.
std::optional<LockInfo> row_held_by(const std::shared_ptr<detail::LockerState>& state,
                                    const std::string& name, const std::string& token) {
    detail::validate_lock_name(name);
    if (token.empty()) throw error(errc::invalid_argument, "owner token is empty");
    auto row = state->pool->with([&](detail::Connection& c) { return c.find(name); });
    if (!row) return std::nullopt;
    // Held shared: the token's own row, if it is one of the holders.
    if (row->locked_by == detail::shared_marker_owner) {
        auto own = state->pool->with(
            [&](detail::Connection& c) { return c.find(detail::shared_lockstring(name, token)); });
        if (own) row = std::move(own);
    }
    LockInfo info = detail::to_info(*row);
    if (info.holder.guid != token)
        throw error(errc::lost, "lock '" + detail::printable(name) + "' is held by " +
                                    describe_holder(info) + ", not by owner token " +
                                    detail::printable(token, 40) + " [" + state->url.redacted +
                                    "]");
    return info;
}

}  // namespace

std::optional<LockInfo> Locker::release(const std::string& name, const std::string& token) {
    auto held = row_held_by(state_, name, token);
    if (!held) return std::nullopt;
    const LockInfo& info = *held;
    // Delete exactly that row: if it changed hands meanwhile, nothing happens.
    const auto shared_name = detail::shared_name_of(info.name);
    bool deleted = state_->pool->with([&](detail::Connection& c) {
        if (shared_name)  // a shared holder's own row
            return c.release(held_row(*shared_name, info.name, true), {info.id}, info.locked_by,
                             duration::zero())
                       .lost == 0;
        return c.delete_exact(info.id, name, info.locked_by);
    });
    if (!deleted)
        throw error(errc::lost, "lock '" + detail::printable(name) +
                                    "' changed hands while being released [" +
                                    state_->url.redacted + "]");
    state_->hub->released(shared_name ? *shared_name : name);
    return info;
}

std::optional<LockInfo> Locker::renew(const std::string& name, const std::string& token,
                                      duration lease) {
    detail::validate_lock_name(name);
    detail::validate_lease(lease, "lease (expires)");
    auto held = row_held_by(state_, name, token);
    if (!held) return std::nullopt;
    const LockInfo& info = *held;
    // Renews exactly that row, and only while it has not expired.
    const auto shared_name = detail::shared_name_of(info.name);
    const auto claim =
        shared_name ? held_row(*shared_name, info.name, true) : held_row(name, name, false);
    auto renewed = state_->pool->with(
        [&](detail::Connection& c) { return c.renew(claim, {info.id}, info.locked_by, lease); });
    if (renewed.empty())
        throw error(errc::lost, "lock '" + detail::printable(name) +
                                    "' ran out before it could be renewed (or changed hands) [" +
                                    state_->url.redacted + "]");
    return detail::to_info(renewed.front());
}

std::optional<LockInfo> Locker::force_release(const std::string& name) {
    detail::validate_lock_name(name);
    for (int attempt = 0; attempt < 10; ++attempt) {
        auto row = state_->pool->with([&](detail::Connection& c) { return c.find(name); });
        if (!row) return std::nullopt;
        // Delete exactly the row we looked at, so we can say whose it was.
        // One shared holder's row: released as it releases itself, so that
        // the name's marker follows.
        const auto shared_name = detail::shared_name_of(name);
        bool deleted = state_->pool->with([&](detail::Connection& c) {
            if (shared_name)
                return c.release(held_row(*shared_name, row->lockstring, true), {row->id},
                                 row->locked_by, duration::zero())
                           .lost == 0;
            return c.delete_exact(row->id, row->lockstring, row->locked_by);
        });
        if (deleted) {
            // A shared marker: its holders' rows go too, so that each of
            // them finds its hold lost at its next renewal or look.
            if (row->locked_by == detail::shared_marker_owner)
                state_->pool->with([&](detail::Connection& c) {
                    for (const auto& holder : c.list(detail::shared_prefix(name), false))
                        c.delete_exact(holder.id, holder.lockstring, holder.locked_by);
                    return 0;
                });
            state_->hub->released(name);
            return detail::to_info(*row);
        }
    }
    throw error(errc::busy, "lock '" + detail::printable(name) +
                                "' keeps changing hands; force release gave up [" +
                                state_->url.redacted + "]");
}

std::string Locker::url() const {
    return state_->url.redacted;
}
std::string Locker::backend_name() const {
    return state_->backend->name();
}
const std::string& Locker::table() const {
    return state_->table;
}

}  // namespace sqlock
