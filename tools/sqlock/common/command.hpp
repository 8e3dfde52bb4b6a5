// A command of sqlock: its name, usage, summary, help and options, and the
// function that runs it. Each command fills one in its own file under
// commands/; commands/commands.cpp lists them (the table that `sqlock
// --help` shows and the command line looks names up in).
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

/// Every command, in the order `sqlock --help` lists them
/// (commands/commands.cpp).
const std::vector<Command>& commands();

/// The command called `name`, or nullptr.
const Command* find_command(const std::string& name);

/// " (did you mean `sqlock NAME`?)" for the command nearest to a mistyped
/// `word` (at most two edits away), else "".
std::string did_you_mean(const std::string& word);

/// "usage: sqlock NAME USAGE", for a message that ends with the usage.
std::string usage_line(const std::string& name, const std::string& usage);

}  // namespace sqlock_cli
