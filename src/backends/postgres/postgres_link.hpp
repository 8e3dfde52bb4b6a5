// Link — one libpqxx connection to the server, opened the way sqlock needs it.
//
// libpqxx 6 silently reconnects ("reactivates") a connection it finds broken
// the next time it is used, and may even re-run a query after a reset. We turn
// that off: a broken link must surface as errc::connection, so that
//   - the core's pool discards the connection and retries once on a fresh one
//     (it knows which operations that is safe for; we do not), and
//   - a LISTEN connection that lost notifications while it was down is noticed
//     and every waiter re-checks, instead of a silent reconnect hiding the gap.
//
// Server notices ("relation already exists, skipping") are dropped: sqlock
// reports through exceptions, and a library must not write to stderr.
#pragma once

#include <memory>
#include <pqxx/connection>
#include <pqxx/errorhandler>

#include "postgres_target.hpp"

namespace sqlock::detail::postgres {

class Link {
  public:
    /// Connects now. Throws errc::connection naming the server (never the
    /// password) if that fails.
    explicit Link(const PgTarget& target);
    ~Link();
    Link(const Link&) = delete;
    Link& operator=(const Link&) = delete;

    pqxx::connection& get() const noexcept { return *conn_; }

  private:
    std::unique_ptr<pqxx::connection> conn_;
    std::unique_ptr<pqxx::errorhandler> quiet_;  // destroyed before conn_
};

}  // namespace sqlock::detail::postgres
