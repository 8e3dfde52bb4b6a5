// MariaConnection — one pooled connection to the lock table on MariaDB/MySQL.
//
// Each operation is one batch of statements in one round trip (see
// mariadb_statements.hpp), each statement committing on its own. A broken
// link is reported as errc::connection and never silently re-opened: the
// pool then discards this connection and retries once on a new one. Every
// round trip is bounded by the Locker's db_timeout and by set_deadline(),
// whichever comes first (mariadb_link.hpp).
//
// Thread safety: one thread at a time (the pool guarantees it).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "contract/backend.hpp"
#include "contract/tuned_claims.hpp"
#include "mariadb_link.hpp"
#include "mariadb_statements.hpp"
#include "mariadb_target.hpp"

namespace sqlock::detail::mariadb {

class MariaConnection final : public TunedConnection<MariaConnection> {
  public:
    /// `set`: the core's statements for the target's table
    /// (sql::statement_set()), built once and shared by its connections.
    MariaConnection(std::shared_ptr<const MariaTarget> target,
                    std::shared_ptr<const StatementSet> set);

    void set_deadline(clock::time_point deadline) override { deadline_ = deadline; }

    void init_schema() override;
    std::optional<std::string> upgrade_schema() override;
    void check_access() override;

    // The statements tuned for each kind of claim (tuned_claims.hpp).
    SQLOCK_TUNED_CLAIM_CALLS;

    /// A privilege this user lacks: "DELETE", on the lock table or on one
    /// of the tables beside it.
    struct MissingPrivilege {
        std::string privilege;
        std::optional<SideTable> side;  // none: the lock table
    };
    /// The privileges check_access() finds missing, on the lock table and
    /// on each side table in use (one that does not exist is not probed).
    /// Empty: all there.
    std::vector<MissingPrivilege> missing_privileges();
    /// Whether table `quoted` exists, also when information_schema does not
    /// list it (it lists only tables this user has a privilege on): a
    /// statement on it says "no such table" only when it is not there.
    bool table_is_there(const std::string& quoted);
    /// The error of a statement that reads table `quoted` and changes
    /// nothing: 0 when this user may read it.
    unsigned probe_table(const std::string& quoted);
    std::size_t purge_more(std::size_t batch, std::size_t purged) override;
    bool delete_exact(std::int64_t id, const std::string& lockstring,
                      const std::string& locked_by) override;
    Rows query(Query key, const std::vector<Value>& params) override;

    /// How this connection's batches take turns and draw ids
    /// (mariadb_statements.hpp): row turns and the fencing register on
    /// Galera, row turns where the server refused GET_LOCK.
    sql::Protocol protocol() const;
    /// Whether the server is a Galera node.
    bool galera() const noexcept { return link_.galera(); }
    /// On Galera: a commit is certified by the whole primary component.
    bool failover_keeps_commits() const override { return galera(); }
    /// The host of the URL this connection is to ("127.0.0.1:3306").
    std::string host_label() const { return link_.host().label(); }

    /// The server's version string, as it said at connect.
    const std::string& server_version() const noexcept { return link_.server_version(); }
    /// Runs `sql` for the doctor: its results, bounded like every call.
    std::vector<StatementResult> run_sql(const std::string& sql, const char* doing);

  protected:
    /// Probes the table itself (table_is_there()): information_schema
    /// lists only the tables this user has a privilege on.
    bool unlisted_side_table_exists(SideTable table) override;

  private:
    /// The end of the next round trip's time: the db_timeout from now, or
    /// the deadline if sooner.
    clock::time_point limit() const;
    /// On Galera, the statement that makes the batch it begins read what
    /// the cluster had committed when it was sent (wsrep_sync_wait), not
    /// only what this node has applied; "" elsewhere.
    std::string causal() const;
    /// Runs a set's batch (`build`'s, taking the turns of `names`) by `until`:
    /// its last result set is our `expected` rows; on a refusal, rolls back,
    /// gives the turns back and reads the live rows among `rows`.
    SetAcquireResult take_set(const std::function<std::string(const sql::Protocol&)>& build,
                              clock::time_point until, const std::vector<std::string>& names,
                              const std::vector<std::string>& rows, std::size_t expected,
                              bool yield_to_queue, const std::string& what);
    /// Runs an idempotent batch; retried (four times at most) when the
    /// server broke a deadlock by rolling it back.
    std::vector<StatementResult> run(const std::string& sql, const char* doing,
                                     const std::string& subject);
    /// How long a batch may wait for a name's turn: three quarters of the
    /// round trip's bound (the rest is for its statements).
    duration turn_wait() const;
    /// Whether `f`, the failure of a batch built for `used`, is the server
    /// refusing GET_LOCK: the target takes row turns from then on, and the
    /// batch is built again.
    bool turned_away(const Failure& f, const sql::Protocol& used);
    /// A batch built for a protocol and a turn wait.
    using Batch = std::function<std::string(const sql::Protocol&, duration)>;
    /// A shared hold's renewal or release batch (`build`'s): the turn's
    /// answer (its first result set) must be yes, else errc::busy; rolled
    /// back and the turn given back when it fails part-way, and tried again
    /// after a deadlock while the round trip's bound lasts.
    std::vector<StatementResult> run_turned(const Batch& build, const std::string& name,
                                            const char* doing, const std::string& subject);
    /// The same for a batch that takes the turns of `names`.
    std::vector<StatementResult> run_turned(const Batch& build,
                                            const std::vector<std::string>& names,
                                            const char* doing, const std::string& subject);
    /// After a failed acquire batch: rolls back and releases the turn.
    void give_back_turn(const std::string& lockstring, const std::string& what);
    /// Runs an acquisition `batch` (sql::acquire, sql::acquire_slot), built
    /// for the turn wait it is given, retrying a deadlock while the round
    /// trip's bound lasts; the turn is `turn_of`'s. Not acquired when the
    /// turn did not come, a row lock waited too long, or waiters queued
    /// ahead (`gate`).
    /// With `inserted_then_gone`: what to report when the statement before
    /// the read inserted a row (an insert that commits by itself) and the
    /// read found none, given the new row's id.
    AcquireResult run_acquire(
        const std::string& what, const std::string& turn_of, const QueueGate& gate,
        const std::function<std::string(const sql::Protocol&, duration)>& batch,
        const std::function<AcquireResult(std::int64_t)>& inserted_then_gone = nullptr);
    /// run() for a batch with a transaction in it: rolled back if it fails
    /// part-way, so the session never keeps it (and its row locks) open.
    std::vector<StatementResult> run_transaction(const std::string& sql, const char* doing,
                                                 const std::string& subject);

    std::shared_ptr<const MariaTarget> target_;
    clock::time_point deadline_ = clock::time_point::max();
    std::shared_ptr<const StatementSet> set_;  // the core's statements
    Link link_;
};

}  // namespace sqlock::detail::mariadb
