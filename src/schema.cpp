#include "schema.hpp"

#include <cstdint>
#include <cstdio>

#include "validate.hpp"

namespace sqlock::detail {

std::string substitute(std::string sql, const std::string& key, const std::string& value) {
    const std::string needle = "${" + key + "}";
    std::size_t pos = 0;
    while ((pos = sql.find(needle, pos)) != std::string::npos) {
        sql.replace(pos, needle.size(), value);
        pos += value.size();
    }
    return sql;
}

std::string fit_identifier(const std::string& prefix, const std::string& suffix) {
    constexpr std::size_t max_bytes = 63;
    if (prefix.size() + suffix.size() <= max_bytes) return prefix + suffix;
    std::uint32_t h = 2166136261u;  // FNV-1a: names a table, not a security measure
    for (unsigned char c : prefix) {
        h ^= c;
        h *= 16777619u;
    }
    char hash[10];
    std::snprintf(hash, sizeof hash, "_%08x", static_cast<unsigned>(h));
    return prefix.substr(0, max_bytes - suffix.size() - 9) + hash + suffix;
}

namespace {

std::string beside(const std::string& table, const std::string& suffix) {
    const std::string base = fit_identifier(table_basename(table), suffix);
    const std::size_t dot = table.find('.');
    return dot == std::string::npos ? base : table.substr(0, dot + 1) + base;
}

}  // namespace

std::string runs_table_name(const std::string& table) {
    return beside(table, "_runs");
}

std::string pauses_table_name(const std::string& table) {
    return beside(table, "_pauses");
}

std::string runs_index_name(const std::string& runs, const std::string& what) {
    return fit_identifier(table_basename(runs), "_" + what + "_idx");
}

}  // namespace sqlock::detail
