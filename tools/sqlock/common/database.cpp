#include "common/database.hpp"

namespace sqlock_cli {

sqlock::Locker open_locker(const GlobalOptions& global, bool creating,
                           std::optional<sqlock::duration> default_timeout) {
    sqlock::LockerOptions options;
    options.table = global.table;
    if (global.db_timeout)
        options.db_timeout = *global.db_timeout;
    else if (default_timeout)
        options.db_timeout = *default_timeout;
    if (creating) options.auto_init = sqlock::LockerOptions::auto_init_mode::never;
    // A SQLite file that does not exist is reported by the library (exit 78)
    // rather than created empty; only `init` (Locker::init) creates it.
    return sqlock::Locker(global.db, options);
}

}  // namespace sqlock_cli
