#include "sqlite_connection.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iterator>

#include "base/validate.hpp"
#include "contract/records.hpp"
#include "sqlite_error.hpp"
#include "sqlock/error.hpp"

namespace sqlock::detail::sqlite {
namespace {

// A JSON array of `items` for json_each(): strings quoted and escaped, or,
// with `quoted` false, numbers as they are.
std::string json_array(const std::vector<std::string>& items, bool quoted = true) {
    std::string out = "[";
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (i) out += ',';
        if (!quoted) {
            out += items[i];
            continue;
        }
        out += '"';
        for (unsigned char c : items[i]) {
            if (c == '"' || c == '\\') {
                out += '\\';
                out += static_cast<char>(c);
            } else if (c < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", c);
                out += buf;
            } else {
                out += static_cast<char>(c);
            }
        }
        out += '"';
    }
    return out + "]";
}

Row read_row(const Prepared& st) {
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

}  // namespace

SqliteConnection::SqliteConnection(const SqliteUrl& url, const std::string& table, bool create,
                                   std::shared_ptr<const StatementSet> set)
    : path_(url.path), tables_(table), set_(std::move(set)) {
    // Bad parameters are reported before any file is touched.
    busy_timeout_ = busy_timeout(url);
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
                            text::printable(path_) + "': the directory '" + text::printable(dir) +
                            "' does not exist" +
                            (create ? "" : " (create it, then run `sqlock init`)"),
                        code_name(rc));
        if (!create && file_missing(path_))
            throw error(errc::configuration,
                        "no lock database at '" + text::printable(path_) +
                            "' (the SQLite file does not exist); create it with `sqlock "
                            "init` or Locker::init()",
                        code_name(rc));
        if (::access(path_.c_str(), R_OK | W_OK) != 0 && errno == EACCES)
            throw error(errc::configuration,
                        "no permission to open SQLite database '" + text::printable(path_) +
                            "' for reading and writing: " + msg,
                        code_name(rc));
        if (rc == SQLITE_CANTOPEN && file_missing(path_) &&
            ::access(dir.c_str(), W_OK | X_OK) != 0 && errno == EACCES)
            throw error(errc::configuration,
                        "cannot create SQLite database '" + text::printable(path_) +
                            "': no permission to create files in '" + text::printable(dir) + "'",
                        code_name(rc));
        throw error(rc == SQLITE_CANTOPEN ? errc::configuration : errc::backend,
                    "cannot open SQLite database '" + text::printable(path_) + "': " + msg,
                    code_name(rc));
    }
    set_error_database_name(db_, "SQLite database '" + text::printable(path_) + "'");
    sqlite3_extended_result_codes(db_, 1);
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

void SqliteConnection::init_schema() {
    exec(schema_script(tables_), "creating the lock table");
}

std::optional<std::string> SqliteConnection::upgrade_schema() {
    const std::string what = "adding the queue's joined column";
    auto joined = [&] {
        const Rows r = query(Query::queue_joined, {});
        return !r.rows.empty() && as_bool(r.rows[0].at(0));
    };
    if (!has(SideTable::queue) || joined()) return std::nullopt;
    Transaction tx(*this, what);
    if (joined()) return std::nullopt;  // another init was first
    exec(queue_upgrade_script(tables_), what);
    tx.commit(what);
    return std::nullopt;
}

void SqliteConnection::check_access() {
    check_usable_without_writing();
    // Taking the write lock proves the journal files can be written too;
    // the transaction is rolled back, so nothing changes.
    Transaction probe(*this);
}

void SqliteConnection::check_usable_without_writing() {
    // SQLite opens a file it may not write read-only, without a word.
    if (sqlite3_db_readonly(db_, "main") == 1)
        throw error(errc::configuration,
                    "SQLite database '" + text::printable(path_) +
                        "' is read-only for this user: sqlock needs to write it (and to "
                        "create its -wal and -shm files beside it)",
                    "SQLITE_READONLY");
    prepare(Query::lock_held, "preparing a statement");
}

bool SqliteConnection::waiters_ahead(const QueueGate& gate) {
    if (!gate.active()) return false;
    Prepared st = prepare(Sql::waiters_ahead);
    st.bind(1, gate.name).bind(2, gate.before);
    return st.step();
}

AcquireResult SqliteConnection::try_acquire(const std::string& lockstring, duration lease,
                                            const std::string& locked_by, const QueueGate& gate) {
    // A read before the write: a waiter that joins the line in between
    // joined it after this attempt, which was first.
    if (waiters_ahead(gate)) {
        AcquireResult queued;
        queued.queued = true;
        if (auto row = find(lockstring); row && row->seconds_left > 0) queued.holder = row;
        return queued;
    }
    // Common case: the name is free; one autocommit statement.
    if (auto row = insert(lockstring, lease, locked_by)) return {std::move(row), {}};
    // Held: take it over if expired, atomically, under the write lock.
    Transaction tx(*this);
    {
        Prepared del = prepare(Sql::delete_expired);
        del.bind(1, lockstring).step();
    }
    AcquireResult result;
    if (sqlite3_changes(db_) > 0) result.acquired = insert(lockstring, lease, locked_by);
    if (!result.acquired) result.holder = find(lockstring);
    tx.commit();
    return result;
}

AcquireResult SqliteConnection::try_acquire_slot(const std::string& name, int capacity,
                                                 duration lease, const std::string& locked_by,
                                                 int* slot_out, const QueueGate& gate) {
    if (waiters_ahead(gate)) {
        AcquireResult queued;
        queued.queued = true;
        return queued;
    }
    // One statement takes the lowest free slot: a write statement holds
    // SQLite's write lock from its first read, so "lowest free" cannot
    // change under it.
    auto took = [&]() -> std::optional<Row> {
        Prepared st = prepare(Sql::insert_lowest_slot);
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
        Prepared del = prepare(Sql::delete_expired_slots);
        del.bind(1, name).bind(2, static_cast<std::int64_t>(capacity)).step();
    }
    std::optional<Row> row;
    if (sqlite3_changes(db_) > 0) row = took();
    AcquireResult result;
    if (row) {
        tx.commit();
        return done(std::move(*row));
    }
    Prepared first = prepare(Sql::first_to_expire_slot);
    first.bind(1, name).bind(2, static_cast<std::int64_t>(capacity));
    if (first.step()) result.holder = read_row(first);
    while (first.step()) {
    }
    tx.commit();
    return result;
}

SetAcquireResult SqliteConnection::try_acquire_set(const std::vector<std::string>& lockstrings,
                                                   duration lease, const std::string& locked_by,
                                                   bool yield_to_queue) {
    // Under SQLite's write lock from the first statement: nobody else reads
    // or writes the table until the commit, so every check holds for the
    // whole set, and a rollback leaves no trace.
    Transaction tx(*this, "starting the transaction that takes a set of locks");
    SetAcquireResult result;
    if (yield_to_queue) {
        Prepared waiting = prepare(Sql::set_waiters);
        waiting.bind(1, json_array(lockstrings));
        result.queued = waiting.step();
    }
    // As try_acquire() takes one name: the free names first, in one
    // statement (the common case), then the take-over of expired rows only
    // when some name was there. A name held live is read for the caller;
    // the rollback undoes whatever was written.
    const std::string names = json_array(lockstrings);
    auto insert_free = [&] {
        Prepared st = prepare(Sql::insert_set);
        st.bind(1, names).bind(2, seconds_modifier(lease)).bind(3, locked_by);
        while (st.step()) {
            Row row;
            row.id = st.column_int64(0);
            row.lockstring = st.column_text(1);
            row.created = st.column_text(2);
            row.expires = st.column_text(3);
            row.locked_by = locked_by;
            row.seconds_left = static_cast<double>(lease.count()) / 1000.0;
            result.acquired.push_back(std::move(row));
        }
    };
    if (!result.queued) insert_free();
    if (!result.queued && result.acquired.size() < lockstrings.size()) {
        Prepared del = prepare(Sql::delete_expired_set);
        del.bind(1, names).step();
        if (sqlite3_changes(db_) > 0) insert_free();
    }
    if (result.queued || result.acquired.size() != lockstrings.size()) {
        if (!result.queued)
            for (const std::string& lockstring : lockstrings) {
                const bool ours =
                    std::any_of(result.acquired.begin(), result.acquired.end(),
                                [&](const Row& r) { return r.lockstring == lockstring; });
                if (ours) continue;
                if (auto holder = find(lockstring)) result.holders.push_back(std::move(*holder));
            }
        result.acquired.clear();
        return result;  // rolled back
    }
    tx.commit("committing a set of locks");
    return result;
}

SetAcquireResult SqliteConnection::try_acquire_mixed_set(const std::vector<ClaimEntry>& entries,
                                                         duration lease,
                                                         const std::string& locked_by,
                                                         bool yield_to_queue) {
    // Under the write lock, as try_acquire_set(): every row is read first,
    // and written only when nothing is in the way.
    Transaction tx(*this, "starting the transaction that takes a set of locks");
    SetAcquireResult result;
    if (yield_to_queue) {
        std::vector<std::string> names;
        for (const ClaimEntry& e : entries) names.push_back(e.name);
        Prepared waiting = prepare(Sql::set_waiters);
        waiting.bind(1, json_array(names));
        result.queued = waiting.step();
    }
    bool free = !result.queued;
    for (const ClaimEntry& e : entries) {
        if (auto row = find(e.name); row && row->seconds_left > 0) {
            free = free && e.shared() && row->locked_by == shared_marker_owner;
            result.holders.push_back(std::move(*row));
        }
        if (!e.shared()) continue;
        if (auto own = find(e.shared_row); own && own->seconds_left > 0) {
            free = false;
            result.holders.push_back(std::move(*own));
        }
    }
    if (!free) return result;  // rolled back: nothing was written
    result.holders.clear();
    auto written = [&](std::optional<Row> row, const std::string& lockstring) {
        // Cannot be: the write lock has been ours since the reads.
        if (!row)
            throw error(errc::backend, "the row '" + printable(lockstring) +
                                           "' appeared while this connection held the write lock");
        return std::move(*row);
    };
    for (const ClaimEntry& e : entries) {
        for (const std::string* expired : {&e.name, e.shared() ? &e.shared_row : nullptr}) {
            if (!expired) continue;
            Prepared del = prepare(Sql::delete_expired);
            del.bind(1, *expired).step();
        }
        if (!e.shared()) {
            result.acquired.push_back(written(insert(e.name, lease, locked_by), e.name));
            continue;
        }
        // The marker, unless the name is held shared already (live).
        (void)insert(e.name, lease, shared_marker_owner);
        Row own = written(insert(e.shared_row, lease, locked_by), e.shared_row);
        if (!extend_marker(e.name, own.expires))
            throw error(errc::backend, "the shared marker of '" + printable(e.name) +
                                           "' vanished under the write lock");
        result.acquired.push_back(std::move(own));
    }
    tx.commit("committing a set of locks");
    return result;
}

// A set's rows change together: one transaction, so that no reader sees
// part of a set renewed or released.
std::vector<Row> SqliteConnection::renew_set(const std::vector<std::int64_t>& ids,
                                             const std::string& locked_by, duration lease) {
    Transaction tx(*this, "starting the transaction that renews a set of locks");
    std::vector<Row> renewed = renew_each(*this, ids, locked_by, lease);
    tx.commit("committing the renewal of a set of locks");
    return renewed;
}

std::size_t SqliteConnection::release_set(const std::vector<std::int64_t>& ids,
                                          const std::vector<std::string>& lockstrings,
                                          const std::string& locked_by, duration min_hold) {
    if (min_hold <= duration::zero()) {
        // One statement, one implicit transaction.
        std::vector<std::string> texts;
        for (std::int64_t id : ids) texts.push_back(std::to_string(id));
        Prepared del = prepare(Sql::delete_set);
        del.bind(1, json_array(texts, /*quoted=*/false)).bind(2, locked_by).step();
        const auto deleted = static_cast<std::size_t>(sqlite3_changes(db_));
        return ids.size() - std::min(deleted, ids.size());
    }
    Transaction tx(*this, "starting the transaction that releases a set of locks");
    const std::size_t lost = release_each(*this, ids, lockstrings, locked_by, min_hold);
    tx.commit("committing the release of a set of locks");
    return lost;
}

ReleaseOutcome SqliteConnection::release_one(std::int64_t id, const std::string& lockstring,
                                             const std::string& locked_by, duration min_hold) {
    if (min_hold > duration::zero()) {
        Prepared keep = prepare(Sql::keep_until_min_hold);
        keep.bind(1, id).bind(2, locked_by).bind(3, seconds_modifier(min_hold)).step();
        if (sqlite3_changes(db_) > 0) return ReleaseOutcome::kept;
    }
    return delete_exact(id, lockstring, locked_by) ? ReleaseOutcome::released
                                                   : ReleaseOutcome::lost;
}

// Shared holds: every step in one transaction under SQLite's write lock,
// which is the name's turn: nobody reads or writes between the look at the
// marker and the writes that follow from it.
AcquireResult SqliteConnection::try_acquire_shared(const std::string& name, const std::string& own,
                                                   duration lease, const std::string& locked_by,
                                                   const QueueGate& gate) {
    Transaction tx(*this, "starting the transaction that takes a shared lock");
    AcquireResult result;
    std::optional<Row> marker = find(name);
    const bool live = marker && marker->seconds_left > 0;
    if (waiters_ahead(gate)) {
        result.queued = true;
        if (live && marker->locked_by != shared_marker_owner) result.holder = std::move(marker);
        return result;
    }
    if (!live || marker->locked_by != shared_marker_owner) {
        if (marker) {
            Prepared del = prepare(Sql::delete_expired);
            del.bind(1, name).step();
        }
        if (!insert(name, lease, shared_marker_owner)) {
            result.holder = find(name);  // held exclusively (or live by a hair)
            return result;
        }
    }
    result.acquired = insert(own, lease, locked_by);
    if (!result.acquired)  // our token's row is there: 64 random bits met
        throw error(errc::backend,
                    "the shared holder row '" + printable(own) + "' exists already; try again");
    // After our row, from its expiry: 'now' moved on since the marker's.
    if (!extend_marker(name, result.acquired->expires)) {
        result.acquired.reset();  // the marker expired this very moment: rolled back
        return result;
    }
    tx.commit("committing a shared lock");
    return result;
}

bool SqliteConnection::extend_marker(const std::string& name, const std::string& until) {
    Prepared extend = prepare(Sql::shared_marker_extend);
    extend.bind(1, name).bind(2, until).bind(3, shared_marker_owner).step();
    return sqlite3_changes(db_) > 0;
}

std::optional<Row> SqliteConnection::renew_shared(std::int64_t id, const std::string& name,
                                                  const std::string& locked_by, duration lease) {
    Transaction tx(*this, "starting the transaction that renews a shared lock");
    std::optional<Row> row = renew_one(id, locked_by, lease);
    if (!row || !extend_marker(name, row->expires)) return std::nullopt;  // rolled back
    tx.commit("committing the renewal of a shared lock");
    return row;
}

ReleaseOutcome SqliteConnection::release_shared(std::int64_t id, const std::string& own,
                                                const std::string& name,
                                                const std::string& locked_by, duration min_hold) {
    Transaction tx(*this, "starting the transaction that releases a shared lock");
    const ReleaseOutcome outcome = release_one(id, own, locked_by, min_hold);
    fit_marker(name);
    tx.commit("committing the release of a shared lock");
    return outcome;
}

void SqliteConnection::fit_marker(const std::string& name) {
    const std::string prefix = shared_prefix(name);
    const std::string upper = shared_prefix_end(name);
    for (Sql step : {Sql::shared_marker_drop, Sql::shared_marker_shrink}) {
        Prepared st = prepare(step);
        st.bind(1, name).bind(2, prefix).bind(3, upper).bind(4, shared_marker_owner).step();
    }
}

std::vector<Row> SqliteConnection::renew_mixed_set(const std::vector<ClaimEntry>& entries,
                                                   const std::vector<std::int64_t>& ids,
                                                   const std::string& locked_by, duration lease) {
    Transaction tx(*this, "starting the transaction that renews a set of locks");
    std::vector<Row> renewed;
    for (std::size_t i = 0; i < entries.size(); ++i) {
        std::optional<Row> row = renew_one(ids[i], locked_by, lease);
        // A holder row counts only while its marker covers it.
        if (row && (!entries[i].shared() || extend_marker(entries[i].name, row->expires)))
            renewed.push_back(std::move(*row));
    }
    tx.commit("committing the renewal of a set of locks");
    return renewed;
}

std::size_t SqliteConnection::release_mixed_set(const std::vector<ClaimEntry>& entries,
                                                const std::vector<std::int64_t>& ids,
                                                const std::string& locked_by) {
    Transaction tx(*this, "starting the transaction that releases a set of locks");
    std::size_t not_ours = 0;
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const ClaimEntry& e = entries[i];
        if (release_one(ids[i], e.row(), locked_by, duration::zero()) == ReleaseOutcome::lost)
            ++not_ours;
        if (e.shared()) fit_marker(e.name);
    }
    tx.commit("committing the release of a set of locks");
    return not_ours;
}

std::optional<Row> SqliteConnection::renew_one(std::int64_t id, const std::string& locked_by,
                                               duration lease) {
    Prepared st = prepare(Sql::renew);
    st.bind(1, id).bind(2, locked_by).bind(3, seconds_modifier(lease));
    if (!st.step()) return std::nullopt;
    Row row = read_row(st);
    while (st.step()) {
    }
    return row;
}

std::size_t SqliteConnection::purge_more(std::size_t batch, std::size_t purged) {
    if (purged == batch) return 0;
    // The indexed rows are done; now the odd ones, found by a read scan.
    std::vector<std::int64_t> ids;
    {
        Prepared scan = prepare(Sql::odd_expired_ids);
        scan.bind(1, static_cast<std::int64_t>(batch - purged));
        while (scan.step()) ids.push_back(scan.column_int64(0));
    }
    if (ids.empty()) return 0;
    std::size_t more = 0;
    Transaction tx(*this);
    for (std::int64_t id : ids) {
        Prepared del = prepare(Sql::delete_id_if_dead);
        del.bind(1, id).step();
        more += static_cast<std::size_t>(sqlite3_changes(db_));
    }
    tx.commit();
    return more;
}

bool SqliteConnection::delete_exact(std::int64_t id, const std::string& /*lockstring*/,
                                    const std::string& locked_by) {
    Prepared st = prepare(Sql::delete_exact);
    st.bind(1, id).bind(2, locked_by).step();
    return sqlite3_changes(db_) > 0;
}

Rows SqliteConnection::query(Query key, const std::vector<Value>& params) {
    const QueryText& text = (*set_)[key];
    // Every error names what the query was doing (describe_query).
    const std::string what = describe_query(key, params);
    const std::vector<sqlite3_stmt*>& statements = prepare(key, what);
    std::optional<Transaction> tx;
    if (text.mode == QueryText::Mode::transaction) tx.emplace(*this, what);
    Rows out;
    for (sqlite3_stmt* stmt : statements) {
        Prepared st(db_, stmt);
        // ?NNN is parameter NNN: each statement binds the ones it has. One
        // it lacks is a mistake in the set, never a NULL.
        const int count = st.parameter_count();
        if (static_cast<std::size_t>(count) > params.size())
            throw error(errc::backend, "an SQLite statement refers to parameter ?" +
                                           std::to_string(count) + " of " +
                                           std::to_string(params.size()) + " while " + what);
        for (int i = 1; i <= count; ++i) {
            const Value& v = params[static_cast<std::size_t>(i - 1)];
            switch (v.kind()) {
                case Value::Kind::null:
                    st.bind_null(i);
                    break;
                case Value::Kind::integer:
                    st.bind(i, v.number());
                    break;
                case Value::Kind::text:
                    st.bind(i, v.str());
                    break;
                case Value::Kind::millis:
                    st.bind(i, duration_modifier(v.number()));
                    break;
            }
        }
        const int columns = st.column_count();
        std::vector<std::vector<Field>> rows;
        while (st.step(what)) {
            std::vector<Field> row;
            row.reserve(static_cast<std::size_t>(columns));
            for (int c = 0; c < columns; ++c)
                row.push_back(st.column_null(c) ? Field() : Field(st.column_text(c)));
            rows.push_back(std::move(row));
        }
        if (columns > 0) out.rows = std::move(rows);  // the last statement with rows
        if (!st.read_only()) out.affected += static_cast<std::uint64_t>(sqlite3_changes(db_));
    }
    if (tx) tx->commit(what);
    return out;
}

bool SqliteConnection::has_table(const std::string& name) {
    Prepared st = prepare(Sql::has_table);  // any table, by name
    st.bind(1, table_basename(name));
    return st.step();
}

int SqliteConnection::on_busy(void* self, int attempts) {
    auto* c = static_cast<SqliteConnection*>(self);
    auto now = std::chrono::steady_clock::now();
    if (attempts == 0) c->busy_since_ = now;
    const auto end = std::min(c->busy_since_ + c->busy_timeout_, c->deadline_);
    if (now >= end) return 0;
    // Never past the busy timeout or the caller's deadline.
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - now).count();
    const int step = busy_steps_ms[std::min<std::size_t>(attempts, std::size(busy_steps_ms) - 1)];
    sqlite3_sleep(static_cast<int>(std::max<long long>(1, std::min<long long>(step, left))));
    return 1;
}

constexpr int busy_steps_ms[] = {1, 2, 5};  // then the last, again and again

// The reaper's pause outlasts the longest busy step (on_busy).
duration SqliteConnection::min_batch_pause() const {
    return std::chrono::milliseconds(busy_steps_ms[std::size(busy_steps_ms) - 1] + 1);
}

std::optional<Row> SqliteConnection::insert(const std::string& lockstring, duration lease,
                                            const std::string& locked_by) {
    Prepared st = prepare(Sql::insert);
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

Prepared SqliteConnection::prepare(Sql kind) {
    sqlite3_stmt*& stmt = cache_[static_cast<std::size_t>(kind)];
    if (!stmt) {
        const std::string text = sql_text(kind, tables_);
        int rc =
            sqlite3_prepare_v3(db_, text.c_str(), -1, SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
        if (rc != SQLITE_OK) {
            stmt = nullptr;
            throw_sqlite_error(db_, rc, "preparing a statement");
        }
    }
    return Prepared(db_, stmt);
}

const std::vector<sqlite3_stmt*>& SqliteConnection::prepare(Query key, const std::string& doing) {
    std::vector<sqlite3_stmt*>& statements = set_cache_[static_cast<std::size_t>(key)];
    if (!statements.empty()) return statements;
    const std::string& sql = (*set_)[key].sql;
    const char* next = sql.c_str();
    const char* const end = next + sql.size();
    while (next < end) {
        sqlite3_stmt* stmt = nullptr;
        const char* tail = nullptr;
        const int rc = sqlite3_prepare_v3(db_, next, static_cast<int>(end - next),
                                          SQLITE_PREPARE_PERSISTENT, &stmt, &tail);
        if (rc != SQLITE_OK) {
            for (sqlite3_stmt* s : statements) sqlite3_finalize(s);
            statements.clear();
            throw_sqlite_error(db_, rc, doing);
        }
        if (stmt) statements.push_back(stmt);  // null: only white space was left
        next = tail;
    }
    return statements;
}

void SqliteConnection::exec(const std::string& sql, const std::string& doing) {
    char* message = nullptr;
    int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message);
    sqlite3_free(message);
    if (rc != SQLITE_OK) throw_sqlite_error(db_, rc, doing);
}

void SqliteConnection::close() noexcept {
    for (auto& stmt : cache_) {
        sqlite3_finalize(stmt);
        stmt = nullptr;
    }
    for (auto& statements : set_cache_) {
        for (sqlite3_stmt* stmt : statements) sqlite3_finalize(stmt);
        statements.clear();
    }
    if (db_) {
        set_error_database_name(db_, "");
        sqlite3_close_v2(db_);
        db_ = nullptr;
    }
}

}  // namespace sqlock::detail::sqlite
