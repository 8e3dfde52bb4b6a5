#include "common/command_line.hpp"

#include <cstring>

#include "common/exit_codes.hpp"
#include "common/option_values.hpp"
#include "common/password_scrub.hpp"
#include "sqlock/config.hpp"

namespace sqlock_cli {
namespace {

void add_global_options(cxxopts::Options& options, bool top_level) {
    auto add = options.add_options("global");
    add("db",
        "Database URL: sqlite:///path/locks.db, postgresql://user@host/db or "
        "mariadb://user@host/db (default: $SQLOCK_DB, "
        "else the embedded SQLite database ~/.local/state/sqlock/locks.db). Prefer SQLOCK_DB, "
        "PGPASSWORD or ~/.pgpass to a password here",
        cxxopts::value<std::string>(), "URL");
    add("table", "Lock table name", cxxopts::value<std::string>()->default_value("sqlock_locks"),
        "NAME");
    add("db-timeout",
        "Longest wait for a database server to answer (connecting, each statement) before "
        "giving up with exit 69 (default 10s; for run: a sixth of --expires, 1s to 10s)",
        cxxopts::value<std::string>(), "DUR");
    add("q,quiet", "Print only errors; a busy lock is not an error");
    add("v,verbose",
        "Say what was done, and show the progress line while waiting even when stderr is not "
        "a terminal");
    add("h,help", "Show help");
    if (top_level) add("version", "Print the version and the backends built in");
}

// Renders option groups without cxxopts' own usage line (we print ours).
std::string groups_help(const cxxopts::Options& options, const std::vector<std::string>& groups) {
    std::string text = options.help(groups, false);
    std::size_t start = text.find_first_not_of("\n ");
    return start == std::string::npos ? "" : " " + text.substr(start);
}

}  // namespace

std::string plain_quotes(std::string message) {
    for (const char* curly : {"\xE2\x80\x98", "\xE2\x80\x99"}) {  // U+2018, U+2019
        std::size_t at;
        while ((at = message.find(curly)) != std::string::npos) message.replace(at, 3, "'");
    }
    return message;
}

bool global_option_takes_value(const std::string& token) {
    return token == "--db" || token == "--table" || token == "--db-timeout";
}

cxxopts::Options make_options(const Command* command) {
    cxxopts::Options options(command ? "sqlock " + command->name : "sqlock", "");
    options.custom_help("");
    options.positional_help("");
    options.set_width(92);  // wrapped lines stay under 100 columns
    if (command && command->add_options) command->add_options(options, command->name);
    add_global_options(options, command == nullptr);
    options.add_options()("args", "", cxxopts::value<std::vector<std::string>>());
    options.parse_positional("args");
    return options;
}

std::string general_help() {
    std::string text = "sqlock " SQLOCK_VERSION
                       ": named locks and counting semaphores stored as rows in a SQL table\n\n"
                       "Usage: sqlock [GLOBAL OPTIONS] COMMAND [ARGS...]\n\nCommands:\n";
    for (const Command& c : commands()) {
        std::string left = "  " + c.name + " " + c.usage;
        if (left.size() < 44)
            left.resize(44, ' ');
        else
            left += "\n" + std::string(44, ' ');
        text += left + c.summary + "\n";
    }
    text += "\n" + groups_help(make_options(nullptr), {"global"});
    text +=
        "\nDurations: 90 (seconds), 90s, 15m, 2h, 1d, 1h30m, 250ms.\n\n"
        "Environment:\n"
        "  SQLOCK_DB     database URL when --db is not given (keeps passwords out of ps)\n"
        "  SQLOCK_TOKEN  owner token for `sqlock release` (set by eval \"$(sqlock acquire ...)\")\n"
        "  PGPASSWORD, PGPASSFILE, ~/.pgpass   PostgreSQL passwords, read by libpq\n\n" +
        exit_code_help() + "\nRun `sqlock help COMMAND` for a command's options.\n";
    return text;
}

std::string command_help(const Command& command) {
    std::string text = "sqlock " + command.name + ": " + command.summary + "\n\nUsage: sqlock " +
                       command.name + " " + command.usage + "\n\n" +
                       groups_help(make_options(&command), {command.name, "global"});
    if (!command.details.empty()) text += "\n" + command.details;
    return text;
}

namespace {

// The command word is the first argument that is neither an option nor
// the value of a global option that takes one (`--db URL`); -1 if none.
int command_word_at(int argc, const char* const* argv) {
    for (int i = 1; i < argc; ++i) {
        std::string token = argv[i];
        if (token == "--") break;
        if (token.size() > 1 && token[0] == '-') {
            if (global_option_takes_value(token)) ++i;
            continue;
        }
        return i;
    }
    return -1;
}

}  // namespace

const Command* named_command(int argc, const char* const* argv) {
    const int at = command_word_at(argc, argv);
    return at > 0 ? find_command(argv[at]) : nullptr;
}

bool has_word(int argc, const char* const* argv, const std::string& word) {
    for (int i = 1; i < argc && std::strcmp(argv[i], "--") != 0; ++i)
        if (word == argv[i]) return true;
    return false;
}

ParsedCommandLine parse_command_line(int argc, const char* const* argv) {
    const int command_at = command_word_at(argc, argv);
    const Command* command = nullptr;
    if (command_at > 0) {
        command = find_command(argv[command_at]);
        if (!command) {
            // `sqlock --expires 5m run ...`: the value was taken for the command.
            bool after_option = command_at > 1 && argv[command_at - 1][0] == '-';
            throw usage_error("unknown command " + in_quotes(without_passwords(argv[command_at])) +
                              (after_option ? "; a command's own options go after it (sqlock "
                                              "run NAME --expires 5m -- ...)"
                                            : did_you_mean(argv[command_at]) +
                                                  "; see `sqlock --help` for the list"));
        }
    }

    // For `run`, everything after the first "--" is the command to execute:
    // it must not be parsed as ours, whatever options it has.
    int separator = argc;
    if (command && command->takes_command) {
        for (int i = command_at + 1; i < argc; ++i) {
            if (std::strcmp(argv[i], "--") == 0) {
                separator = i;
                break;
            }
        }
    }
    std::vector<const char*> own{argv[0]};
    for (int i = 1; i < separator; ++i)
        if (i != command_at) own.push_back(argv[i]);

    cxxopts::Options options = make_options(command);
    cxxopts::ParseResult result;
    try {
        result = options.parse(static_cast<int>(own.size()), own.data());
    } catch (const cxxopts::exceptions::exception& e) {
        throw usage_error((command ? command->name + ": " : std::string()) +
                          plain_quotes(e.what()) +
                          (command ? "; see `sqlock help " + command->name + "`"
                                   : std::string("; see `sqlock --help`")));
    }

    ParsedCommandLine parsed;
    if (result.count("help")) {
        parsed.what = ParsedCommandLine::action::help;
        parsed.text = command ? command_help(*command) : general_help();
        return parsed;
    }
    if (!command) {
        if (result.count("version")) {
            parsed.what = ParsedCommandLine::action::version;
            return parsed;
        }
        throw usage_error("no command given; see `sqlock --help`");
    }

    Invocation& inv = parsed.invocation;
    inv.command = command;
    if (result.count("db")) {
        inv.global.db = result["db"].as<std::string>();
        // `--db "$LOCK_DB"` with the variable unset must not quietly lock
        // in this host's own default database: two hosts would both run.
        if (inv.global.db.empty())
            throw usage_error(
                "--db is empty: give a database URL, or leave --db out for $SQLOCK_DB or the "
                "embedded default");
    }
    inv.global.table = result["table"].as<std::string>();
    if (result.count("db-timeout"))
        inv.global.db_timeout = parse_duration_option(
            "db-timeout", result["db-timeout"].as<std::string>(), duration_kind::positive);
    inv.global.quiet = result.count("quiet") > 0;
    inv.global.verbose = result.count("verbose") > 0;
    if (inv.global.quiet && inv.global.verbose)
        throw usage_error("--quiet and --verbose contradict each other");
    inv.out = Output(inv.global.quiet, inv.global.verbose);
    if (result.count("args")) inv.args = result["args"].as<std::vector<std::string>>();
    if (!result.unmatched().empty())
        throw usage_error("unexpected argument " +
                          in_quotes(without_passwords(result.unmatched().front())) + " for `" +
                          command->name + "`; see `sqlock help " + command->name + "`");
    inv.has_separator = separator < argc;
    for (int i = separator + 1; i < argc; ++i) inv.exec_argv.emplace_back(argv[i]);
    inv.options = std::move(result);
    return parsed;
}

}  // namespace sqlock_cli
