// What `sqlock doctor` reports about a SQLite lock table.
#pragma once

#include <string>

#include "sqlite_url.hpp"
#include "sqlock/diagnosis.hpp"

namespace sqlock::detail::sqlite {

/// Adds, beside the usual facts: whether locking can work here (the file,
/// the lock table, this user's access, as init checks them), and the tables
/// beside the lock table: one made before sqlock had a history or pauses
/// locks as before, but those do not work until `sqlock init` adds them.
/// Access is the file's, one for all tables. Never writes, and never waits
/// for a database another connection holds locked.
void diagnose(const SqliteUrl& url, const std::string& table, Diagnosis& out);

}  // namespace sqlock::detail::sqlite
