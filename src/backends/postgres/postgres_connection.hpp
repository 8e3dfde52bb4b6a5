// PgConnection — one pooled connection to the lock table on PostgreSQL.
//
// Each operation is one prepared statement in autocommit mode (a
// pqxx::nontransaction sends no BEGIN/COMMIT), so the common case of every
// operation is one round trip; a failed acquisition adds a second, which
// reads the holder. Statements are prepared lazily on first use, once per
// connection: by libpqxx, except the hot path's (acquire, acquire_slot,
// delete_exact), which go through libpq directly (postgres_libpq.hpp says
// why). Through a pooler in transaction or statement mode
// (PgTarget::session_bound() is false), the client's prepared statements do
// not follow it from one server session to the next, but each server session
// keeps what was prepared on it: each statement is then run as the lent
// session's, and prepared there in the same round trip where it is missing
// (exec_kept(), pq_exec_kept(): still one round trip, planned once per server
// session instead of every time).
//
// A broken link is reported as errc::connection (never silently re-opened):
// the pool then discards this connection and retries once on a new one. So
// is a server that does not answer in time: every call is bounded by the
// watchdog (postgres_watchdog.hpp), which abandons the connection.
//
// Thread safety: one thread at a time (the pool guarantees it).
#pragma once

#include <array>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "contract/backend.hpp"
#include "contract/tuned_claims.hpp"
#include "postgres_libpq.hpp"
#include "postgres_link.hpp"
#include "postgres_statements.hpp"
#include "postgres_target.hpp"

namespace sqlock::detail::postgres {

class PgConnection final : public TunedConnection<PgConnection> {
  public:
    /// `core`: the core's statements for the target's table
    /// (core_statements()), built once and shared by its connections.
    PgConnection(std::shared_ptr<const PgTarget> target,
                 std::shared_ptr<const CoreStatements> core);

    void set_deadline(clock::time_point deadline) override { deadline_ = deadline; }

    void init_schema() override;
    std::optional<std::string> upgrade_schema() override;
    void check_access() override;

    // The statements tuned for each kind of claim (tuned_claims.hpp).
    SQLOCK_TUNED_CLAIM_CALLS;
    bool delete_exact(std::int64_t id, const std::string& lockstring,
                      const std::string& locked_by) override;
    Rows query(Query key, const std::vector<Value>& params) override;

  private:
    /// A statement of the hot path, sent through libpq (postgres_libpq.hpp),
    /// whether it is prepared on this connection yet (our own session), and
    /// whether this client connection has sent a Parse of its name (through
    /// a pooler: the pooled path binds only those; pq_exec_kept()). Each
    /// has a name of its own, so these flags are this connection's set of
    /// names parsed, without a lookup.
    struct HotStatement {
        const Statement* st;
        PqFormat format = PqFormat::text;
        bool prepared = false;
        bool parsed = false;
    };

    /// Sends one statement, bounded: `prepared()` while the connection is
    /// our own session, else (and after a pooler's symptom) `pooled()`; a
    /// standby's refusal is told as "read-only".
    template <typename Prepared, typename Pooled>
    auto send(const char* doing, const std::string& subject, Prepared&& prepared, Pooled&& pooled,
              bool watchdog = true) -> decltype(pooled());
    /// A statement through libpqxx: prepared, or kept on the server session
    /// through a pooler.
    template <typename... Args>
    pqxx::result exec(const char* doing, const std::string& subject, const char* statement,
                      Args&&... args);
    /// Statement `name` (text `sql`) through a transaction pooler: the
    /// server session's prepared statement, run by EXECUTE with `arguments`
    /// ("(lit, ...)", or empty), prepared there on a miss in the same round
    /// trip; `unnamed()` after repeated misses (see pq_exec_kept()).
    /// `before`: statements (each ending with ";\n") run first in the same
    /// simple query, one transaction with it.
    template <typename Unnamed>
    pqxx::result exec_kept(const std::string& name, const std::string& sql,
                           const std::string& arguments, Unnamed&& unnamed,
                           const std::string& before = {});
    /// Whether statements are still kept on the server sessions: not once
    /// `most_kept_misses` calls in a row found none there (a pooler that
    /// resets every server session after each transaction, such as
    /// PgBouncer with server_reset_query_always, or a pool far larger than
    /// its use), where each call would pay a miss's round trip: from then
    /// on, this connection sends its statements unnamed.
    bool keeping_statements() const noexcept { return kept_misses_ < most_kept_misses; }
    /// After a kept statement's call: whether its first try missed.
    void note_kept(bool missed) noexcept;
    /// A hot statement through libpq, the same way.
    PqResult exec_direct(const char* doing, const std::string& subject, HotStatement& hot,
                         PqParams params);
    /// A shared hold's values for its statements, quoted for this link.
    SharedValues shared_values(const std::string& name, const std::string& locked_by);
    /// A mixed set's values for its renewal and release (ids[i] is
    /// entries[i].row()'s), without the lease.
    MixedSetValues mixed_values(const std::vector<ClaimEntry>& entries,
                                const std::vector<std::int64_t>& ids, const std::string& locked_by);
    /// One simple query of several statements (shared holds): its last
    /// result.
    pqxx::result exec_simple(const char* doing, const std::string& subject, const std::string& sql);
    /// `sql` as one simple query, the session's settings in front of it
    /// when they are not in place yet.
    pqxx::result exec_with_setup(const std::string& sql);
    /// The session's settings (postgres_session.hpp) as the start of a
    /// message that runs a statement after them: empty once they are in
    /// place, or when the session is not ours (a transaction pooler).
    std::string setup_for_message() const;
    /// Puts them in place in a round trip of their own, when needed: before
    /// a session's first statement, unless that one carried them.
    void set_up_session();
    /// Between two tries of a statement the server rolled back for a lost
    /// race (send()): a short, jittered pause growing with `tries`. Called
    /// in a catch handler: rethrows when the call's bound would pass first.
    void pause_before_resending(int tries);
    /// Whether the server is a standby or read-only; false if that cannot
    /// be told. Only asked on the error path.
    bool read_only();

    /// Runs `f` (one or more round trips) by the target's timeout or the
    /// deadline, whichever comes first (limit_): under the watchdog, or,
    /// without `watchdog`, with f's libpq calls given limit_ themselves.
    template <typename F>
    auto bounded(const char* doing, const std::string& subject, F&& f, bool watchdog = true)
        -> decltype(f());

    std::shared_ptr<const PgTarget> target_;
    Link link_;
    std::map<std::string, Statement> statements_;  // by key (stmt::...)
    std::shared_ptr<const CoreStatements> core_;   // the core's statements, shared
    HotStatement acquire_, acquire_slot_, acquire_gated_, acquire_slot_gated_, acquire_queued_,
        acquire_slot_queued_, delete_exact_, acquire_set_, acquire_set_queued_;
    bool session_set_up_ = false;  // the session's settings are in place
    // Calls in a row whose kept statement the lent server session lacked.
    // A pool of N server sessions costs up to N misses per statement as it
    // warms up, interleaved with other statements' hits or misses: far
    // fewer than this in a row for the pools PgBouncer is run with.
    static constexpr int most_kept_misses = 64;
    int kept_misses_ = 0;
    clock::time_point deadline_ = clock::time_point::max();
    PqDeadline limit_;  // the call under way's, set by bounded()
};

}  // namespace sqlock::detail::postgres
