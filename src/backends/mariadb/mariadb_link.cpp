#include "mariadb_link.hpp"

#include <errmsg.h>
#include <mysql.h>
#include <poll.h>
#include <sys/socket.h>

#include <mysqld_error.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <thread>

#include "mariadb_abandoned.hpp"
#include "mariadb_nodes.hpp"

#include "base/host_resolution.hpp"
#include "sqlock/error.hpp"

namespace sqlock::detail::mariadb {
namespace {

// The strictest sql_mode both MariaDB 10.6+ and MySQL 8.0 accept: a value
// that does not fit is an error, never silently truncated or zeroed. Neither
// ANSI_QUOTES nor NO_BACKSLASH_ESCAPES: identifiers are in backticks and text
// travels as hex, so the statements mean the same under any mode, but a
// known mode keeps them readable.
constexpr const char* sql_mode =
    "STRICT_ALL_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,"
    "NO_ENGINE_SUBSTITUTION";

unsigned whole_seconds(duration d) {
    const double s = std::ceil(static_cast<double>(d.count()) / 1000.0);
    return static_cast<unsigned>(std::clamp(s, 1.0, 86400.0));
}

void set_option(MYSQL* m, mysql_option option, const void* value) {
    // Fails only for an unknown option: a build against another connector.
    if (mysql_optionsv(m, option, value) != 0)
        throw error(errc::backend, "the MariaDB C connector refused option " +
                                       std::to_string(static_cast<int>(option)));
}

void set_tls(MYSQL* m, const MariaUrl& u) {
    auto or_null = [](const std::string& s) { return s.empty() ? nullptr : s.c_str(); };
    if (u.ssl_mode == SslMode::disabled) return;
    const bool files =
        !u.ssl_ca.empty() || !u.ssl_capath.empty() || !u.ssl_cert.empty() || !u.ssl_key.empty();
    if (files || u.ssl_mode != SslMode::preferred)
        mysql_ssl_set(m, or_null(u.ssl_key), or_null(u.ssl_cert), or_null(u.ssl_ca),
                      or_null(u.ssl_capath), nullptr);
    // The connector checks the chain and the host name together: verify-ca
    // is as strict as verify-identity here (docs/mariadb.md). Said either
    // way: Connector/C 3.4 checks by default, and outside these modes it is
    // handed an address, not the name (hosts_to_try).
    const my_bool verify =
        u.ssl_mode == SslMode::verify_ca || u.ssl_mode == SslMode::verify_identity;
    set_option(m, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &verify);
    if (u.ssl_mode == SslMode::preferred) return;
    const my_bool yes = 1;
    set_option(m, MYSQL_OPT_SSL_ENFORCE, &yes);
}

// What to hand the connector as its host, in the order to try them. The
// connector looks a host name up with a getaddrinfo that nothing bounds,
// before its connect timeout starts (host_resolution.hpp), so sqlock looks
// it up, bounded, and hands it the addresses: one at a time, as the
// connector itself would try them. Except where ssl-mode has the connector
// check the certificate against the host name: then it must be given the
// name, and looks it up again after sqlock's lookup. That check still fails
// by the deadline when the resolver does not answer at all; a resolver that
// answers slowly can hold the second lookup up (glibc keeps no cache).
std::vector<std::string> hosts_to_try(const MariaTarget& t, const MariaHost& h,
                                      Link::clock::time_point deadline) {
    const MariaUrl& u = t.url;
    if (host_to_look_up(u, h).empty()) return {h.host};
    const auto left = std::chrono::ceil<duration>(deadline - Link::clock::now());
    if (left <= duration::zero())
        throw error(errc::connection,
                    t.redact("cannot connect to MariaDB: the deadline passed before connecting [" +
                             t.redacted_url + "]"));
    const Resolution r = resolve_in_order({h.host}, std::min(left, t.timeout)).front();
    if (!r.problem.empty())
        throw error(errc::connection, t.redact("cannot connect to MariaDB: " + r.problem + " [" +
                                               t.redacted_url + "]"));
    if (u.ssl_mode == SslMode::verify_ca || u.ssl_mode == SslMode::verify_identity) return {h.host};
    return r.addresses;
}

// The session: every time is UTC and the server's (UTC_TIMESTAMP), but a
// TIMESTAMP column written by another program is read in the session time
// zone, so make that UTC too. A row lock waited for is bounded by the
// Locker's timeout, not the server's 50 s default. READ COMMITTED: no gap
// locks, so transactions on different names never block or deadlock each
// other (and whatever the server's transaction_isolation says: a batch
// reads what was committed before each of its statements). A server-wide
// max_statement_time (`mariadb`: MariaDB's statement timeout) would end a
// statement waiting its turn (GET_LOCK) before the Locker's own bound: off,
// as that bound holds. wait_timeout and idle_transaction_timeout are left
// alone: sqlock's sessions are never idle inside a transaction, and a
// pooled session the server closed is a broken link the pool opens again.
// Then, on MariaDB, whether this session replicates through Galera
// (@@wsrep_on: a few microseconds; SHOW VARIABLES would cost a third of a
// millisecond on every connection), its state asked only where it does
// (galera_state()). MySQL's Galera builds are not looked for.
std::string session_setup(duration timeout, bool mariadb) {
    return "SET SESSION time_zone = '+00:00', SESSION sql_mode = '" + std::string(sql_mode) +
           "', SESSION innodb_lock_wait_timeout = " + std::to_string(whole_seconds(timeout)) +
           (mariadb ? ", SESSION max_statement_time = 0" : "") +
           "; SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED" +
           (mariadb ? "; SELECT @@SESSION.wsrep_on" : "");
}

// A Galera node's state: one round trip more, on Galera's connections
// only. A node outside the primary component still answers SHOW.
constexpr const char* galera_state =
    "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_ready', 'wsrep_local_state', "
    "'wsrep_local_state_comment', 'wsrep_cluster_status')";

// "name" -> "value" of a SHOW's rows.
std::string shown(const StatementResult& r, const std::string& name) {
    for (const auto& row : r.rows)
        if (row.size() >= 2 && row[0] && *row[0] == name && row[1]) return *row[1];
    return "";
}

// The error's message without the " [url]" every message ends with.
std::string reason_of(const error& e) {
    std::string what = e.what();
    const std::size_t bracket = what.rfind(" [");
    if (bracket != std::string::npos && what.back() == ']') what.resize(bracket);
    const std::string prefix = "cannot connect to MariaDB: ";
    if (what.rfind(prefix, 0) == 0) what.erase(0, prefix.size());
    return what;
}

}  // namespace

std::string host_to_look_up(const MariaUrl& u, const MariaHost& h) {
    // "localhost" and no host mean the Unix socket, as does socket=.
    if (!u.socket.empty() || h.host.empty() || h.host == "localhost" || is_numeric_address(h.host))
        return "";
    return h.host;
}

Link::Link(const MariaTarget& target, clock::time_point deadline) : target_(target) {
    const std::vector<MariaHost>& hosts = target_.url.hosts;
    if (hosts.size() == 1) {
        open(0, deadline);
        return;
    }
    // Each host its share of what is left: one that does not answer leaves
    // the others time. What became of each is the message if none will do.
    const std::vector<std::size_t> order = nodes_in_order(target_.redacted_url, hosts.size());
    std::string problems, code;
    for (std::size_t k = 0; k < order.size(); ++k) {
        const std::size_t i = order[k];
        const auto now = clock::now();
        const auto share = k + 1 == order.size() || now >= deadline
                               ? deadline
                               : now + (deadline - now) / static_cast<int>(order.size() - k);
        try {
            open(i, share);
            node_reached(target_.redacted_url, i);
            return;
        } catch (const error& e) {
            if (e.category() != errc::connection) throw;
            node_failed(target_.redacted_url, i, hosts.size());
            problems += (problems.empty() ? "" : "; ") + hosts[i].label() + ": " + reason_of(e);
            code = e.backend_code();
        }
    }
    throw error(errc::connection,
                target_.redact("cannot connect to any of the " + std::to_string(hosts.size()) +
                               " MariaDB hosts: " + problems + " [" + target_.redacted_url + "]"),
                code);
}

Link::Link(const MariaTarget& target, std::size_t node, clock::time_point deadline)
    : target_(target) {
    open(node, deadline);
}

void Link::open(std::size_t node, clock::time_point deadline) {
    // Nothing of an earlier host's attempt: its session id means nothing here.
    node_ = node;
    thread_ = 0;
    galera_ = false;
    began_ = clock::now();
    in_call_ = true;  // the setup's bound is the connection's
    in_open_ = true;
    struct Done {
        bool& call;
        bool& open;
        ~Done() { call = open = false; }
    } done{in_call_, in_open_};
    const std::vector<std::string> addresses = hosts_to_try(target_, host(), deadline);
    for (std::size_t i = 0;; ++i) {
        try {
            connect_to(addresses[i], deadline);
            break;
        } catch (const error& e) {
            // The name's next address, as the connector would have tried it.
            if (e.category() != errc::connection || i + 1 == addresses.size() ||
                clock::now() >= deadline)
                throw;
        }
    }
    thread_ = mysql_thread_id(mysql_);
    opened_ = clock::now();
    if (target_.url.hosts.size() > 1) node_failures_ = node_failures(target_.redacted_url, node_);
    try {
        const MariaUrl& u = target_.url;
        server_version_ = mysql_get_server_info(mysql_);
        // The connector (3.3) goes on in plain text when the server offers no
        // TLS, even with MYSQL_OPT_SSL_ENFORCE: check, before any statement.
        if (u.ssl_mode != SslMode::disabled && u.ssl_mode != SslMode::preferred &&
            !mysql_get_ssl_cipher(mysql_))
            throw error(errc::configuration,
                        target_.redact("the MariaDB server does not offer TLS, which ssl-mode "
                                       "requires; enable TLS on the server or change ssl-mode [" +
                                       target_.redacted_url + "]"),
                        std::to_string(CR_SSL_CONNECTION_ERROR) + "/HY000");
        Failure f;
        const auto rs = run(session_setup(target_.timeout, is_mariadb()), deadline,
                            "setting up the session", &f);
        // A MariaDB built without Galera has no @@wsrep_on (1193): no Galera.
        if (f.code != 0 && !(rs.size() == 2 && f.code == ER_UNKNOWN_SYSTEM_VARIABLE))
            throw_failure(target_, f, "setting up the session");
        galera_ = rs.size() == 3 && !rs[2].rows.empty() && rs[2].rows[0].at(0).value_or("0") == "1";
        const auto state_rows = galera_
                                    ? run(galera_state, deadline, "reading the Galera node's state")
                                    : std::vector<StatementResult>{};
        if (galera_ && (shown(state_rows.at(0), "wsrep_ready") != "ON" ||
                        shown(state_rows.at(0), "wsrep_local_state") != "4")) {
            const std::string state = shown(state_rows.at(0), "wsrep_local_state_comment");
            const std::string cluster = shown(state_rows.at(0), "wsrep_cluster_status");
            throw error(errc::connection,
                        target_.redact("the Galera node is not ready for locks (" +
                                       (state.empty() ? std::string("state unknown") : state) +
                                       (cluster.empty() ? "" : ", " + cluster) +
                                       "; sqlock uses only a Synced node of the primary "
                                       "component) [" +
                                       target_.redacted_url + "]"),
                        std::to_string(ER_UNKNOWN_COM_ERROR) + "/08S01");
        }
    } catch (...) {
        mysql_close(mysql_);
        mysql_ = nullptr;
        throw;
    }
}

void Link::connect_to(const std::string& address, clock::time_point deadline) {
    broken_ = false;
    mysql_ = mysql_init(nullptr);
    if (!mysql_) throw error(errc::backend, "mysql_init failed (out of memory)");
    try {
        const unsigned seconds = whole_seconds(target_.timeout);
        const my_bool no = 0;
        set_option(mysql_, MYSQL_OPT_CONNECT_TIMEOUT, &seconds);
        set_option(mysql_, MYSQL_OPT_READ_TIMEOUT, &seconds);
        set_option(mysql_, MYSQL_OPT_WRITE_TIMEOUT, &seconds);
        set_option(mysql_, MYSQL_OPT_RECONNECT, &no);
        set_option(mysql_, MYSQL_SET_CHARSET_NAME, "utf8mb4");
        // No option files: what the URL says is all there is.
        if (mysql_options(mysql_, MYSQL_OPT_NONBLOCK, nullptr) != 0)
            throw error(errc::backend, "the MariaDB C connector has no non-blocking API");
        set_tls(mysql_, target_.url);

        const MariaUrl& u = target_.url;
        auto or_null = [](const std::string& s) { return s.empty() ? nullptr : s.c_str(); };
        MYSQL* connected = nullptr;
        const int started = mysql_real_connect_start(
            &connected, mysql_, or_null(address), or_null(u.user),
            u.has_password ? u.password.c_str() : nullptr, u.database.c_str(), host().port,
            or_null(u.socket), CLIENT_MULTI_STATEMENTS | CLIENT_MULTI_RESULTS);
        drive([&] { return started; },
              [&](int ready) { return mysql_real_connect_cont(&connected, mysql_, ready); },
              deadline, "connecting");
        if (!connected) throw_connect_failure(target_, last_failure());
    } catch (...) {
        mysql_close(mysql_);
        mysql_ = nullptr;
        throw;
    }
}

Link::~Link() {
    // A broken link's socket is shut down: mysql_close's goodbye fails at
    // once instead of waiting.
    if (mysql_) mysql_close(mysql_);
}

bool Link::is_mariadb() const noexcept {
    return server_version_.find("MariaDB") != std::string::npos;
}

Failure Link::last_failure() const {
    Failure f;
    f.code = mysql_errno(mysql_);
    f.sqlstate = mysql_sqlstate(mysql_);
    f.message = mysql_error(mysql_);
    return f;
}

std::string Link::server_key() const {
    if (target_.url.hosts.size() == 1) return target_.redacted_url;
    return target_.redacted_url + " " + host().label();
}

void Link::node_lost() noexcept {
    try {
        node_failed(target_.redacted_url, node_, target_.url.hosts.size());
    } catch (...) {
        // Only the next connection's first choice is lost.
    }
}

void Link::abandon(clock::time_point deadline, const std::string& doing) {
    broken_ = true;
    const int fd = mysql_get_socket(mysql_);
    if (fd >= 0) ::shutdown(fd, SHUT_RDWR);
    // Connected, so the server may run on with what it was sent.
    if (thread_ != 0) record_abandoned({server_key(), thread_, opened_});
    node_lost();
    // The bound is the whole operation's (began_: when it started), not
    // what this last wait had left of it.
    const auto bound = std::chrono::duration_cast<duration>(deadline - began_);
    throw error(errc::connection,
                target_.redact("no answer from MariaDB" +
                               (target_.url.hosts.size() > 1 ? " host " + host().label() : "") +
                               " within " + format_duration(bound) + " while " + doing +
                               "; abandoned the connection [" + target_.redacted_url + "]"),
                std::to_string(CR_SERVER_LOST) + "/HY000");
}

void Link::give_up(const Failure& f, const std::string& doing) {
    broken_ = true;
    node_lost();
    throw error(errc::connection,
                target_.redact("the MariaDB node" +
                               (target_.url.hosts.size() > 1 ? " " + host().label() : "") +
                               " could not catch up with its Galera cluster while " + doing + " (" +
                               f.message + ") [" + target_.redacted_url + "]"),
                std::to_string(f.code) + "/" + (f.sqlstate.empty() ? "HY000" : f.sqlstate));
}

void Link::fail(const std::string& doing) {
    Failure f = last_failure();
    if (breaks_link(f.code)) {
        broken_ = true;
        node_lost();
    }
    throw_failure(target_, f, doing);
}

template <typename Start, typename Cont>
void Link::drive(Start&& start, Cont&& cont, clock::time_point deadline, const std::string& doing) {
    int status = start();
    while (status != 0) {
        const auto now = clock::now();
        if (now >= deadline) abandon(deadline, doing);
        auto wait_ms =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() + 1;
        bool library_timeout = false;
        if (status & MYSQL_WAIT_TIMEOUT) {
            const long long lib = mysql_get_timeout_value_ms(mysql_);
            if (lib < wait_ms) {
                wait_ms = lib;
                library_timeout = true;
            }
        }
        pollfd p{};
        p.fd = mysql_get_socket(mysql_);
        if (status & MYSQL_WAIT_READ) p.events |= POLLIN;
        if (status & MYSQL_WAIT_WRITE) p.events |= POLLOUT;
        if (status & MYSQL_WAIT_EXCEPT) p.events |= POLLPRI;
        const int n = ::poll(&p, 1, static_cast<int>(std::min<long long>(wait_ms, 1 << 30)));
        if (n < 0) {
            if (errno == EINTR) continue;
            abandon(deadline, doing);
        }
        int ready = 0;
        if (n == 0) {
            if (!library_timeout) continue;  // loops to the deadline check
            ready = MYSQL_WAIT_TIMEOUT;
        } else {
            if (p.revents & (POLLIN | POLLHUP | POLLERR)) ready |= MYSQL_WAIT_READ;
            if (p.revents & (POLLOUT | POLLHUP | POLLERR)) ready |= MYSQL_WAIT_WRITE;
            if (p.revents & POLLPRI) ready |= MYSQL_WAIT_EXCEPT;
        }
        status = cont(ready);
    }
}

std::vector<StatementResult> Link::run(const std::string& sql, clock::time_point deadline,
                                       const std::string& doing, Failure* failure) {
    if (broken_)
        throw error(errc::connection,
                    target_.redact("the connection to MariaDB broke earlier; not " + doing + " [" +
                                   target_.redacted_url + "]"),
                    std::to_string(CR_SERVER_GONE_ERROR) + "/HY000");
    // The outermost call's start: its bound is what a late answer names.
    const auto now = clock::now();
    const bool outer = !in_call_;
    if (outer) began_ = now;
    struct Outer {
        bool& flag;
        bool set;
        ~Outer() {
            if (set) flag = false;
        }
    } outer_call{in_call_, outer};
    in_call_ = true;
    // Nothing is sent without time to wait for its answer: the link stays
    // as it is.
    if (now >= deadline)
        throw error(errc::connection,
                    target_.redact("no time was left for " + doing +
                                   " (its deadline had passed before it started) [" +
                                   target_.redacted_url + "]"),
                    std::to_string(CR_SERVER_LOST) + "/HY000");
    // A host another connection of this process found gone since this one
    // was opened: not waited for again.
    if (target_.url.hosts.size() > 1 && !in_open_ &&
        node_failures(target_.redacted_url, node_) != node_failures_) {
        broken_ = true;
        throw error(errc::connection,
                    target_.redact("not " + doing + " on MariaDB host " + host().label() +
                                   ": another connection of this process found it unusable "
                                   "since this one was opened [" +
                                   target_.redacted_url + "]"),
                    std::to_string(CR_SERVER_GONE_ERROR) + "/HY000");
    }
    if (any_abandoned() && !ending_abandoned_) end_abandoned(deadline);
    std::vector<StatementResult> results;
    auto server_error = [&]() -> std::vector<StatementResult> {
        Failure f = last_failure();
        if (breaks_link(f.code) || !failure) fail(doing);
        *failure = std::move(f);
        return results;
    };
    int rc = 0;
    drive([&] { return mysql_real_query_start(&rc, mysql_, sql.data(), sql.size()); },
          [&](int ready) { return mysql_real_query_cont(&rc, mysql_, ready); }, deadline, doing);
    if (rc != 0) return server_error();
    for (;;) {
        MYSQL_RES* res = nullptr;
        drive([&] { return mysql_store_result_start(&res, mysql_); },
              [&](int ready) { return mysql_store_result_cont(&res, mysql_, ready); }, deadline,
              doing);
        StatementResult r;
        if (res) {
            r.has_rows = true;
            const unsigned columns = mysql_num_fields(res);
            while (MYSQL_ROW row = mysql_fetch_row(res)) {
                const unsigned long* lengths = mysql_fetch_lengths(res);
                std::vector<std::optional<std::string>> values(columns);
                for (unsigned i = 0; i < columns; ++i)
                    if (row[i]) values[i].emplace(row[i], lengths[i]);
                r.rows.push_back(std::move(values));
            }
            mysql_free_result(res);
        } else if (mysql_field_count(mysql_) != 0) {
            return server_error();
        } else {
            r.affected = mysql_affected_rows(mysql_);
            r.insert_id = mysql_insert_id(mysql_);
        }
        results.push_back(std::move(r));
        int more = 0;
        drive([&] { return mysql_next_result_start(&more, mysql_); },
              [&](int ready) { return mysql_next_result_cont(&more, mysql_, ready); }, deadline,
              doing);
        if (more < 0) return results;
        if (more > 0) return server_error();
    }
}

void Link::end_abandoned(clock::time_point deadline) {
    std::vector<AbandonedSession> left = take_abandoned(server_key());
    if (left.empty()) return;
    ending_abandoned_ = true;
    const std::string doing = "ending a session abandoned earlier";
    // A one-row statement's `column`, as text ("" when there is none).
    auto value_of = [&](const std::string& sql, std::size_t column) {
        const auto rs = run(sql, deadline, doing);
        if (rs.empty() || rs.back().rows.empty() || rs.back().rows[0].size() <= column ||
            !rs.back().rows[0][column])
            return std::string();
        return *rs.back().rows[0][column];
    };
    try {
        // Connection ids start again when the server restarts: a session
        // opened before the server's start is gone with the old server, and
        // its id may now be another program's.
        const double uptime =
            std::strtod(value_of("SHOW GLOBAL STATUS LIKE 'Uptime'", 1).c_str(), nullptr);
        for (; !left.empty(); left.pop_back()) {
            const AbandonedSession& s = left.back();
            const double age = std::chrono::duration<double>(clock::now() - s.opened).count();
            const std::string in_list =
                "FROM information_schema.PROCESSLIST WHERE ID = " + std::to_string(s.thread);
            // Uptime is in whole seconds: a second's grace.
            if (uptime + 1 < age) continue;
            // Only a session still running a statement can still write: an
            // idle one has finished its batch (and after a failover to
            // another server, an idle session with this id is likely another
            // client's pooled connection, to be left alone).
            if (value_of("SELECT COUNT(*) " + in_list + " AND COMMAND = 'Query'", 0) == "0")
                continue;
            Failure f;
            run("KILL CONNECTION " + std::to_string(s.thread), deadline, doing, &f);
            // Gone meanwhile, or not ours (the account's own sessions may
            // always be killed): nothing to wait for.
            if (f.code == ER_NO_SUCH_THREAD || f.code == ER_KILL_DENIED_ERROR) continue;
            if (f.code != 0) throw_failure(target_, f, doing);
            // KILL only flags the session; it is over (its transaction
            // committed or rolled back, its GET_LOCKs released) when it has
            // left the process list.
            while (value_of("SELECT COUNT(*) " + in_list, 0) != "0") {
                if (clock::now() >= deadline)
                    throw error(errc::connection, target_.redact("MariaDB did not end connection " +
                                                                 std::to_string(s.thread) +
                                                                 ", abandoned earlier, in time [" +
                                                                 target_.redacted_url + "]"));
                std::this_thread::sleep_for(std::chrono::milliseconds(2));
            }
        }
    } catch (...) {
        ending_abandoned_ = false;
        for (AbandonedSession& s : left) record_abandoned(std::move(s));
        throw;
    }
    ending_abandoned_ = false;
}

}  // namespace sqlock::detail::mariadb
