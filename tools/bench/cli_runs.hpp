// Running the `sqlock` command against the embedded default database, kept
// inside the run's scratch directory (XDG_STATE_HOME) so that the user's own
// locks are never touched.
#pragma once

#include <string>
#include <vector>

#include "child_command.hpp"
#include "options.hpp"

namespace sqlock_bench {

/// CliRuns
///
/// The commands the command and memory rows compare: `sqlock run NAME --
/// true`, `flock -n FILE true`, `true`, and the default database's backend's
/// own baseline (BenchHooks::command_baseline: its lock row around `true` in
/// the same database, with the database's C API). Throws from the
/// constructor if the sqlock binary does not run (exit status and stderr in
/// the message).
class CliRuns {
  public:
    CliRuns(const Options& options, const std::string& scratch_dir);

    /// Whether the sqlock binary exists; the rows are skipped otherwise.
    static bool available(const Options& options);

    CommandRun sqlock_run() const { return checked(run_command(sqlock_, env_)); }
    CommandRun flock_run() const { return checked(run_command(flock_, env_)); }
    CommandRun true_run() const { return checked(run_command(true_, env_)); }
    /// Whether this build has the default database's own baseline, and its
    /// name in the rows.
    bool has_raw() const { return !raw_.empty(); }
    const std::string& raw_name() const { return raw_name_; }
    CommandRun raw_run() const { return checked(run_command(raw_, env_)); }

  private:
    static CommandRun checked(CommandRun run);
    std::vector<std::string> env_;
    std::vector<std::string> sqlock_;
    std::vector<std::string> flock_;
    std::vector<std::string> true_;
    std::vector<std::string> raw_;
    std::string raw_name_;
};

}  // namespace sqlock_bench
