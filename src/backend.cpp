#include "backend.hpp"

#include "sqlock/config.hpp"
#include "sqlock/error.hpp"
#include "url.hpp"
#include "validate.hpp"
#if SQLOCK_WITH_SQLITE
#include "backends/sqlite/sqlite_backend.hpp"
#endif
#if SQLOCK_WITH_POSTGRES
#include "backends/postgres/postgres_backend.hpp"
#endif
#if SQLOCK_WITH_MARIADB
#include "backends/mariadb/mariadb_backend.hpp"
#endif

namespace sqlock::detail {

std::string slot_lockstring(const std::string& name, int slot) {
    return name + "#" + std::to_string(slot);
}

AcquireResult Connection::try_acquire_slot(const std::string& name, int capacity, duration lease,
                                           const std::string& locked_by, int* slot_out) {
    // Lowest slot first, always in the same order: concurrent callers cannot
    // livelock, and capacity changes only move the upper bound.
    AcquireResult last;
    for (int slot = 1; slot <= capacity; ++slot) {
        AcquireResult r = try_acquire(slot_lockstring(name, slot), lease, locked_by);
        if (r.acquired) {
            *slot_out = slot;
            return r;
        }
        // Report the slot that frees up first.
        if (r.holder && (!last.holder || r.holder->seconds_left < last.holder->seconds_left))
            last.holder = r.holder;
    }
    return last;
}

std::unique_ptr<Backend> make_backend(const DatabaseUrl& url, const std::string& table,
                                      duration timeout) {
    (void)timeout;  // only servers have round trips to bound
    switch (url.scheme) {
        case DatabaseUrl::scheme_kind::sqlite:
#if SQLOCK_WITH_SQLITE
            return make_sqlite_backend(url, table);
#else
            throw error(errc::configuration,
                        "this sqlock was built without SQLite support "
                        "(SQLOCK_WITH_SQLITE=OFF): cannot open '" +
                            url.redacted + "'");
#endif
        case DatabaseUrl::scheme_kind::postgresql:
#if SQLOCK_WITH_POSTGRES
            return make_postgres_backend(url, table, timeout);
#else
            throw error(errc::configuration,
                        "this sqlock was built without PostgreSQL support "
                        "(SQLOCK_WITH_POSTGRES=OFF): cannot open '" +
                            url.redacted + "'");
#endif
        case DatabaseUrl::scheme_kind::mariadb:
#if SQLOCK_WITH_MARIADB
            return make_mariadb_backend(url, table, timeout);
#else
            throw error(errc::configuration,
                        "this sqlock was built without MariaDB support "
                        "(SQLOCK_WITH_MARIADB=OFF): cannot open '" +
                            url.redacted + "'");
#endif
    }
    throw error(errc::configuration, "unsupported database URL '" + url.redacted + "'");
}

}  // namespace sqlock::detail
