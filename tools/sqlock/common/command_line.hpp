// Parsing sqlock's command line: `sqlock [GLOBAL...] COMMAND [ARGS...]`, with
// global options allowed before or after the command word, and for `run` a
// "--" after which everything is the command to execute, untouched.
#pragma once

#include <cxxopts.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/command.hpp"
#include "common/output.hpp"
#include "sqlock/duration.hpp"

namespace sqlock_cli {

/// Options every command accepts.
struct GlobalOptions {
    std::string db;  ///< as given; may hold a password: never print it
    std::string table = "sqlock_locks";
    /// --db-timeout: LockerOptions::db_timeout, when given.
    std::optional<sqlock::duration> db_timeout;
    bool quiet = false;
    bool verbose = false;
};

/// Invocation
///
/// One parsed command line, ready to run.
struct Invocation {
    const Command* command = nullptr;
    GlobalOptions global;
    Output out;
    cxxopts::ParseResult options;        ///< the command's own options
    std::vector<std::string> args;       ///< positional arguments
    std::vector<std::string> exec_argv;  ///< after "--" (run only)
    bool has_separator = false;          ///< whether "--" was given (run only)
};

/// What the command line asks for.
struct ParsedCommandLine {
    enum class action { run, help, version };
    action what = action::run;
    Invocation invocation;  ///< action::run
    std::string text;       ///< action::help: the help to print
};

/// The command argv names (the first word that is not an option or a global
/// option's value), or nullptr; never throws. For main(), to know how to
/// report a failure before the command line is parsed.
const Command* named_command(int argc, const char* const* argv);

/// Whether `word` is one of argv's words before any "--".
bool has_word(int argc, const char* const* argv, const std::string& word);

/// Parses argv. Throws cli_error (exit 64) or cxxopts exceptions for bad
/// usage. Touches nothing outside the process.
ParsedCommandLine parse_command_line(int argc, const char* const* argv);

/// The option parser for `command` (nullptr: the top level), for parsing
/// and for its help text.
cxxopts::Options make_options(const Command* command);

/// `sqlock --help`.
std::string general_help();

/// `sqlock help COMMAND` / `sqlock COMMAND --help`.
std::string command_help(const Command& command);

/// A cxxopts message in sqlock's voice: its curly quotes become the plain
/// ' that every other sqlock message uses.
std::string plain_quotes(std::string message);

/// The option names `add_global_options` defines that take a value, for
/// finding the command word before the real parse.
bool global_option_takes_value(const std::string& token);

}  // namespace sqlock_cli
