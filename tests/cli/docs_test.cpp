// Each option's help is written once, in the command's own definitions
// (cxxopts, in tools/sqlock/commands/ and run/run_settings.cpp); the man
// page, docs/cli.md and the bash completion are written for people, and
// held here against those definitions option by option: every option of
// every command in each of them, with its argument's name and its default,
// and none that a command lacks (docs_check.hpp says what counts where).
// The last cases show that the check does find each kind of drift, on
// altered copies of the real files.
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "docs_check.hpp"

using sqlock_docs::CliSpec;

namespace {

std::string read(const std::string& relative) {
    std::ifstream in(std::string(SQLOCK_SOURCE_DIR) + "/" + relative);
    REQUIRE(in);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::string man_page() {
    return read("tools/sqlock/share/sqlock.1.in");
}
std::string cli_md() {
    return read("docs/cli.md");
}
std::string completion() {
    return read("tools/sqlock/share/sqlock.bash");
}

const CliSpec& cli() {
    static const CliSpec spec = sqlock_docs::cli_spec();
    return spec;
}

// `text` with every `from` replaced by `to`; REQUIREs that there was one.
std::string altered(std::string text, const std::string& from, const std::string& to) {
    std::size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    for (; at != std::string::npos; at = text.find(from, at + to.size()))
        text.replace(at, from.size(), to);
    return text;
}

std::string lines(const std::vector<std::string>& problems) {
    std::string text;
    for (const std::string& p : problems) text += p + "\n";
    return text;
}

bool has_problem(const std::vector<std::string>& problems, const std::string& part) {
    for (const std::string& p : problems)
        if (p.find(part) != std::string::npos) return true;
    return false;
}

const sqlock_docs::CommandSpec& command(const std::string& name) {
    for (const auto& c : cli().commands)
        if (c.name == name) return c;
    FAIL("no command " << name);
    throw;
}

const sqlock_docs::OptionSpec* option(const std::vector<sqlock_docs::OptionSpec>& options,
                                      const std::string& name) {
    for (const auto& o : options)
        for (const auto& n : o.names)
            if (n == name) return &o;
    return nullptr;
}

}  // namespace

TEST_CASE("the options are read from the command's definitions, aliases and defaults included") {
    REQUIRE(cli().commands.size() >= 17);
    const auto* wait = option(command("run").options, "--timeout");
    REQUIRE(wait);
    CHECK(wait->names == std::vector<std::string>{"-w", "--wait", "--timeout"});
    CHECK(wait->arg == "DUR");
    CHECK(wait->default_value == "0");
    const auto* conflict = option(command("run").options, "--conflict-exit-code");
    REQUIRE(conflict);
    CHECK(conflict->default_value == "75");  // stated in its help: "(default 75)"
    const auto* value = option(command("elect").options, "--value");
    REQUIRE(value);
    CHECK(value->arg == "TEXT");
    REQUIRE(option(cli().global, "--db"));
    CHECK(option(cli().global, "--table")->default_value == "sqlock_locks");
    CHECK(option(cli().top_level, "--version"));
    CHECK_FALSE(option(cli().global, "--version"));
    CHECK(command("init").options.empty());
}

TEST_CASE("each command's usage line and help name its options as the command has them") {
    const auto problems = sqlock_docs::check_help(cli());
    INFO(lines(problems));
    CHECK(problems.empty());
}

TEST_CASE("the man page documents every option of every command as the command has it") {
    const auto problems = sqlock_docs::check_man_page(cli(), man_page());
    INFO(lines(problems));
    CHECK(problems.empty());
}

TEST_CASE("docs/cli.md documents every option of every command as the command has it") {
    const auto problems = sqlock_docs::check_cli_md(cli(), cli_md());
    INFO(lines(problems));
    CHECK(problems.empty());
}

TEST_CASE("the bash completion completes every command's options and no other") {
    const auto problems = sqlock_docs::check_completion(cli(), completion());
    INFO(lines(problems));
    CHECK(problems.empty());
}

TEST_CASE("the check finds an option left out, and one a command lacks") {
    // --min-hold renamed everywhere in the man page: run's is missing, and
    // RUN OPTIONS lists one that run does not have.
    const auto problems = sqlock_docs::check_man_page(
        cli(), altered(man_page(), "\\-\\-min\\-hold", "\\-\\-min\\-keep"));
    INFO(lines(problems));
    CHECK(has_problem(problems, "`sqlock run`: --min-hold is not documented"));
    CHECK(has_problem(problems, "`sqlock run` lists --min-keep, which it does not have"));
}

TEST_CASE("the check finds an argument named otherwise than the command names it") {
    const auto problems =
        sqlock_docs::check_cli_md(cli(), altered(cli_md(), "`--expires DUR`", "`--expires TIME`"));
    INFO(lines(problems));
    CHECK(has_problem(problems, "shows --expires TIME, but the option is --expires DUR"));
}

TEST_CASE("the check finds a default other than the command's") {
    const auto problems =
        sqlock_docs::check_man_page(cli(), altered(man_page(), "(default 1h)", "(default 2h)"));
    INFO(lines(problems));
    CHECK(has_problem(problems, "--expires has the default 1h, but the doc says 2h"));
}

TEST_CASE("the check finds a completion that lacks an option or takes a flag's value") {
    const auto lacking = sqlock_docs::check_completion(
        cli(), altered(completion(), "reap) options=\"--dry-run ", "reap) options=\""));
    INFO(lines(lacking));
    CHECK(has_problem(lacking, "completes `sqlock reap` with"));
    const auto flag = sqlock_docs::check_completion(
        cli(),
        altered(completion(), "--db | --table | --token", "--db | --table | --json | --token"));
    INFO(lines(flag));
    CHECK(has_problem(flag, "--json is completed as taking a value"));
}
