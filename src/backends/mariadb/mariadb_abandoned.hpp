// AbandonedSessions — server sessions this process gave up on mid-statement.
//
// A link that gets no answer by its deadline shuts its socket down
// (mariadb_link.hpp), but the server does not notice until it next reads
// from the socket: it runs on with the batch it was sent, to its COMMIT. A
// retry on a fresh connection that looks for what the first attempt wrote
// (a semaphore slot taken before the answer was lost) could look before that
// commit, take a second slot, and leave the first one held by nobody until
// its lease ends. So an abandoned session is recorded here, and the next
// statement this process sends to the same server ends it first (KILL, then
// wait until it is gone): whatever it was doing is then either committed
// and visible, or rolled back.
//
// Process-wide, because the retry runs on another connection, and possibly
// another Locker, than the one that gave up. Thread-safe.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace sqlock::detail::mariadb {

struct AbandonedSession {
    std::string server;                            // the redacted URL: the server and the account
    unsigned long thread;                          // the server's connection id (CONNECTION_ID())
    std::chrono::steady_clock::time_point opened;  // when the link connected
};

/// Records a session to end before the next statement to its server.
void record_abandoned(AbandonedSession s);

/// True when any session is recorded (one atomic load: the common case).
bool any_abandoned() noexcept;

/// Takes out the sessions recorded for `server`; the caller ends them, or
/// gives back the ones it could not end (record_abandoned).
std::vector<AbandonedSession> take_abandoned(const std::string& server);

}  // namespace sqlock::detail::mariadb
