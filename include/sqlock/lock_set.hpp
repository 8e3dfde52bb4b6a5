// sqlock::LockSet — several locks held together: an RAII guard over one row
// per name, taken all at once or not at all.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sqlock/duration.hpp"
#include "sqlock/error.hpp"
#include "sqlock/options.hpp"
#include "sqlock/release_errors.hpp"

namespace sqlock {

struct GuardStatement;

/// One name of a lock set and the mode it is held in, for the lock sets
/// that mix modes (`Locker::lock_all({{"reports", lock_mode::shared},
/// {"db-maint"}})`).
struct SetMember {
    std::string name;
    lock_mode mode = lock_mode::exclusive;
};

namespace detail {
struct HeldClaim;
struct Access;
}  // namespace detail

/// LockSet
///
/// Obtained from `Locker::lock_all()` or `try_lock_all()`: every name of
/// the set is held, each by a row of its own with its own fencing id, under
/// one owner token; exclusively, or shared (LockOptions::mode, or a
/// SetMember's mode), as a single Lock holds it. The rows were written in
/// one transaction, so no other client ever saw part of the set. They are
/// renewed together (the heartbeat renews the whole set in one round trip)
/// and released together. Losing any row is losing the set.
///
/// The destructor releases and never throws: a failed release goes to the
/// release error handler (`set_release_error_handler`), as a Lock's does.
/// A set is never re-entrant: asking for a set with a name this thread holds
/// through the same Locker is `errc::busy`, since waiting would wait on
/// itself.
///
/// Thread safety: as Lock's. One thread at a time; the heartbeat runs on
/// its own thread and is synchronised internally.
///
///     sqlock::Locker locker;
///     auto both = locker.lock_all({"db-maint", "backup"}, {.wait = 10min});
///     run_maintenance(both.id("db-maint"), both.id("backup"));
class LockSet {
  public:
    LockSet(LockSet&&) noexcept;
    LockSet& operator=(LockSet&&) noexcept;
    LockSet(const LockSet&) = delete;
    LockSet& operator=(const LockSet&) = delete;
    ~LockSet();

    /// The names held, each once, in bytewise order.
    const std::vector<std::string>& names() const;
    std::size_t size() const;
    /// The fencing token of `name`: its row's id, strictly increasing per
    /// name. Throws `errc::invalid_argument` for a name not in the set.
    std::int64_t id(const std::string& name) const;
    /// Every name's fencing token, in the order of names().
    const std::vector<std::int64_t>& ids() const;
    /// How `name` is held. Throws `errc::invalid_argument` for a name not
    /// in the set.
    lock_mode mode(const std::string& name) const;
    /// The `lockstring` of `name`'s row: the name, or for a name held shared
    /// its own holder row ("name#shared-..."), as Lock::lockstring().
    const std::string& lockstring(const std::string& name) const;
    /// The `locked_by` JSON stored in every row of the set.
    const std::string& locked_by() const;
    /// The random owner token stored in `locked_by` ("guid").
    const std::string& owner_token() const;
    /// When the set's lease ends, UTC text from the database clock: the
    /// earliest expiry among its rows.
    std::string expires() const;
    /// Until when every row is certainly still held, by this process's
    /// monotonic clock (as Lock::valid_until()).
    std::chrono::steady_clock::time_point valid_until() const;
    /// With a heartbeat: why its renewals have been failing (the error of
    /// the last attempt: the database read-only, unreachable, not answering
    /// in time), when the last one failed and none has succeeded since;
    /// else nullopt. Thread-safe.
    std::optional<error> renewal_failure() const;
    /// Extends every row's lease to `lease` from the database's now. Throws
    /// `errc::lost` if any row is no longer ours (the set is lost then).
    void renew(duration lease);
    /// Extends the lease by the length it was acquired with.
    void renew();
    /// Asks the database whether every row is still ours.
    bool held() const;
    /// True once a heartbeat or an operation found any row lost (no query).
    bool lost() const noexcept;
    /// Releases every row now, together. Throws `errc::lost` naming the
    /// rows that were no longer ours (the others are released), or a
    /// connection/backend error, after which the handle stays and release()
    /// may be called again. A call after success or `lost` is a no-op.
    void release();
    /// True until released (or moved from).
    bool active() const noexcept;
    /// The statements that guard a transaction with this set, one per name
    /// (see sqlock::guard in transaction.hpp). Throws
    /// errc::invalid_argument once released or moved from.
    std::vector<GuardStatement> guard_statements() const;
    /// Stops managing the set without releasing it: its rows stay until
    /// their lease runs out, or until each is released by the owner token
    /// (`Locker::release(name, owner_token())`) or force-released. Stops
    /// the heartbeat.
    void detach();

  private:
    friend struct detail::Access;
    explicit LockSet(std::shared_ptr<detail::HeldClaim> held);

    std::shared_ptr<detail::HeldClaim> held_;
};

}  // namespace sqlock
