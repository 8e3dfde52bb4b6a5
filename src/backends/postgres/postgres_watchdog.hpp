// Watchdog — a client-side deadline for libpq calls, which block.
//
// libpq waits for the server's answer without a time limit, and TCP
// keepalives cannot help when the far side's kernel still acknowledges our
// packets (a frozen proxy, a stopped server process). So every round trip is
// armed here with a deadline; if it has not returned by then, the watchdog's
// thread shuts the connection's socket down (shutdown(2), not close: the
// descriptor stays valid and owned by libpq). The blocked call then returns
// at once with a broken connection, which the caller reports as errc::connection
// and the pool discards. The watchdog never touches libpq itself.
//
// Thread safety: arm/disarm from any thread. One watchdog thread per process,
// started on first use (again in a forked child that uses it).
#pragma once

#include <chrono>
#include <cstdint>

namespace sqlock::detail::postgres {

/// Armed
///
/// Arms the watchdog for `fd` until `deadline` for as long as it lives. The
/// descriptor must stay open until the Armed is destroyed (it is: the
/// connection outlives every call made on it).
class Armed {
  public:
    Armed(int fd, std::chrono::steady_clock::time_point deadline);
    ~Armed();
    Armed(const Armed&) = delete;
    Armed& operator=(const Armed&) = delete;

    /// True once the deadline passed and the socket was shut down.
    bool fired() const;

  private:
    std::uint64_t ticket_ = 0;
};

}  // namespace sqlock::detail::postgres
