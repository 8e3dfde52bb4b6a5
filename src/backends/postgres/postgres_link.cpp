#include "postgres_link.hpp"

#include "postgres_error.hpp"

namespace sqlock::detail::postgres {

Link::Link(const PgTarget& target) {
    try {
        conn_ = std::make_unique<pqxx::connection>(target.conninfo);
    } catch (...) {
        rethrow_connect_error(target);
    }
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
