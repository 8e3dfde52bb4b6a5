// sqlock::Lock: a handle over the held claim of one name's row
// (held/held_claim.hpp), which renews, releases and reports it.
#include "sqlock/lock.hpp"

#include "base/owner.hpp"
#include "held/held_claim.hpp"
#include "state/access.hpp"

namespace sqlock {
namespace {

constexpr const char* lock_type = "sqlock::Lock";

}  // namespace

Lock detail::Access::lock(std::shared_ptr<HeldClaim> held) {
    return Lock(std::move(held));
}

const std::shared_ptr<detail::HeldClaim>& detail::Access::held(const Lock& lock) noexcept {
    return lock.held_;
}

Lock::Lock(std::shared_ptr<detail::HeldClaim> held) : held_(std::move(held)) {}
Lock::Lock(Lock&&) noexcept = default;

Lock& Lock::operator=(Lock&& other) noexcept {
    if (this != &other) {
        detail::release_quietly(held_);
        held_ = std::move(other.held_);
    }
    return *this;
}

Lock::~Lock() {
    detail::release_quietly(held_);
}

const std::string& Lock::name() const {
    return detail::checked(held_, lock_type).name();
}
const std::string& Lock::lockstring() const {
    return detail::checked(held_, lock_type).row();
}
int Lock::slot() const {
    // A slot's row is "name#N" (slot_lockstring()); a plain lock's or a
    // shared hold's entry is its name, and it asked for no other.
    const detail::HeldClaim& held = detail::checked(held_, lock_type);
    if (!held.asked) return 0;
    const std::string& row = held.row();
    int n = 0;
    for (std::size_t i = held.name().size() + 1; i < row.size(); ++i) n = n * 10 + (row[i] - '0');
    return n;
}
lock_mode Lock::mode() const {
    return detail::checked(held_, lock_type).claim.only().shared() ? lock_mode::shared
                                                                   : lock_mode::exclusive;
}
std::int64_t Lock::id() const {
    return detail::checked(held_, lock_type).ids.front();
}
const std::string& Lock::locked_by() const {
    return detail::checked(held_, lock_type).locked_by;
}
const std::string& Lock::owner_token() const {
    return detail::checked(held_, lock_type).token;
}

std::string Lock::created() const {
    return detail::checked(held_, lock_type).created;
}

std::string Lock::expires() const {
    return detail::checked(held_, lock_type).validity.expires();
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
    detail::HeldClaim& held = detail::checked(held_, lock_type);
    held.renew(held.lease);
}

void Lock::renew(duration lease) {
    detail::checked(held_, lock_type).renew(lease);
}

std::chrono::steady_clock::time_point Lock::valid_until() const {
    return detail::checked(held_, lock_type).validity.until();
}

std::optional<error> Lock::renewal_failure() const {
    return detail::checked(held_, lock_type).renewal_failure();
}

bool Lock::held() const {
    return detail::checked(held_, lock_type).is_held();
}

bool Lock::lost() const noexcept {
    return held_ && held_->lost.load();
}

bool Lock::active() const noexcept {
    return held_ != nullptr;
}

LockInfo Lock::detach() {
    const std::shared_ptr<detail::HeldClaim> held = detail::detach(held_, lock_type);
    LockInfo info;
    info.id = held->ids.front();
    info.name = held->row();
    info.locked_by = held->locked_by;
    info.holder = detail::parse_holder(held->locked_by);
    info.created = held->created;
    info.expires = held->validity.expires();
    return info;
}

void Lock::release() {
    detail::release(held_);
}

}  // namespace sqlock
