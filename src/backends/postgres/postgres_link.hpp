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
//
// The link also hands out libpq's own handle (raw()), for the few statements
// on the lock's hot path that sqlock sends through libpq directly
// (postgres_libpq.hpp): libpqxx 6.4 offers no public way to it, so the
// connection is made with a connection policy that keeps the handle libpq
// gave it. With reactivation off, the handle lives as long as the link.
#pragma once

#include <libpq-fe.h>

#include <memory>
#include <pqxx/connection>
#include <pqxx/errorhandler>

#include "postgres_target.hpp"

namespace sqlock::detail::postgres {

/// libpqxx's direct connection policy, keeping the libpq handle it makes.
class HandleKeepingConnect : public pqxx::connect_direct {
  public:
    explicit HandleKeepingConnect(const std::string& opts) : pqxx::connect_direct(opts) {}
    handle do_completeconnect(handle orig) override;
};

using PgConn = pqxx::basic_connection_base<HandleKeepingConnect>;

class Link {
  public:
    /// Connects now. Throws errc::connection naming the server (never the
    /// password) if that fails.
    explicit Link(const PgTarget& target);
    /// The same to `conninfo` (one host of the target's list, each_host())
    /// instead of the target's own.
    Link(const PgTarget& target, const std::string& conninfo);
    ~Link();
    Link(const Link&) = delete;
    Link& operator=(const Link&) = delete;

    pqxx::connection_base& get() const noexcept { return *conn_; }

    /// libpq's handle of this connection (never null once constructed).
    PGconn* raw() const noexcept { return raw_; }

  private:
    std::unique_ptr<PgConn> conn_;
    std::unique_ptr<pqxx::errorhandler> quiet_;  // destroyed before conn_
    PGconn* raw_ = nullptr;
};

}  // namespace sqlock::detail::postgres
