#include "raw_client.hpp"

#include <unistd.h>

#include <cstdio>
#include <random>

namespace sqlock_bench {

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
