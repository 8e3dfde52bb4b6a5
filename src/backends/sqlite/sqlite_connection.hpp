// SqliteConnection — one connection to the lock table in a SQLite file.
//
// SQLite done right for several processes:
//   - WAL journal, so readers never block the writer and vice versa;
//   - a busy timeout, so writers queue instead of failing;
//   - only single-statement autocommit writes or BEGIN IMMEDIATE
//     transactions: a deferred transaction that upgrades from read to write
//     can fail with SQLITE_BUSY at once, without waiting, which would hand
//     callers errors they did not cause;
//   - prepared statements cached per connection.
//
// Thread safety: one thread at a time (the pool guarantees it).
#pragma once

#include <sqlite3.h>

#include <array>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "contract/backend.hpp"
#include "contract/tuned_claims.hpp"
#include "sqlite_prepared.hpp"
#include "sqlite_statements.hpp"
#include "sqlite_url.hpp"

namespace sqlock::detail::sqlite {

class SqliteConnection final : public TunedConnection<SqliteConnection> {
  public:
    /// `create`: make the file if it is missing (the embedded default, and
    /// Locker::init()); otherwise a missing file is a configuration error, so
    /// a mistyped path never leaves an empty database behind. `set`: the
    /// core's statements for `table` (statement_set()), built once and
    /// shared by the backend's connections.
    SqliteConnection(const SqliteUrl& url, const std::string& table, bool create,
                     std::shared_ptr<const StatementSet> set);

    ~SqliteConnection() override { close(); }

    // The busy wait is the only wait SQLite has: a deadline cuts it short.
    void set_deadline(clock::time_point deadline) override { deadline_ = deadline; }

    void init_schema() override;
    std::optional<std::string> upgrade_schema() override;

    void check_access() override;

    // The statements tuned for each kind of claim (tuned_claims.hpp).
    SQLOCK_TUNED_CLAIM_CALLS;

    /// What doctor can check without the write lock (which would wait for
    /// a busy database): that the file may be written, and (preparing a
    /// statement) that the table has its columns.
    void check_usable_without_writing();

    std::size_t purge_more(std::size_t batch, std::size_t purged) override;

    bool delete_exact(std::int64_t id, const std::string& /*lockstring*/,
                      const std::string& locked_by) override;

    Rows query(Query key, const std::vector<Value>& params) override;

    /// Whether table `name` (unquoted, as given) exists in the file.
    bool has_table(const std::string& name);

    /// Whether the file may be written (SQLite opens it read-only without a
    /// word when it may not).
    bool writable() { return sqlite3_db_readonly(db_, "main") == 0; }

  private:
    // Waits for another connection's write lock up to the busy timeout:
    // 1 ms, 2 ms, then 5 ms at a time. SQLite's own handler sleeps up to
    // 100 ms at a time, so a waiter tends to wake in the middle of the next
    // writer's transaction (a reaper's batches, another process's acquire)
    // and lose again; the reaper pauses at least 6 ms between batches
    // (min_batch_pause) so that a 5 ms sleep ends inside a pause. A
    // waiter waking every 1 ms for as long as it waits, though, keeps every
    // waiter contending: with 8 processes on 2 cores the holder of the write
    // lock, preempted, got a core last (docs/benchmarks.md).
    static int on_busy(void* self, int attempts);
    static constexpr int busy_steps_ms[] = {1, 2, 5};  // then the last, again and again

    // The reaper's pause outlasts the longest busy step (on_busy).
    duration min_batch_pause() const override;

    // BEGIN IMMEDIATE takes the write lock up front (waiting up to the busy
    // timeout), so nothing inside can fail with an un-waited SQLITE_BUSY.
    class Transaction {
      public:
        /// `doing`: what the transaction is for, as errors say it.
        explicit Transaction(SqliteConnection& c,
                             const std::string& doing = "starting a write transaction")
            : c_(c) {
            c_.exec("BEGIN IMMEDIATE", doing);
        }
        void commit(const std::string& doing = "committing") {
            c_.exec("COMMIT", doing);
            done_ = true;
        }
        ~Transaction() {
            if (!done_) sqlite3_exec(c_.db_, "ROLLBACK", nullptr, nullptr, nullptr);
        }

      private:
        SqliteConnection& c_;
        bool done_ = false;
    };

    std::optional<Row> insert(const std::string& lockstring, duration lease,
                              const std::string& locked_by);

    /// Extends the live shared marker of `name` to at least `until` (a
    /// holder row's expiry); false when there is none.
    bool extend_marker(const std::string& name, const std::string& until);

    /// Shrinks the shared marker of `name` to its live holders' latest
    /// expiry, or deletes it when none is left. Inside a transaction.
    void fit_marker(const std::string& name);

    /// Whether a live waiter `gate` names is queued (false for an inactive gate).
    bool waiters_ahead(const QueueGate& gate);
    // Prepared on first use, then reused for the connection's lifetime.
    Prepared prepare(Sql kind);
    /// The statements of `key`'s text, the same way; errors say `doing`.
    const std::vector<sqlite3_stmt*>& prepare(Query key, const std::string& doing);

    void exec(const std::string& sql, const std::string& doing);

    void close() noexcept;

    std::chrono::milliseconds busy_timeout_{10000};
    clock::time_point deadline_ = clock::time_point::max();
    std::chrono::steady_clock::time_point busy_since_{};
    std::string path_;
    Tables tables_;
    std::shared_ptr<const StatementSet> set_;  // the core's statements
    sqlite3* db_ = nullptr;
    std::array<sqlite3_stmt*, static_cast<std::size_t>(Sql::count)> cache_{};
    // The core's statements, prepared on first use: one or more each.
    std::array<std::vector<sqlite3_stmt*>, query_count> set_cache_{};
};

}  // namespace sqlock::detail::sqlite
