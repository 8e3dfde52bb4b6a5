#include "sqlock/locker.hpp"

#include "base/current_pid.hpp"
#include "base/validate.hpp"
#include "contract/records.hpp"
#include "loading/backend_factory.hpp"
#include "lock/lock_acquirer.hpp"
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
        return 0;
    });
    s.needs_init = false;
}

}  // namespace detail

using detail::Acquirer;

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

void Locker::init() {
    state_->backend->create_database();
    state_->pool->with([](detail::Connection& c) {
        c.init_schema();
        c.forget_missing_queue();
        c.check_access();
        return 0;
    });
    state_->needs_init = false;
}

namespace {

// A plain lock's target, its name checked for its mode.
detail::Target lock_target(const std::string& name, const LockOptions& options) {
    detail::validate_lock_name(name);
    detail::validate_options(options);
    const bool shared = options.mode == lock_mode::shared;
    if (shared) detail::validate_shared_name(name);
    return {name, 0, shared};
}

// Semaphores have no shared mode: every slot is one holder's.
void refuse_shared_mode(const LockOptions& options, const char* what) {
    if (options.mode == lock_mode::shared)
        throw error(errc::invalid_argument,
                    std::string(what) + " cannot be taken in shared mode: only a plain lock can");
}

}  // namespace

std::optional<Lock> Locker::try_lock(const std::string& name, const LockOptions& options) {
    const detail::Target target = lock_target(name, options);
    Acquirer a(state_);
    if (auto nested = a.check_reentry(target, options)) return Lock(std::move(nested));
    return a.try_once(target, options);
}

Lock Locker::lock(const std::string& name, const LockOptions& options) {
    const detail::Target target = lock_target(name, options);
    Acquirer a(state_);
    if (auto nested = a.check_reentry(target, options)) return Lock(std::move(nested));
    return a.acquire(target, options);
}

static void validate_semaphore(const std::string& name, int capacity) {
    detail::validate_lock_name(name);
    if (capacity < 1 || capacity > 10000)
        throw error(errc::invalid_argument, "semaphore capacity must be between 1 and 10000, got " +
                                                std::to_string(capacity));
    std::string longest = detail::slot_lockstring(name, capacity);
    if (longest.size() > detail::max_name_bytes)
        throw error(errc::invalid_argument, "semaphore name too long: slot rows are named '" +
                                                detail::printable(longest) +
                                                "', which exceeds 128 bytes");
}

std::optional<Lock> Locker::try_acquire_slot(const std::string& name, int capacity,
                                             const LockOptions& options) {
    validate_semaphore(name, capacity);
    detail::validate_options(options);
    refuse_shared_mode(options, "a semaphore slot");
    return Acquirer(state_).try_once({name, capacity}, options);
}

Lock Locker::acquire_slot(const std::string& name, int capacity, const LockOptions& options) {
    validate_semaphore(name, capacity);
    detail::validate_options(options);
    refuse_shared_mode(options, "a semaphore slot");
    return Acquirer(state_).acquire({name, capacity}, options);
}

std::size_t Locker::purge_expired(std::size_t batch_size) {
    if (batch_size == 0) throw error(errc::invalid_argument, "purge batch size must be positive");
    Acquirer(state_).ensure_initialized();
    return detail::in_paced_batches(
        batch_size, [&](auto&& op) { return state_->pool->with(op); },
        [&](detail::Connection& c) { return c.purge_expired_batch(batch_size); });
}

namespace {

std::vector<LockInfo> read_rows(const std::shared_ptr<detail::LockerState>& state,
                                const std::string& prefix, bool expired_only) {
    Acquirer(state).ensure_initialized();
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
    Acquirer(state_).ensure_initialized();
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

std::optional<LockInfo> Locker::show(const std::string& name) {
    detail::validate_lock_name(name);
    Acquirer(state_).ensure_initialized();
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
    Acquirer(state_).ensure_initialized();
    return state_->pool->with([&](detail::Connection& c) -> std::size_t {
        if (!c.has_queue()) return 0;
        return static_cast<std::size_t>(
            detail::query_int64(c, detail::Query::queue_length, {detail::Value::text(name)}));
    });
}

namespace {

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
            return c.release(detail::held_claim(*shared_name, info.name, true), {info.id},
                             info.locked_by, duration::zero())
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
    const auto claim = shared_name ? detail::held_claim(*shared_name, info.name, true)
                                   : detail::held_claim(name, name, false);
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
                return c.release(detail::held_claim(*shared_name, row->lockstring, true), {row->id},
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

Diagnosis Locker::diagnose() {
    Diagnosis d;
    d.facts.push_back({"database", state_->url.redacted});
    d.facts.push_back({"backend", state_->backend->name()});
    d.facts.push_back({"table", state_->table});
    state_->backend->diagnose(d);
    return d;
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
