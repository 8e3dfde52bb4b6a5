#include "schema.hpp"

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

}  // namespace sqlock::detail
