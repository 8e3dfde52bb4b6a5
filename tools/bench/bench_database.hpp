// A fresh lock table for one measurement, removed again afterwards.
#pragma once

#include <memory>
#include <string>

#include "raw_client.hpp"
#include "sqlock/sqlock.hpp"
#include "target.hpp"

namespace sqlock_bench {

/// BenchDatabase
///
/// An empty lock table created by sqlock itself (Locker::init): on an
/// embedded backend a new file in the run's scratch directory, on a server a
/// new table with a name unique to this run. The destructor drops the table
/// (a server) or removes the file and its WAL (embedded), reporting but not
/// throwing on failure. Only the parent process may destroy it; workers leave with
/// _exit() and never do.
class BenchDatabase {
  public:
    BenchDatabase(const BackendTarget& target, const std::string& label);
    ~BenchDatabase();
    BenchDatabase(const BenchDatabase&) = delete;
    BenchDatabase& operator=(const BenchDatabase&) = delete;

    /// A Locker on the table (opens connections lazily).
    sqlock::Locker open(std::size_t pool_size = 4) const;
    /// A baseline client on the same table.
    std::unique_ptr<RawClient> raw() const;

    const std::string& table() const { return table_; }

  private:
    const BackendTarget& target_;
    std::string url_;       // for sqlock; on a server it holds the password
    std::string location_;  // for the raw client: a path, or the URL
    std::string table_;
};

}  // namespace sqlock_bench
