#include "contract/schema.hpp"

#include <cstdint>
#include <cstdio>

#include "base/fnv1a.hpp"
#include "base/validate.hpp"

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

std::string schema_with_names(std::string sql, const std::string& table, const std::string& index,
                              const std::string& runs, const std::string& pauses,
                              const std::string& runs_name, const std::string& queue,
                              const std::string& queue_name, const std::string& leaders) {
    sql = substitute(std::move(sql), "table", table);
    sql = substitute(std::move(sql), "index", index);
    sql = substitute(std::move(sql), "runs", runs);
    sql = substitute(std::move(sql), "pauses", pauses);
    sql = substitute(std::move(sql), "queue_idx", quote_table_name(queue_index_name(queue_name)));
    sql = substitute(std::move(sql), "queue", queue);
    sql = substitute(std::move(sql), "leaders", leaders);
    for (const char* what : {"name", "started", "fencing"})
        sql = substitute(std::move(sql), std::string("runs_") + what + "_idx",
                         quote_table_name(runs_index_name(runs_name, what)));
    return sql;
}

std::string fit_identifier(const std::string& prefix, const std::string& suffix) {
    constexpr std::size_t max_bytes = 63;
    if (prefix.size() + suffix.size() <= max_bytes) return prefix + suffix;
    char hash[10];
    std::snprintf(hash, sizeof hash, "_%08x", static_cast<unsigned>(fnv1a32(prefix)));
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

std::string queue_table_name(const std::string& table) {
    return beside(table, "_queue");
}

std::string fencing_table_name(const std::string& table) {
    return beside(table, "_fencing");
}

std::string leaders_table_name(const std::string& table) {
    return beside(table, "_leaders");
}

std::string guard_routine_name(const std::string& table) {
    return beside(table, "_guard");
}

std::string runs_index_name(const std::string& runs, const std::string& what) {
    return fit_identifier(table_basename(runs), "_" + what + "_idx");
}

std::string queue_index_name(const std::string& queue) {
    return fit_identifier(table_basename(queue), "_name_idx");
}

}  // namespace sqlock::detail
