// Election and Leadership (sqlock/leadership.hpp): a campaign is a lock
// with a value, taken as Locker::lock() takes one; the value's statements
// are each backend's StatementSet (Query::proclaim, Query::leader).
#include "sqlock/leadership.hpp"

#include "base/validate.hpp"
#include "contract/records.hpp"
#include "contract/table_family.hpp"
#include "election/leader_read.hpp"
#include "held/held_claim.hpp"
#include "lock/lock_acquirer.hpp"
#include "state/access.hpp"
#include "state/side_table.hpp"

namespace sqlock {

const char* to_string(leader_event kind) noexcept {
    switch (kind) {
        case leader_event::leader:
            return "leader";
        case leader_event::value:
            return "value";
        case leader_event::vacant:
            return "vacant";
        case leader_event::disconnected:
            return "disconnected";
    }
    return "unknown";
}

// name_ and id_ are kept apart from the lock, which forgets them once
// released: name() and id() still answer after resign().
Leadership::Leadership(Lock lock, std::string value)
    : lock_(std::move(lock)), name_(lock_.name()), id_(lock_.id()), value_(std::move(value)) {}
Leadership::Leadership(Leadership&&) noexcept = default;
Leadership& Leadership::operator=(Leadership&&) noexcept = default;
Leadership::~Leadership() = default;

void Leadership::proclaim(const std::string& value) {
    detail::validate_leader_value(value);
    const std::shared_ptr<detail::HeldClaim>& held = detail::Access::held(lock_);
    if (!held || held->released)
        throw error(errc::lost, "cannot proclaim a value for '" + detail::printable(name_) +
                                    "': this process has resigned");
    detail::HeldClaim& st = *held;
    detail::LockerState& s = *st.locker;
    using detail::Value;
    const std::vector<Value> params = {Value::text(st.name()), Value::integer(st.ids.front()),
                                       Value::text(st.locked_by), Value::text(value)};
    // Idempotent: a retry after a broken link stores the same value again.
    const bool stored =
        detail::with_side_table(s, detail::SideTable::leaders, [&](detail::Connection& c) {
            return detail::as_bool(detail::first_row(c.query(detail::Query::proclaim, params),
                                                     detail::Query::proclaim, params)
                                       .at(0));
        });
    if (!stored) {
        st.mark_lost(0);
        throw error(errc::lost, "cannot proclaim a value for '" + detail::printable(st.name()) +
                                    "': this process no longer leads it (lock id " +
                                    std::to_string(st.ids.front()) + " is gone or expired) [" +
                                    s.url.redacted + "]");
    }
    value_ = value;
}

void Leadership::resign() {
    lock_.release();
}

Election::Election(const Locker& locker, std::string name)
    : state_(detail::Access::session(locker)), name_(std::move(name)) {
    detail::validate_lock_name(name_);
}

Leadership Election::campaign(const std::string& value, const LockOptions& options) {
    detail::validate_leader_value(value);
    if (options.mode != lock_mode::exclusive)
        throw error(errc::invalid_argument, "a leader holds '" + detail::printable(name_) +
                                                "' alone: campaign() takes no shared mode");
    LockOptions o = options;
    o.metadata[detail::leader_value_key] = value;
    Leadership lead(detail::lock_name(state_, name_, o), value);
    // Stored once more where proclaim() changes it, which also tells the
    // watchers that push (PostgreSQL). Thrown out of here, `lead` resigns.
    lead.proclaim(value);
    return lead;
}

std::optional<LeaderInfo> Election::leader() {
    detail::ensure_initialized(*state_);
    return state_->pool->with([&](detail::Connection& c) { return detail::read_leader(c, name_); });
}

}  // namespace sqlock
