// SQLite done right for several processes:
//   - WAL journal, so readers never block the writer and vice versa;
//   - a busy timeout, so writers queue instead of failing;
//   - only single-statement autocommit writes or BEGIN IMMEDIATE
//     transactions: a deferred transaction that upgrades from read to write
//     can fail with SQLITE_BUSY at once, without waiting, which would hand
//     callers errors they did not cause;
//   - prepared statements cached per connection.
#include "sqlite_backend.hpp"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iterator>

#include "backend_module.hpp"
#include "schema.hpp"
#include "sqlite_error.hpp"
#include "sqlite_statement.hpp"
#include "sqlite_url.hpp"
#include "sqlock/error.hpp"
#include "validate.hpp"

namespace sqlock::detail {

extern const char* const sqlite_schema_sql;  // sql/sqlite/schema.sql, compiled in

namespace {

using sqlite::Statement;

// 'now' is fixed for the duration of one sqlite3_step(), so every time in a
// statement agrees.
constexpr const char* now_sql = "strftime('%Y-%m-%d %H:%M:%f','now')";
constexpr const char* columns_sql =
    "id, lockstring, created, expires, locked_by, "
    "round((julianday(expires) - julianday('now')) * 86400000.0) / 1000.0";

// A lease as an SQLite date modifier: "+3600.250 seconds".
std::string seconds_modifier(duration d) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "+%lld.%03lld seconds", static_cast<long long>(d.count() / 1000),
                  static_cast<long long>(d.count() % 1000));
    return buf;
}

Row read_row(const Statement& st) {
    Row r;
    r.id = st.column_int64(0);
    r.lockstring = st.column_text(1);
    r.created = st.column_text(2);
    r.expires = st.column_text(3);
    r.locked_by = st.column_text(4);
    r.seconds_left = st.column_double(5);
    return r;
}

// The path names no file at all (as opposed to a file that exists but cannot
// be opened, e.g. for its permissions).
bool file_missing(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) != 0 && (errno == ENOENT || errno == ENOTDIR);
}

// The directory a file path is in ("." for a bare name).
std::string parent_directory(const std::string& path) {
    const auto slash = path.find_last_of('/');
    if (slash == std::string::npos) return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

void make_private_directory(const std::string& path) {
    // mkdir -p with mode 0700 for every component we create.
    std::size_t pos = 1;
    while ((pos = path.find('/', pos)) != std::string::npos) {
        std::string dir = path.substr(0, pos);
        if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
            throw error(errc::configuration, "cannot create directory '" + text::printable(dir) +
                                                 "': " + std::strerror(errno));
        ++pos;
    }
}

// Every statement the backend runs; texts are built once per connection.
enum class sql {
    insert,
    delete_expired,
    keep_until_min_hold,
    renew,
    is_held,
    purge_batch,
    list,
    find,
    delete_exact,
    insert_lowest_slot,
    delete_expired_slots,
    first_to_expire_slot,
    odd_expired_ids,
    delete_id_if_dead,
    has_history,
    now_millis,
    start_run,
    finish_run,
    window_runs,
    history_all,
    history_name,
    last_success,
    run_counts,
    lock_counts,
    prune_runs,
    lose_purged_runs,
    has_pauses,
    pause,
    resume,
    pause_in_force,
    paused,
    pauses,
    count_runs,
    purge_pauses,
    count_pauses,
    count
};

// Whether a row still counts, for per-row checks. julianday() also reads
// timestamps other programs write (ISO 'T' separator, no fraction) and is
// NULL for text that is no time at all: such a row counts as expired, so it
// can be taken over and reaped instead of blocking forever.
constexpr const char* live = "julianday(expires) > julianday('now')";
constexpr const char* dead = "coalesce(julianday(expires) <= julianday('now'), 1)";
// Whether a pause is in force.
constexpr const char* pause_live =
    "(paused_until IS NULL OR julianday(paused_until) > julianday('now'))";
// Whether a pause has ended: exactly the rows pause_live leaves out (an
// until no date function can read is not in force, so it is reaped too).
constexpr const char* pause_ended =
    "(paused_until IS NOT NULL AND coalesce(julianday(paused_until) <= julianday('now'), 1))";

// The columns of a run (see read_run()), from `where` of the runs `r` joined
// to their lock rows `l`. A run still marked running whose lock row is gone
// or expired reads as lost, ended at the row's expiry while it is there.
std::string runs_select(const std::string& t, const std::string& r, const std::string& where,
                        bool newest_first) {
    const std::string order = newest_first ? "started DESC, id DESC" : "started, id";
    const std::string inner =
        newest_first ? "r.started DESC, r.id DESC LIMIT ?2" : "r.started, r.id";
    return "SELECT id, name, window_start, host, pid, username, program, fencing_id, started,"
           " CASE WHEN outcome <> 'running' THEN ended WHEN lid IS NULL OR llive THEN NULL"
           " ELSE lexp END,"
           " CASE WHEN outcome <> 'running' THEN outcome WHEN llive THEN 'running'"
           " ELSE 'lost' END, exit_status, exit_signal,"
           " round((julianday(CASE WHEN outcome <> 'running' THEN ended WHEN llive THEN 'now'"
           " ELSE lexp END) - julianday(started)) * 86400000.0) / 1000.0"
           " FROM (SELECT r.*, l.id AS lid, l.expires AS lexp,"
           " julianday(l.expires) > julianday('now') AS llive FROM " +
           r + " AS r LEFT JOIN " + t + " AS l ON l.id = r.fencing_id WHERE " + where +
           " ORDER BY " + inner + ") ORDER BY " + order;
}

// The runs of history table `r` (as "r") that pruning deletes: started
// before now + ?1 (a negative modifier), not still going on under a live
// lock row of `t`, and not a --once-per run whose window may still be
// current (windows are at most 366 days): pruning the run that did the
// window would let its job run again in it.
std::string prunable_runs(const std::string& t) {
    return "r.started < strftime('%Y-%m-%d %H:%M:%f','now', ?1) AND NOT"
           " (r.outcome = 'running' AND EXISTS (SELECT 1 FROM " +
           t +
           " AS l WHERE l.id = r.fencing_id AND julianday(l.expires) > julianday('now')))"
           " AND (r.window_start IS NULL OR"
           " r.window_start < strftime('%Y-%m-%d %H:%M:%f','now','-366 days'))";
}

std::string sql_text(sql kind, const std::string& t, const std::string& r, const std::string& p) {
    const std::string now = now_sql;
    const std::string cols = columns_sql;
    switch (kind) {
        case sql::insert:
            return "INSERT INTO " + t + " (lockstring, created, expires, locked_by) VALUES (?1, " +
                   now + ", strftime('%Y-%m-%d %H:%M:%f','now', ?2), ?3)" +
                   " ON CONFLICT (lockstring) DO NOTHING RETURNING id, created, expires";
        case sql::delete_expired:
            return "DELETE FROM " + t + " WHERE lockstring = ?1 AND " + dead;
        case sql::keep_until_min_hold:
            return "UPDATE " + t + " SET expires = strftime('%Y-%m-%d %H:%M:%f', created, ?3)" +
                   " WHERE id = ?1 AND locked_by = ?2" +
                   " AND strftime('%Y-%m-%d %H:%M:%f', created, ?3) > " + now;
        case sql::renew:
            return "UPDATE " + t + " SET expires = strftime('%Y-%m-%d %H:%M:%f','now', ?3)" +
                   " WHERE id = ?1 AND locked_by = ?2 AND " + live + " RETURNING " + cols;
        case sql::is_held:
            return "SELECT 1 FROM " + t + " WHERE id = ?1 AND locked_by = ?2 AND " + live;
        case sql::purge_batch:
            return "DELETE FROM " + t + " WHERE id IN (SELECT id FROM " + t +
                   " WHERE expires <= " + now + " LIMIT ?1)";
        case sql::list:
            // substr() compares the prefix literally: no LIKE wildcards to escape.
            return "SELECT " + cols + " FROM " + t +
                   " WHERE (?1 = '' OR substr(lockstring, 1, length(?1)) = ?1)" +
                   " AND (?2 = 0 OR " + dead + ") ORDER BY lockstring";
        case sql::find:
            return "SELECT " + cols + " FROM " + t + " WHERE lockstring = ?1";
        case sql::delete_exact:
            // coalesce: rows written by other programs may have a NULL locked_by.
            return "DELETE FROM " + t + " WHERE id = ?1 AND coalesce(locked_by, '') = ?2";
        case sql::insert_lowest_slot:
            // Slots 1..?2 of semaphore ?1, lowest free first. If the lowest
            // one not held is an expired row, this conflicts and inserts
            // nothing; the caller then reclaims expired slots and retries.
            return "WITH RECURSIVE slot(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM slot"
                   " WHERE n < ?2) INSERT INTO " +
                   t + " (lockstring, created, expires, locked_by) SELECT ?1 || '#' || n, " + now +
                   ", strftime('%Y-%m-%d %H:%M:%f','now', ?3), ?4 FROM slot WHERE NOT EXISTS"
                   " (SELECT 1 FROM " +
                   t + " WHERE lockstring = ?1 || '#' || n AND " + live +
                   ") ORDER BY n LIMIT 1 ON CONFLICT (lockstring) DO NOTHING RETURNING " + cols;
        case sql::delete_expired_slots:
            return "WITH RECURSIVE slot(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM slot"
                   " WHERE n < ?2) DELETE FROM " +
                   t + " WHERE lockstring IN (SELECT ?1 || '#' || n FROM slot) AND " + dead;
        case sql::first_to_expire_slot:
            return "WITH RECURSIVE slot(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM slot"
                   " WHERE n < ?2) SELECT " +
                   cols + " FROM " + t +
                   " WHERE lockstring IN (SELECT ?1 || '#' || n FROM slot)"
                   " ORDER BY expires LIMIT 1";
        case sql::odd_expired_ids:
            // Rows that are expired by their time but not by text comparison
            // (written by other programs: ISO 'T' separators, invalid dates,
            // garbage) cannot be found through the index. A read scan, done
            // outside the write lock, once per purge.
            return "SELECT id FROM " + t + " WHERE NOT coalesce(expires <= " + now + ", 0) AND " +
                   dead + " LIMIT ?1";
        case sql::delete_id_if_dead:
            return "DELETE FROM " + t + " WHERE id = ?1 AND " + dead;
        case sql::has_history:
            return "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1";
        case sql::now_millis:
            // 'now' is one instant within the statement: seconds, then its
            // milliseconds ("SS.SSS" from the 4th character).
            return "SELECT CAST(strftime('%s','now') AS INTEGER) * 1000 +"
                   " CAST(substr(strftime('%f','now'), 4) AS INTEGER)";
        case sql::start_run:
            return "INSERT INTO " + r +
                   " (name, window_start, host, pid, username, program, fencing_id, started,"
                   " outcome) VALUES (?1, NULLIF(?2, ''), ?3, ?4, ?5, ?6, ?7, " +
                   now + ", 'running') RETURNING id";
        case sql::finish_run:
            // One statement under SQLite's write lock: nobody takes the lock
            // over between the check and the record.
            return "UPDATE " + r + " SET ended = " + now +
                   ", exit_status = ?4, exit_signal = ?5, outcome = CASE WHEN EXISTS (SELECT 1"
                   " FROM " +
                   t + " WHERE id = ?2 AND locked_by = ?3 AND " + live +
                   ") THEN ?6 ELSE 'lost' END WHERE id = ?1 AND outcome = 'running'"
                   " RETURNING outcome";
        case sql::window_runs:
            return runs_select(t, r, "r.name = ?1 AND r.window_start = ?2 AND r.started >= ?2",
                               false);
        case sql::history_all:
            return runs_select(t, r, "r.started >= strftime('%Y-%m-%d %H:%M:%f','now', ?1)", true);
        case sql::history_name:
            return runs_select(
                t, r, "r.name = ?3 AND r.started >= strftime('%Y-%m-%d %H:%M:%f','now', ?1)", true);
        case sql::last_success:
            return runs_select(t, r, "r.name = ?1 AND r.outcome = 'succeeded'", true);
        case sql::run_counts:
            return "SELECT r.name, CASE WHEN r.outcome <> 'running' THEN r.outcome WHEN"
                   " julianday(l.expires) > julianday('now') THEN 'running' ELSE 'lost' END,"
                   " COUNT(*) FROM " +
                   r + " AS r LEFT JOIN " + t +
                   " AS l ON l.id = r.fencing_id GROUP BY 1, 2 ORDER BY 1, 2";
        case sql::lock_counts:
            return std::string("SELECT COALESCE(SUM(CASE WHEN ") + live +
                   " THEN 1 ELSE 0 END), 0), COUNT(*) FROM " + t;
        case sql::prune_runs:
            return "DELETE FROM " + r + " WHERE id IN (SELECT r.id FROM " + r + " AS r WHERE " +
                   prunable_runs(t) + " LIMIT ?2)";
        case sql::count_runs:
            return "SELECT COUNT(*) FROM " + r + " AS r WHERE " + prunable_runs(t);
        case sql::lose_purged_runs:
            // Before purge_batch, in its transaction: the runs of the rows it
            // is about to delete end with their lease.
            return "UPDATE " + r + " SET outcome = 'lost', ended = (SELECT l.expires FROM " + t +
                   " AS l WHERE l.id = " + r +
                   ".fencing_id) WHERE outcome = 'running' AND"
                   " fencing_id IN (SELECT id FROM " +
                   t + " WHERE expires <= " + now + " LIMIT ?1)";
        case sql::has_pauses:
            return "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1";
        case sql::pause:
            return "INSERT INTO " + p +
                   " (name, paused_by, reason, created, paused_until) VALUES (?1, ?2, ?3, " + now +
                   ", CASE WHEN ?4 = '' THEN NULL ELSE strftime('%Y-%m-%d %H:%M:%f','now', ?4)"
                   " END) ON CONFLICT (name) DO UPDATE SET paused_by = excluded.paused_by,"
                   " reason = excluded.reason, created = excluded.created,"
                   " paused_until = excluded.paused_until"
                   " RETURNING name, paused_by, reason, created, paused_until";
        case sql::resume:
            return "DELETE FROM " + p + " WHERE name = ?1";
        case sql::pause_in_force:
            return "SELECT 1 FROM " + p + " WHERE name = ?1 AND " + pause_live;
        case sql::paused:
            return "SELECT name, paused_by, reason, created, paused_until FROM " + p +
                   " WHERE name = ?1 AND " + pause_live;
        case sql::pauses:
            return "SELECT name, paused_by, reason, created, paused_until FROM " + p + " WHERE " +
                   pause_live + " ORDER BY name";
        case sql::purge_pauses:
            // One statement under SQLite's write lock: a pause renewed
            // before it runs is live again and stays.
            return "DELETE FROM " + p + " WHERE name IN (SELECT name FROM " + p + " WHERE " +
                   pause_ended + " LIMIT ?1)";
        case sql::count_pauses:
            return "SELECT COUNT(*) FROM " + p + " WHERE " + pause_ended;
        case sql::count:
            break;
    }
    return {};
}

class SqliteConnection final : public Connection {
  public:
    /// `create`: make the file if it is missing (the embedded default, and
    /// Locker::init()); otherwise a missing file is a configuration error, so
    /// a mistyped path never leaves an empty database behind.
    SqliteConnection(const SqliteUrl& url, const std::string& table, bool create)
        : path_(url.path),
          table_(quote_table_name(table)),
          index_(quote_table_name(table_basename(table) + "_expires_idx")),
          runs_name_(runs_table_name(table)),
          runs_(quote_table_name(runs_name_)),
          pauses_name_(pauses_table_name(table)),
          pauses_(quote_table_name(pauses_name_)) {
        // Bad parameters are reported before any file is touched.
        long busy_ms = 10000;
        auto it = url.params.find("busy_timeout");
        if (it != url.params.end()) {
            char* end = nullptr;
            busy_ms = std::strtol(it->second.c_str(), &end, 10);
            if (it->second.empty() || *end || busy_ms < 0 || busy_ms > 3600000) {
                throw error(errc::invalid_argument,
                            "busy_timeout must be milliseconds between 0 and 3600000");
            }
        }
        for (const auto& [key, value] : url.params) {
            if (key != "busy_timeout") {
                throw error(errc::invalid_argument, "unknown SQLite URL parameter '" +
                                                        printable(key) + "' (known: busy_timeout)");
            }
        }
        if (url.is_embedded_default) {
            make_private_directory(path_);
            int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
            if (fd >= 0) ::close(fd);
        }
        // A directory is a mistake in the URL, not an unreachable database;
        // SQLite would only fail later, on the journal, with SQLITE_CANTOPEN.
        struct stat st {};
        if (::stat(path_.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
            throw error(errc::configuration,
                        "'" + text::printable(path_) +
                            "' is a directory, not a SQLite file; name a file in it, e.g. "
                            "sqlite://" +
                            text::printable(path_.back() == '/' ? path_ : path_ + "/") + "locks.db",
                        "SQLITE_CANTOPEN");
        int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (create ? SQLITE_OPEN_CREATE : 0);
        int rc = sqlite3_open_v2(path_.c_str(), &db_, flags, nullptr);
        if (rc != SQLITE_OK) {
            std::string msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
            sqlite3_close_v2(db_);
            db_ = nullptr;
            // A local file is never "unreachable" (exit 69, "try again
            // later"): a directory that is not there, or one this user may
            // not open or write, is a setting to fix.
            const std::string dir = parent_directory(path_);
            if (file_missing(dir))
                throw error(errc::configuration,
                            (create ? "cannot create SQLite database '" : "no lock database at '") +
                                text::printable(path_) + "': the directory '" +
                                text::printable(dir) + "' does not exist" +
                                (create ? "" : " (create it, then run `sqlock init`)"),
                            sqlite::code_name(rc));
            if (!create && file_missing(path_))
                throw error(errc::configuration,
                            "no lock database at '" + text::printable(path_) +
                                "' (the SQLite file does not exist); create it with `sqlock "
                                "init` or Locker::init()",
                            sqlite::code_name(rc));
            if (::access(path_.c_str(), R_OK | W_OK) != 0 && errno == EACCES)
                throw error(errc::configuration,
                            "no permission to open SQLite database '" + text::printable(path_) +
                                "' for reading and writing: " + msg,
                            sqlite::code_name(rc));
            if (rc == SQLITE_CANTOPEN && file_missing(path_) &&
                ::access(dir.c_str(), W_OK | X_OK) != 0 && errno == EACCES)
                throw error(errc::configuration,
                            "cannot create SQLite database '" + text::printable(path_) +
                                "': no permission to create files in '" + text::printable(dir) +
                                "'",
                            sqlite::code_name(rc));
            throw error(rc == SQLITE_CANTOPEN ? errc::configuration : errc::backend,
                        "cannot open SQLite database '" + text::printable(path_) + "': " + msg,
                        sqlite::code_name(rc));
        }
        sqlite::set_error_database_name(db_, "SQLite database '" + text::printable(path_) + "'");
        sqlite3_extended_result_codes(db_, 1);
        busy_timeout_ = std::chrono::milliseconds(busy_ms);
        sqlite3_busy_handler(db_, &SqliteConnection::on_busy, this);
        // A short process (`sqlock run`) would otherwise checkpoint and delete
        // the WAL on every exit and re-create it on the next start: four
        // fsyncs per run. The WAL keeps its commits; regular auto-checkpoints
        // still bound its size. They stay at SQLite's 1000 pages, although
        // the first process to open the file reads the whole WAL (up to
        // 4 MB, about 1 ms of a `sqlock run`): at 64 pages one client's
        // acquire+release rate fell from 5,900 to 1,800 a second, the
        // checkpoints' fsyncs (docs/benchmarks.md).
        sqlite3_db_config(db_, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
        try {
            exec("PRAGMA journal_mode=WAL", "enabling WAL");
            exec("PRAGMA synchronous=NORMAL", "setting synchronous");
        } catch (...) {
            close();
            throw;
        }
    }

    ~SqliteConnection() override { close(); }

    // The busy wait is the only wait SQLite has: a deadline cuts it short.
    void set_deadline(clock::time_point deadline) override { deadline_ = deadline; }

    void init_schema() override {
        std::string sql = substitute(sqlite_schema_sql, "table", table_);
        sql = substitute(sql, "index", index_);
        sql = substitute(sql, "runs", runs_);
        sql = substitute(sql, "pauses", pauses_);
        for (const char* what : {"name", "started", "fencing"})
            sql = substitute(sql, std::string("runs_") + what + "_idx",
                             quote_table_name(runs_index_name(runs_name_, what)));
        exec(sql, "creating the lock table");
    }

    void check_access() override {
        check_usable_without_writing();
        // Taking the write lock proves the journal files can be written too;
        // the transaction is rolled back, so nothing changes.
        Transaction probe(*this);
    }

    /// What doctor can check without the write lock (which would wait for
    /// a busy database): that the file may be written, and (preparing a
    /// statement) that the table has its columns.
    void check_usable_without_writing() {
        // SQLite opens a file it may not write read-only, without a word.
        if (sqlite3_db_readonly(db_, "main") == 1)
            throw error(errc::configuration,
                        "SQLite database '" + text::printable(path_) +
                            "' is read-only for this user: sqlock needs to write it (and to "
                            "create its -wal and -shm files beside it)",
                        "SQLITE_READONLY");
        prepare(sql::is_held);
    }

    AcquireResult try_acquire(const std::string& lockstring, duration lease,
                              const std::string& locked_by) override {
        // Common case: the name is free; one autocommit statement.
        if (auto row = insert(lockstring, lease, locked_by)) return {std::move(row), {}};
        // Held: take it over if expired, atomically, under the write lock.
        Transaction tx(*this);
        {
            Statement del = prepare(sql::delete_expired);
            del.bind(1, lockstring).step();
        }
        AcquireResult result;
        if (sqlite3_changes(db_) > 0) result.acquired = insert(lockstring, lease, locked_by);
        if (!result.acquired) result.holder = find(lockstring);
        tx.commit();
        return result;
    }

    AcquireResult try_acquire_slot(const std::string& name, int capacity, duration lease,
                                   const std::string& locked_by, int* slot_out) override {
        // One statement takes the lowest free slot: a write statement holds
        // SQLite's write lock from its first read, so "lowest free" cannot
        // change under it.
        auto took = [&]() -> std::optional<Row> {
            Statement st = prepare(sql::insert_lowest_slot);
            st.bind(1, name).bind(2, static_cast<std::int64_t>(capacity));
            st.bind(3, seconds_modifier(lease)).bind(4, locked_by);
            if (!st.step()) return std::nullopt;
            Row row = read_row(st);
            while (st.step()) {
            }
            return row;
        };
        auto done = [&](Row row) {
            *slot_out = slot_number(row.lockstring, name, capacity);
            return AcquireResult{std::move(row), {}};
        };
        if (auto row = took()) return done(std::move(*row));
        // All taken: reclaim expired slots, then try again, atomically.
        Transaction tx(*this);
        {
            Statement del = prepare(sql::delete_expired_slots);
            del.bind(1, name).bind(2, static_cast<std::int64_t>(capacity)).step();
        }
        std::optional<Row> row;
        if (sqlite3_changes(db_) > 0) row = took();
        AcquireResult result;
        if (row) {
            tx.commit();
            return done(std::move(*row));
        }
        Statement first = prepare(sql::first_to_expire_slot);
        first.bind(1, name).bind(2, static_cast<std::int64_t>(capacity));
        if (first.step()) result.holder = read_row(first);
        while (first.step()) {
        }
        tx.commit();
        return result;
    }

    ReleaseOutcome release(std::int64_t id, const std::string& lockstring,
                           const std::string& locked_by, duration min_hold) override {
        if (min_hold > duration::zero()) {
            Statement keep = prepare(sql::keep_until_min_hold);
            keep.bind(1, id).bind(2, locked_by).bind(3, seconds_modifier(min_hold)).step();
            if (sqlite3_changes(db_) > 0) return ReleaseOutcome::kept;
        }
        return delete_exact(id, lockstring, locked_by) ? ReleaseOutcome::released
                                                       : ReleaseOutcome::lost;
    }

    std::optional<Row> renew(std::int64_t id, const std::string& locked_by,
                             duration lease) override {
        Statement st = prepare(sql::renew);
        st.bind(1, id).bind(2, locked_by).bind(3, seconds_modifier(lease));
        if (!st.step()) return std::nullopt;
        Row row = read_row(st);
        while (st.step()) {
        }
        return row;
    }

    bool is_held(std::int64_t id, const std::string& locked_by) override {
        Statement st = prepare(sql::is_held);
        st.bind(1, id).bind(2, locked_by);
        return st.step();
    }

    std::size_t purge_expired_batch(std::size_t batch) override {
        std::size_t purged;
        {
            // With a history, the runs of the rows go with them, atomically.
            std::optional<Transaction> tx;
            if (has_history()) {
                tx.emplace(*this);
                Statement lose = prepare(sql::lose_purged_runs);
                lose.bind(1, static_cast<std::int64_t>(batch)).step();
            }
            Statement st = prepare(sql::purge_batch);
            st.bind(1, static_cast<std::int64_t>(batch)).step();
            purged = static_cast<std::size_t>(sqlite3_changes(db_));
            if (tx) tx->commit();
        }
        if (purged == batch) return purged;
        // The indexed rows are done; now the odd ones, found by a read scan.
        std::vector<std::int64_t> ids;
        {
            Statement scan = prepare(sql::odd_expired_ids);
            scan.bind(1, static_cast<std::int64_t>(batch - purged));
            while (scan.step()) ids.push_back(scan.column_int64(0));
        }
        if (ids.empty()) return purged;
        Transaction tx(*this);
        for (std::int64_t id : ids) {
            Statement del = prepare(sql::delete_id_if_dead);
            del.bind(1, id).step();
            purged += static_cast<std::size_t>(sqlite3_changes(db_));
        }
        tx.commit();
        return purged;
    }

    std::vector<Row> list(const std::string& prefix, bool expired_only) override {
        Statement st = prepare(sql::list);
        st.bind(1, prefix).bind(2, static_cast<std::int64_t>(expired_only ? 1 : 0));
        std::vector<Row> rows;
        while (st.step()) rows.push_back(read_row(st));
        return rows;
    }

    std::optional<Row> find(const std::string& lockstring) override {
        Statement st = prepare(sql::find);
        st.bind(1, lockstring);
        if (!st.step()) return std::nullopt;
        return read_row(st);
    }

    bool delete_exact(std::int64_t id, const std::string& /*lockstring*/,
                      const std::string& locked_by) override {
        Statement st = prepare(sql::delete_exact);
        st.bind(1, id).bind(2, locked_by).step();
        return sqlite3_changes(db_) > 0;
    }

    bool has_history() override {
        if (history_known_) return true;
        Statement st = prepare(sql::has_history);
        st.bind(1, table_basename(runs_name_));
        history_known_ = st.step();  // once there, it stays (tables are never dropped)
        return history_known_;
    }

    std::int64_t now_millis() override {
        Statement st = prepare(sql::now_millis);
        st.step();
        return st.column_int64(0);
    }

    std::int64_t start_run(const std::string& name, std::int64_t fencing_id, const RunStart& info,
                           const std::string& window_start) override {
        Statement st = prepare(sql::start_run);
        st.bind(1, name).bind(2, window_start).bind(3, info.host).bind(4, info.pid);
        st.bind(5, info.user).bind(6, info.program).bind(7, fencing_id);
        st.step();
        std::int64_t id = st.column_int64(0);
        while (st.step()) {
        }
        return id;
    }

    std::optional<run_outcome> finish_run(std::int64_t run_id, std::int64_t fencing_id,
                                          const std::string& locked_by,
                                          const RunEnd& end) override {
        Statement st = prepare(sql::finish_run);
        st.bind(1, run_id).bind(2, fencing_id).bind(3, locked_by);
        if (end.exit_status)
            st.bind(4, static_cast<std::int64_t>(*end.exit_status));
        else
            st.bind_null(4);
        if (end.signal)
            st.bind(5, static_cast<std::int64_t>(*end.signal));
        else
            st.bind_null(5);
        st.bind(6, std::string(to_string(end.outcome)));
        if (!st.step()) return std::nullopt;
        auto outcome = parse_run_outcome(st.column_text(0));
        while (st.step()) {
        }
        return outcome;
    }

    std::vector<RunRecord> window_runs(const std::string& name,
                                       const std::string& window_start) override {
        Statement st = prepare(sql::window_runs);
        st.bind(1, name).bind(2, window_start);
        return read_runs(st);
    }

    std::vector<RunRecord> history(const std::string& name, duration since,
                                   std::size_t limit) override {
        // "All" reaches back a century, so one statement serves both.
        const std::string back =
            since > duration::zero() ? "-" + seconds_modifier(since).substr(1) : "-36600 days";
        Statement st = prepare(name.empty() ? sql::history_all : sql::history_name);
        st.bind(1, back).bind(2, static_cast<std::int64_t>(limit));
        if (!name.empty()) st.bind(3, name);
        return read_runs(st);
    }

    std::optional<RunRecord> last_success(const std::string& name) override {
        Statement st = prepare(sql::last_success);
        st.bind(1, name).bind(2, std::int64_t{1});
        auto runs = read_runs(st);
        if (runs.empty()) return std::nullopt;
        return std::move(runs.front());
    }

    std::vector<RunCount> run_counts() override {
        Statement st = prepare(sql::run_counts);
        std::vector<RunCount> counts;
        while (st.step()) {
            auto outcome = parse_run_outcome(st.column_text(1));
            if (!outcome) continue;  // a value another program wrote
            counts.push_back({st.column_text(0), *outcome, st.column_int64(2)});
        }
        return counts;
    }

    LockCounts lock_counts() override {
        Statement st = prepare(sql::lock_counts);
        LockCounts counts;
        if (st.step()) {
            counts.held = st.column_int64(0);
            counts.expired = st.column_int64(1) - counts.held;
        }
        return counts;
    }

    std::size_t prune_history_batch(duration retention, std::size_t batch) override {
        Statement st = prepare(sql::prune_runs);
        st.bind(1, "-" + seconds_modifier(retention).substr(1));
        st.bind(2, static_cast<std::int64_t>(batch)).step();
        return static_cast<std::size_t>(sqlite3_changes(db_));
    }

    /// Whether table `name` (unquoted, as given) exists in the file.
    bool has_table(const std::string& name) {
        Statement st = prepare(sql::has_history);  // any table, by name
        st.bind(1, table_basename(name));
        return st.step();
    }

    /// Whether the file may be written (SQLite opens it read-only without a
    /// word when it may not).
    bool writable() { return sqlite3_db_readonly(db_, "main") == 0; }

    std::size_t count_prunable_runs(duration retention) override {
        Statement st = prepare(sql::count_runs);
        st.bind(1, "-" + seconds_modifier(retention).substr(1));
        st.step();
        return static_cast<std::size_t>(st.column_int64(0));
    }

    std::size_t purge_expired_pauses_batch(std::size_t batch) override {
        Statement st = prepare(sql::purge_pauses);
        st.bind(1, static_cast<std::int64_t>(batch)).step();
        return static_cast<std::size_t>(sqlite3_changes(db_));
    }

    std::size_t count_expired_pauses() override {
        Statement st = prepare(sql::count_pauses);
        st.step();
        return static_cast<std::size_t>(st.column_int64(0));
    }

    bool has_pauses() override {
        if (pauses_known_) return true;
        Statement st = prepare(sql::has_pauses);
        st.bind(1, table_basename(pauses_name_));
        pauses_known_ = st.step();  // once there, it stays
        return pauses_known_;
    }

    PauseInfo pause(const std::string& name, const std::string& paused_by,
                    const std::string& reason, std::optional<duration> for_) override {
        Statement st = prepare(sql::pause);
        st.bind(1, name).bind(2, paused_by).bind(3, reason);
        st.bind(4, for_ ? seconds_modifier(*for_) : std::string());
        st.step();
        PauseInfo p = read_pause(st);
        while (st.step()) {
        }
        return p;
    }

    bool resume(const std::string& name) override {
        // Under the write lock: whether it was in force, then gone. (A
        // RETURNING of that condition reads NULL on SQLite 3.40.)
        Transaction tx(*this);
        bool live;
        {
            Statement st = prepare(sql::pause_in_force);
            st.bind(1, name);
            live = st.step();
            while (st.step()) {
            }
        }
        Statement del = prepare(sql::resume);
        del.bind(1, name).step();
        tx.commit();
        return live;
    }

    std::optional<PauseInfo> paused(const std::string& name) override {
        Statement st = prepare(sql::paused);
        st.bind(1, name);
        if (!st.step()) return std::nullopt;
        PauseInfo p = read_pause(st);
        while (st.step()) {
        }
        return p;
    }

    std::vector<PauseInfo> pauses() override {
        Statement st = prepare(sql::pauses);
        std::vector<PauseInfo> all;
        while (st.step()) all.push_back(read_pause(st));
        return all;
    }

  private:
    static PauseInfo read_pause(const Statement& st) {
        PauseInfo p;
        p.name = st.column_text(0);
        p.paused_by = st.column_text(1);
        p.reason = st.column_text(2);
        p.created = st.column_text(3);
        if (!st.column_null(4)) p.until = st.column_text(4);
        return p;
    }

    static std::vector<RunRecord> read_runs(Statement& st) {
        std::vector<RunRecord> runs;
        while (st.step()) {
            RunRecord r;
            r.id = st.column_int64(0);
            r.name = st.column_text(1);
            if (!st.column_null(2)) r.window_start = st.column_text(2);
            r.host = st.column_text(3);
            r.pid = st.column_int64(4);
            r.user = st.column_text(5);
            r.program = st.column_text(6);
            r.fencing_id = st.column_int64(7);
            r.started = st.column_text(8);
            if (!st.column_null(9)) r.ended = st.column_text(9);
            r.outcome = parse_run_outcome(st.column_text(10)).value_or(run_outcome::lost);
            if (!st.column_null(11)) r.exit_status = static_cast<int>(st.column_int64(11));
            if (!st.column_null(12)) r.signal = static_cast<int>(st.column_int64(12));
            if (!st.column_null(13)) r.duration_seconds = st.column_double(13);
            runs.push_back(std::move(r));
        }
        return runs;
    }

    // Waits for another connection's write lock up to the busy timeout:
    // 1 ms, 2 ms, then 5 ms at a time. SQLite's own handler sleeps up to
    // 100 ms at a time, so a waiter tends to wake in the middle of the next
    // writer's transaction (a reaper's batches, another process's acquire)
    // and lose again; the reaper pauses at least 6 ms between batches
    // (min_batch_pause) so that a 5 ms sleep ends inside a pause. A
    // waiter waking every 1 ms for as long as it waits, though, keeps every
    // waiter contending: with 8 processes on 2 cores the holder of the write
    // lock, preempted, got a core last (docs/benchmarks.md).
    static int on_busy(void* self, int attempts) {
        auto* c = static_cast<SqliteConnection*>(self);
        auto now = std::chrono::steady_clock::now();
        if (attempts == 0) c->busy_since_ = now;
        const auto end = std::min(c->busy_since_ + c->busy_timeout_, c->deadline_);
        if (now >= end) return 0;
        // Never past the busy timeout or the caller's deadline.
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - now).count();
        const int step =
            busy_steps_ms[std::min<std::size_t>(attempts, std::size(busy_steps_ms) - 1)];
        sqlite3_sleep(static_cast<int>(std::max<long long>(1, std::min<long long>(step, left))));
        return 1;
    }
    static constexpr int busy_steps_ms[] = {1, 2, 5};  // then the last, again and again

    // The reaper's pause outlasts the longest busy step (on_busy).
    duration min_batch_pause() const override {
        return std::chrono::milliseconds(busy_steps_ms[std::size(busy_steps_ms) - 1] + 1);
    }

    // BEGIN IMMEDIATE takes the write lock up front (waiting up to the busy
    // timeout), so nothing inside can fail with an un-waited SQLITE_BUSY.
    class Transaction {
      public:
        explicit Transaction(SqliteConnection& c) : c_(c) {
            c_.exec("BEGIN IMMEDIATE", "starting a write transaction");
        }
        void commit() {
            c_.exec("COMMIT", "committing");
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
                              const std::string& locked_by) {
        Statement st = prepare(sql::insert);
        st.bind(1, lockstring).bind(2, seconds_modifier(lease)).bind(3, locked_by);
        if (!st.step()) return std::nullopt;
        // Only what the database chose comes back: the rest is ours, and a
        // new row has its whole lease left. Less work while this statement
        // holds the write lock (it commits at its last step), which every
        // other process waits for.
        Row row;
        row.id = st.column_int64(0);
        row.created = st.column_text(1);
        row.expires = st.column_text(2);
        while (st.step()) {
        }
        row.lockstring = lockstring;
        row.locked_by = locked_by;
        row.seconds_left = static_cast<double>(lease.count()) / 1000.0;
        return row;
    }

    // Prepared on first use, then reused for the connection's lifetime.
    Statement prepare(sql kind) {
        sqlite3_stmt*& stmt = cache_[static_cast<std::size_t>(kind)];
        if (!stmt) {
            const std::string text = sql_text(kind, table_, runs_, pauses_);
            int rc = sqlite3_prepare_v3(db_, text.c_str(), -1, SQLITE_PREPARE_PERSISTENT, &stmt,
                                        nullptr);
            if (rc != SQLITE_OK) {
                stmt = nullptr;
                sqlite::throw_sqlite_error(db_, rc, "preparing a statement");
            }
        }
        return Statement(db_, stmt);
    }

    void exec(const std::string& sql, const char* what) {
        char* message = nullptr;
        int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message);
        sqlite3_free(message);
        if (rc != SQLITE_OK) sqlite::throw_sqlite_error(db_, rc, what);
    }

    void close() noexcept {
        for (auto& stmt : cache_) {
            sqlite3_finalize(stmt);
            stmt = nullptr;
        }
        if (db_) {
            sqlite::set_error_database_name(db_, "");
            sqlite3_close_v2(db_);
            db_ = nullptr;
        }
    }

    std::chrono::milliseconds busy_timeout_{10000};
    clock::time_point deadline_ = clock::time_point::max();
    std::chrono::steady_clock::time_point busy_since_{};
    std::string path_;
    std::string table_;
    std::string index_;
    std::string runs_name_;  // unquoted
    std::string runs_;
    std::string pauses_name_;  // unquoted
    std::string pauses_;
    bool history_known_ = false;
    bool pauses_known_ = false;
    sqlite3* db_ = nullptr;
    std::array<sqlite3_stmt*, static_cast<std::size_t>(sql::count)> cache_{};
};

class SqliteBackend final : public Backend {
  public:
    SqliteBackend(SqliteUrl url, std::string table)
        : url_(std::move(url)), table_(std::move(table)) {}
    std::unique_ptr<Connection> connect() override {
        return std::make_unique<SqliteConnection>(url_, table_, url_.is_embedded_default);
    }
    void create_database() override { SqliteConnection(url_, table_, /*create=*/true); }
    std::string name() const override { return "sqlite"; }

    // Beside the usual facts: whether locking can work here (the file, the
    // lock table, this user's access, as init checks them), and the tables
    // beside the lock table: one made before sqlock had a history or pauses
    // locks as before, but those do not work until `sqlock init` adds them.
    // Access is the file's, one for all tables.
    void diagnose(Diagnosis& out) override {
        Backend::diagnose(out);
        auto fact = [&](std::string key, std::string value) {
            out.facts.push_back({std::move(key), std::move(value)});
        };
        const std::string lock_table = "lock table " + table_;
        // A database another connection holds locked right now is no
        // setting to fix: said as a fact, not a problem.
        auto busy = [](const error& e) { return e.backend_code().rfind("SQLITE_BUSY", 0) == 0; };
        std::unique_ptr<SqliteConnection> c;
        bool has_lock_table = false;
        try {
            c = std::make_unique<SqliteConnection>(url_, table_, /*create=*/false);
            has_lock_table = c->has_table(table_);
        } catch (const error& e) {
            if (busy(e)) {
                fact(lock_table, "unknown: the database is busy now");
                return;
            }
            fact(lock_table, "unknown: the file cannot be opened");
            out.problems.push_back(e.what());
            return;
        }
        if (!has_lock_table) {
            // The embedded default makes it on first use; elsewhere init
            // makes all three tables at once.
            if (url_.is_embedded_default) {
                fact(lock_table, "missing; made on first use");
                return;
            }
            fact(lock_table, "missing");
            out.problems.push_back(lock_table + " does not exist: run `sqlock init`");
            return;
        }
        std::string access = "present";
        bool runs_exist = false, pauses_exist = false;
        const std::string runs = runs_table_name(table_), pauses = pauses_table_name(table_);
        try {
            runs_exist = c->has_table(runs);
            pauses_exist = c->has_table(pauses);
            c->check_usable_without_writing();
        } catch (const error& e) {
            if (busy(e)) {
                fact(lock_table, "present; the database is busy now");
                return;
            }
            access = c->writable() ? "present; not usable" : "present; the file is read-only";
            out.problems.push_back(e.what());
        }
        fact(lock_table, access);
        fact("run history table " + runs, runs_exist ? access : "missing");
        fact("pauses table " + pauses, pauses_exist ? access : "missing");
        if (!runs_exist)
            out.problems.push_back("run history table " + runs + " does not exist (" + lock_table +
                                   " predates it): `sqlock run` records no runs and "
                                   "--once-per fails; run `sqlock init`");
        if (!pauses_exist)
            out.problems.push_back("pauses table " + pauses + " does not exist (" + lock_table +
                                   " predates it): `sqlock pause` fails and nothing is "
                                   "paused; run `sqlock init`");
    }

  private:
    SqliteUrl url_;
    std::string table_;
};

}  // namespace

std::unique_ptr<Backend> make_sqlite_backend(const DatabaseUrl& url, const std::string& table,
                                             duration timeout) {
    (void)timeout;  // a local file has no round trips to bound
    SqliteUrl location = parse_sqlite_url(url);
    validate_table_name(table, /*allow_schema=*/false);
    return std::make_unique<SqliteBackend>(std::move(location), table);
}

}  // namespace sqlock::detail

SQLOCK_BACKEND(sqlite, sqlock::detail::make_sqlite_backend)
