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
/// The three commands the command and memory rows compare: `sqlock run NAME
/// -- true`, `flock -n FILE true` and `true`. Throws from the constructor if
/// the sqlock binary does not run (exit status and stderr in the message).
class CliRuns {
  public:
    CliRuns(const Options& options, const std::string& scratch_dir);

    /// Whether the sqlock binary exists; the rows are skipped otherwise.
    static bool available(const Options& options);

    CommandRun sqlock_run() const { return checked(run_command(sqlock_, env_)); }
    CommandRun flock_run() const { return checked(run_command(flock_, env_)); }
    CommandRun true_run() const { return checked(run_command(true_, env_)); }

  private:
    static CommandRun checked(CommandRun run);
    std::vector<std::string> env_;
    std::vector<std::string> sqlock_;
    std::vector<std::string> flock_;
    std::vector<std::string> true_;
};

}  // namespace sqlock_bench
