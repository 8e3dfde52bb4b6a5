// Link — one MYSQL handle, every round trip bounded by a deadline.
//
// The C connector's own read and write timeouts (set to the Locker's
// db_timeout) bound each wait for the socket, but they are whole seconds and
// cannot be changed once connected. So the link uses the connector's
// non-blocking API (mysql_real_query_start/_cont, ...) and waits for the
// socket itself, with poll(2), until the caller's deadline: a server that has
// not answered by then gets its socket shut down, and the call throws
// errc::connection. A link that failed that way, or lost its server, is
// broken(): it is never used again (the pool discards its connection).
// Reconnecting is off (MYSQL_OPT_RECONNECT): a silent reconnect would lose
// the session's settings and any GET_LOCK it held.
//
// Text protocol, several statements per round trip (CLIENT_MULTI_STATEMENTS):
// every value in a statement is a literal built by mariadb_statements.hpp
// (hex for text), so nothing the caller passes is ever parsed as SQL.
//
// A URL with several hosts (a Galera cluster's nodes) is a list to choose
// from: the link connects to the first that answers and is ready, starting
// at the one this process last reached (mariadb_nodes.hpp), each host
// within its share of the connection's bound (what is left, divided by the
// hosts left to try), so one that does not answer leaves time for the next.
// Ready: any server without Galera; with Galera (wsrep_on), a node that is
// Synced (wsrep_local_state 4) and ready (wsrep_ready ON), read in the same
// round trip as the session's setup. A node found unusable later (it left
// the cluster's primary component: error 1047; it stopped answering) breaks
// the link, and the next connection starts at the next host.
//
// Thread safety: one thread at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mariadb_error.hpp"
#include "mariadb_target.hpp"

struct st_mysql;

namespace sqlock::detail::mariadb {

/// What one statement of a batch gave back.
struct StatementResult {
    bool has_rows = false;  // a result set (SELECT), else an OK packet
    std::vector<std::vector<std::optional<std::string>>> rows;
    std::uint64_t affected = 0;   // rows changed, for an OK packet
    std::uint64_t insert_id = 0;  // the OK packet's LAST_INSERT_ID()
};

/// Host `h`'s name, which sqlock looks up before connecting (bounded;
/// host_resolution.hpp), or "" when the connector is given a socket or an
/// address as it is.
std::string host_to_look_up(const MariaUrl& u, const MariaHost& h);

class Link {
  public:
    using clock = std::chrono::steady_clock;

    /// Connects to the first host of the URL that answers and is ready, and
    /// sets the session up (UTC, strict sql_mode, utf8mb4, lock wait bound),
    /// all by `deadline`. Throws errc::connection (for a host list, naming
    /// what became of each host) or errc::configuration (a refused login).
    Link(const MariaTarget& target, clock::time_point deadline);
    /// Connects to host `node` of the URL's list alone (the doctor's look
    /// at each host): errc::connection when it does not answer or is not
    /// ready, as a connection to the list would find it.
    Link(const MariaTarget& target, std::size_t node, clock::time_point deadline);
    ~Link();
    Link(const Link&) = delete;
    Link& operator=(const Link&) = delete;

    /// Sends `sql` (one or more statements separated by ';') and reads every
    /// result, by `deadline`. On a server error the batch stops there: the
    /// failure is returned in `failure` (when given) with the results so
    /// far, or thrown as sqlock::error (`doing` completes "while ...").
    /// A broken link always throws errc::connection.
    std::vector<StatementResult> run(const std::string& sql, clock::time_point deadline,
                                     const std::string& doing, Failure* failure = nullptr);

    bool broken() const noexcept { return broken_; }
    /// The server answered `f` while `doing`, which makes this node
    /// unusable for now: the link is broken (the next connection starts at
    /// the next host) and errc::connection thrown.
    [[noreturn]] void give_up(const Failure& f, const std::string& doing);
    /// "10.11.6-MariaDB-0+deb12u1", as the server said at connect.
    const std::string& server_version() const noexcept { return server_version_; }
    bool is_mariadb() const noexcept;
    /// Whether the server is a Galera node (wsrep_on in this session).
    bool galera() const noexcept { return galera_; }
    /// The host of the URL this link is connected to.
    const MariaHost& host() const noexcept { return target_.url.hosts[node_]; }

  private:
    /// Connects to host `node` of the URL and sets the session up, by
    /// `deadline`; on failure nothing stays open.
    void open(std::size_t node, clock::time_point deadline);
    /// Makes the handle and connects it to `address` (host `node`'s name,
    /// or one of its addresses); closes it again on failure.
    void connect_to(const std::string& address, clock::time_point deadline);
    /// The server this link's sessions are on, for the sessions it abandons:
    /// the redacted URL, and for a host list the host.
    std::string server_key() const;
    /// A host of a list failed: the next connection starts past it.
    void node_lost() noexcept;
    Failure last_failure() const;
    /// Runs one non-blocking call to completion: `start()` returns the
    /// connector's wait status, `cont(ready)` continues it.
    template <typename Start, typename Cont>
    void drive(Start&& start, Cont&& cont, clock::time_point deadline, const std::string& doing);
    /// Shuts the socket down and throws: no answer by `deadline`.
    [[noreturn]] void abandon(clock::time_point deadline, const std::string& doing);
    /// Ends the sessions this process abandoned on this server (KILL, then
    /// waits until they are gone), before a statement of ours could miss
    /// what they are still writing (mariadb_abandoned.hpp).
    void end_abandoned(clock::time_point deadline);
    [[noreturn]] void fail(const std::string& doing);

    const MariaTarget& target_;
    st_mysql* mysql_ = nullptr;
    bool broken_ = false;
    bool ending_abandoned_ = false;
    bool galera_ = false;
    std::size_t node_ = 0;             // the host of the URL's list
    std::uint64_t node_failures_ = 0;  // its failures in this process when opened
    unsigned long thread_ = 0;         // the server's id of this connection, once connected
    clock::time_point opened_{};
    // When the outermost call under way began: its bound is its deadline
    // minus this, which a late answer's message names.
    clock::time_point began_{};
    bool in_call_ = false;  // a call (or the connection's setup) is under way
    bool in_open_ = false;  // the connection's setup is under way
    std::string server_version_;
};

}  // namespace sqlock::detail::mariadb
