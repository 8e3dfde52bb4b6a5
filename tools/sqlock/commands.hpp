// The registry of sqlock's commands: name, usage, options, and the function
// that runs it. Each command lives in its own cmd_*.cpp.
#pragma once

#include <cxxopts.hpp>
#include <string>
#include <vector>

namespace sqlock_cli {

struct Invocation;

/// Command
///
/// One subcommand. `add_options` declares its own options (the global ones
/// are added for every command); `run` returns the exit code or throws
/// cli_error / sqlock::error, which main turns into one line and a code.
struct Command {
    std::string name;
    std::string usage;    ///< what follows "sqlock NAME" in the usage line
    std::string summary;  ///< one line, for `sqlock --help`
    std::string details;  ///< printed after the options by `sqlock help NAME`
    void (*add_options)(cxxopts::Options&, const std::string& group) = nullptr;
    int (*run)(Invocation&) = nullptr;
    /// "--" ends sqlock's own options and starts a command line to execute.
    bool takes_command = false;
    /// A monitoring plugin (`check`): every failure, bad usage included, is
    /// reported by this instead of sqlock's one stderr line and exit code.
    /// It prints the plugin's UNKNOWN result on stdout (as JSON when `json`)
    /// and returns its exit code (3).
    int (*report_failure)(const std::string& message, bool json) = nullptr;
};

/// Every command, in the order `sqlock --help` lists them.
const std::vector<Command>& commands();

/// The command called `name`, or nullptr.
const Command* find_command(const std::string& name);

/// " (did you mean `sqlock NAME`?)" for the command nearest to a mistyped
/// `word` (at most two edits away), else "".
std::string did_you_mean(const std::string& word);

// The commands, each defined in its own file.
void add_run_options(cxxopts::Options& options, const std::string& group);
/// The options `run` and `elect` share (add_run_options adds them and
/// run's own: --splay, --notify...).
void add_job_options(cxxopts::Options& options, const std::string& group);
int run_run(Invocation& inv);
extern const char* const run_details;

void add_elect_options(cxxopts::Options& options, const std::string& group);
int run_elect(Invocation& inv);
extern const char* const elect_details;

void add_leader_options(cxxopts::Options& options, const std::string& group);
int run_leader(Invocation& inv);
extern const char* const leader_details;

void add_acquire_options(cxxopts::Options& options, const std::string& group);
int run_acquire(Invocation& inv);
extern const char* const acquire_details;

void add_release_options(cxxopts::Options& options, const std::string& group);
int run_release(Invocation& inv);
extern const char* const release_details;

void add_renew_options(cxxopts::Options& options, const std::string& group);
int run_renew(Invocation& inv);
extern const char* const renew_details;

void add_list_options(cxxopts::Options& options, const std::string& group);
int run_list(Invocation& inv);
void add_show_options(cxxopts::Options& options, const std::string& group);
int run_show(Invocation& inv);

void add_history_options(cxxopts::Options& options, const std::string& group);
int run_history(Invocation& inv);
extern const char* const history_details;

void add_reap_options(cxxopts::Options& options, const std::string& group);
int run_reap(Invocation& inv);
extern const char* const reap_details;

void add_pause_options(cxxopts::Options& options, const std::string& group);
int run_pause(Invocation& inv);
extern const char* const pause_details;
int run_resume(Invocation& inv);
extern const char* const resume_details;

int run_init(Invocation& inv);

void add_doctor_options(cxxopts::Options& options, const std::string& group);
int run_doctor(Invocation& inv);
extern const char* const doctor_details;

void add_check_options(cxxopts::Options& options, const std::string& group);
void add_metrics_options(cxxopts::Options& options, const std::string& group);
int run_check(Invocation& inv);
int report_check_failure(const std::string& message, bool json);
extern const char* const check_details;

int run_metrics(Invocation& inv);
extern const char* const metrics_details;

int run_help(Invocation& inv);

}  // namespace sqlock_cli
