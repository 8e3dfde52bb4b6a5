#include "postgres_link.hpp"

#include "postgres_conninfo.hpp"
#include "postgres_error.hpp"
#include "sqlock/error.hpp"

namespace sqlock::detail::postgres {
namespace {

// The handle the policy last completed on this thread. A connection is made
// by one thread from start to end, and Link reads this right after its
// connection's constructor returns, before the thread can make another.
thread_local PGconn* last_completed = nullptr;

}  // namespace

HandleKeepingConnect::handle HandleKeepingConnect::do_completeconnect(handle orig) {
    handle h = pqxx::connect_direct::do_completeconnect(orig);
    last_completed = h;
    return h;
}

Link::Link(const PgTarget& target) : Link(target, target.conninfo) {}

Link::Link(const PgTarget& target, const std::string& conninfo) {
    last_completed = nullptr;
    std::string skipped;  // hosts of a list that did not resolve, if another was tried
    try {
        ResolvedConnInfo resolved = resolved_conninfo(conninfo, target.timeout);
        skipped = std::move(resolved.skipped);
        conn_ = std::make_unique<PgConn>(resolved.conninfo);
    } catch (...) {
        last_completed = nullptr;
        rethrow_connect_error(target, skipped);
    }
    raw_ = last_completed;
    last_completed = nullptr;
    // The handle must be this connection's: the hot path writes on it.
    if (!raw_ || PQsocket(raw_) != conn_->sock())
        throw error(errc::backend,
                    "libpqxx made the connection without handing its libpq handle to sqlock [" +
                        target.redact.url() + "]");
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    // Deprecated in libpqxx 6 because 7 removed reactivation altogether,
    // which is the behaviour we want here.
    conn_->inhibit_reactivation(true);
#pragma GCC diagnostic pop
    quiet_ = std::make_unique<pqxx::quiet_errorhandler>(*conn_);
}

Link::~Link() {
    quiet_.reset();
    conn_.reset();
}

}  // namespace sqlock::detail::postgres
