#include "raw_client.hpp"

#include <unistd.h>

#include <cstdio>
#include <random>
#include <stdexcept>

namespace sqlock_bench {

std::unique_ptr<RawClient> connect_raw(backend_kind kind, const std::string& location,
                                       const std::string& table) {
    switch (kind) {
        case backend_kind::sqlite:
#if SQLOCK_BENCH_SQLITE
            return connect_raw_sqlite(location, table);
#else
            break;
#endif
        case backend_kind::postgresql:
#if SQLOCK_BENCH_POSTGRES
            return connect_raw_postgres(location, table);
#else
            break;
#endif
        case backend_kind::mariadb:
#if SQLOCK_BENCH_MARIADB
            return connect_raw_mariadb(location, table);
#else
            break;
#endif
    }
    throw std::runtime_error("this sqlock-bench was built without that backend");
}

std::vector<std::string> lock_table_family(const std::string& table) {
    return {table, table + "_runs", table + "_pauses", table + "_queue", table + "_leaders"};
}

std::string raw_owner_string() {
    std::random_device device;
    char token[33];
    std::snprintf(token, sizeof token, "%08x%08x%08x%08x", device(), device(), device(), device());
    char host[256] = "unknown";
    gethostname(host, sizeof host - 1);
    return std::string("{\"by\":\"raw-baseline\",\"guid\":\"") + token + "\",\"host\":\"" + host +
           "\",\"pid\":" + std::to_string(getpid()) +
           ",\"program\":\"sqlock-bench\",\"user\":\"bench\"}";
}

}  // namespace sqlock_bench
