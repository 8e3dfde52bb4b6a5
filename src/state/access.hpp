// How the core reaches what the public classes hide: a Locker's session
// (the LockerState its locks share), and the held claim behind a Lock or a
// LockSet. Each of those classes has this one friend, so that what is built
// over them (the acquirers, RunHistory, Pauses, Election, the guard) needs
// no friendship of its own, and none of them includes locker.hpp.
#pragma once

#include <memory>

namespace sqlock {
class Locker;
class Lock;
class LockSet;
}  // namespace sqlock

namespace sqlock::detail {

struct LockerState;
struct HeldClaim;

struct Access {
    /// The session of `locker`: never null (a moved-from Locker's is, and
    /// is refused as errc::invalid_argument).
    static const std::shared_ptr<LockerState>& session(const Locker& locker);
    /// The claim behind a handle; null once released or moved from.
    static const std::shared_ptr<HeldClaim>& held(const Lock& lock) noexcept;
    static const std::shared_ptr<HeldClaim>& held(const LockSet& set) noexcept;
    /// A handle over `held`, as an acquirer hands it out.
    static Lock lock(std::shared_ptr<HeldClaim> held);
    static LockSet set(std::shared_ptr<HeldClaim> held);
};

}  // namespace sqlock::detail
