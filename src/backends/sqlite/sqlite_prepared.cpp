#include "sqlite_prepared.hpp"

#include "sqlite_error.hpp"

namespace sqlock::detail::sqlite {

Prepared& Prepared::bind(int index, std::int64_t value) {
    int rc = sqlite3_bind_int64(stmt_, index, value);
    if (rc != SQLITE_OK) throw_sqlite_error(db_, rc, "binding a parameter");
    return *this;
}

Prepared& Prepared::bind(int index, const std::string& value) {
    int rc = sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()),
                               SQLITE_TRANSIENT);
    if (rc != SQLITE_OK) throw_sqlite_error(db_, rc, "binding a parameter");
    return *this;
}

bool Prepared::step(const std::string& doing) {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw_sqlite_error(db_, rc, doing);
}

std::string Prepared::column_text(int col) const {
    const unsigned char* text = sqlite3_column_text(stmt_, col);
    if (!text) return {};
    return std::string(reinterpret_cast<const char*>(text),
                       static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col)));
}

}  // namespace sqlock::detail::sqlite
