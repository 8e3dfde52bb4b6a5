// sqlock::LockSet: a handle over the held claim of several names' rows
// (held/held_claim.hpp), which renews, releases and reports them together.
#include "sqlock/lock_set.hpp"

#include <algorithm>

#include "base/validate.hpp"
#include "held/held_claim.hpp"
#include "state/access.hpp"

namespace sqlock {
namespace {

constexpr const char* set_type = "sqlock::LockSet";

// The index of `name` in a set's names, or invalid_argument.
std::size_t index_of(const detail::HeldClaim& s, const std::string& name) {
    const std::vector<std::string>& names = s.names();
    auto it = std::lower_bound(names.begin(), names.end(), name);
    if (it == names.end() || *it != name)
        throw error(errc::invalid_argument,
                    "'" + detail::printable(name) + "' is not a name of this " + s.describe());
    return static_cast<std::size_t>(it - names.begin());
}

}  // namespace

LockSet detail::Access::set(std::shared_ptr<HeldClaim> held) {
    return LockSet(std::move(held));
}

const std::shared_ptr<detail::HeldClaim>& detail::Access::held(const LockSet& set) noexcept {
    return set.held_;
}

LockSet::LockSet(std::shared_ptr<detail::HeldClaim> held) : held_(std::move(held)) {}
LockSet::LockSet(LockSet&&) noexcept = default;

LockSet& LockSet::operator=(LockSet&& other) noexcept {
    if (this != &other) {
        detail::release_quietly(held_);
        held_ = std::move(other.held_);
    }
    return *this;
}

LockSet::~LockSet() {
    detail::release_quietly(held_);
}

const std::vector<std::string>& LockSet::names() const {
    return detail::checked(held_, set_type).names();
}

std::size_t LockSet::size() const {
    return detail::checked(held_, set_type).ids.size();
}

std::int64_t LockSet::id(const std::string& name) const {
    const detail::HeldClaim& s = detail::checked(held_, set_type);
    return s.ids[index_of(s, name)];
}

const std::vector<std::int64_t>& LockSet::ids() const {
    return detail::checked(held_, set_type).ids;
}

lock_mode LockSet::mode(const std::string& name) const {
    const detail::HeldClaim& s = detail::checked(held_, set_type);
    return s.claim.entries[index_of(s, name)].shared() ? lock_mode::shared : lock_mode::exclusive;
}

const std::string& LockSet::lockstring(const std::string& name) const {
    const detail::HeldClaim& s = detail::checked(held_, set_type);
    return s.claim.entries[index_of(s, name)].row();
}

const std::string& LockSet::locked_by() const {
    return detail::checked(held_, set_type).locked_by;
}

const std::string& LockSet::owner_token() const {
    return detail::checked(held_, set_type).token;
}

std::string LockSet::expires() const {
    return detail::checked(held_, set_type).validity.expires();
}

std::chrono::steady_clock::time_point LockSet::valid_until() const {
    return detail::checked(held_, set_type).validity.until();
}

std::optional<error> LockSet::renewal_failure() const {
    return detail::checked(held_, set_type).renewal_failure();
}

void LockSet::renew() {
    detail::HeldClaim& held = detail::checked(held_, set_type);
    held.renew(held.lease);
}

void LockSet::renew(duration lease) {
    detail::checked(held_, set_type).renew(lease);
}

bool LockSet::held() const {
    return detail::checked(held_, set_type).is_held();
}

bool LockSet::lost() const noexcept {
    return held_ && held_->lost.load();
}

bool LockSet::active() const noexcept {
    return held_ != nullptr;
}

void LockSet::detach() {
    detail::detach(held_, set_type);
}

void LockSet::release() {
    detail::release(held_);
}

}  // namespace sqlock
