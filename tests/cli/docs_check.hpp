// The command's options as it parses them (each command's cxxopts
// definitions, aliases included) held against what else lists them: the
// usage lines and help of the commands themselves, the man page's source,
// docs/cli.md and the bash completion. Each check returns the problems it
// found, one line each, naming the file, the command and the option.
//
// What "documented" means, per file:
// - man page: a command's entry under COMMANDS and, if there is one, its
//   own section ("RUN OPTIONS"); the global options under GLOBAL OPTIONS.
// - docs/cli.md: the code spans of the sections whose heading names the
//   command (`sqlock list ...`, `sqlock show ...`); the global options in
//   the text before the first command's section.
// There every name of every option must appear; an option that takes a
// value must appear with its argument's name at least once, and wherever
// an option is followed by a word in capitals, that word is its argument's
// name; where an option's own entry (a .TP entry, a table row) states a
// default, it is the one the command has. What a doc *lists* (a command's
// synopsis, an entry's tag, a table row's first cell, the usage line) names
// only options the command has.
#pragma once

#include <string>
#include <vector>

namespace sqlock_docs {

/// One option as a command defines it.
struct OptionSpec {
    std::vector<std::string> names;  ///< "-w", "--timeout", "--wait"
    std::string arg;                 ///< its argument's name ("DUR"); empty for a flag
    /// cxxopts' default, else the value of a "default X" in its help when X
    /// is a value (a number, a duration, $VARIABLE); may be empty.
    std::string default_value;
};

/// A command and its own options (the global ones apart).
struct CommandSpec {
    std::string name;
    std::string usage;
    std::string details;
    bool takes_command = false;
    std::vector<OptionSpec> options;
};

struct CliSpec {
    std::vector<CommandSpec> commands;
    std::vector<OptionSpec> global;     ///< what every command accepts
    std::vector<OptionSpec> top_level;  ///< only without a command: --version
};

/// What the command parses with: its command table and make_options().
CliSpec cli_spec();

/// The commands' own usage lines and help text.
std::vector<std::string> check_help(const CliSpec& cli);

/// The man page's source (tools/sqlock/share/sqlock.1.in).
std::vector<std::string> check_man_page(const CliSpec& cli, const std::string& roff);

/// docs/cli.md.
std::vector<std::string> check_cli_md(const CliSpec& cli, const std::string& markdown);

/// The bash completion (tools/sqlock/share/sqlock.bash): the commands, each
/// command's options (and `--` where a command follows), the global ones,
/// and which options take a value (their value is not completed as an
/// option).
std::vector<std::string> check_completion(const CliSpec& cli, const std::string& bash);

}  // namespace sqlock_docs
