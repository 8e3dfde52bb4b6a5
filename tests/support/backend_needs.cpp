#include "backend_needs.hpp"

#include <glob.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <utility>

#include "test_support.hpp"

namespace sqlock_test {
namespace {

std::string env(const std::string& name) {
    const char* value = std::getenv(name.c_str());
    return value ? value : "";
}

// The pool mode of the pooler between the suite and its server, "" when none.
std::string pool_mode() {
    const BackendContext& context = backend_context();
    if (!context.hooks.pool_mode || context.url_variable.empty()) return "";
    return context.hooks.pool_mode(env(context.url_variable));
}

// A need met where `met` holds, else missing for `why`.
Need need(std::string name, std::function<bool()> met, std::string why) {
    return {std::move(name),
            [met = std::move(met), why = std::move(why)] { return met() ? std::string() : why; }};
}

// A hook of the backend's test context, by its member's name.
template <typename Hook>
Need hook_need(const char* name, Hook BackendHooks::*hook) {
    return need(
        name, [hook] { return static_cast<bool>(backend_context().hooks.*hook); },
        "the " + backend_context().title + " test context has no " + name + " hook (src/backends/" +
            backend_context().name + "/testing/)");
}

// Whether the test server's script and directory must be there: where the
// run requires everything, or the server.
bool script_required(const BackendContext& context) {
    if (context.script_variable.empty()) return false;  // no server to script
    return require_all() ||
           (!context.require_variable.empty() && env(context.require_variable) == "1");
}

}  // namespace

const std::string& libfaketime_path() {
    static const std::string path = [] {
        glob_t found{};
        std::string first;
        if (glob("/usr/lib/*/faketime/libfaketime.so.1", 0, nullptr, &found) == 0 &&
            found.gl_pathc > 0)
            first = found.gl_pathv[0];
        globfree(&found);
        return first;
    }();
    return path;
}

std::vector<Need> backend_needs() {
    const BackendContext& context = backend_context();
    const BackendHooks& hooks = context.hooks;
    const std::string& title = context.title;
    std::vector<Need> needs{
        need("server", is_server_backend, title + " is an embedded database, not a server"),
        need(
            "embedded", [] { return !is_server_backend(); },
            title + " is a database server, not an embedded database"),
        {"transactions",
         [] {
             return pool_mode() == "statement"
                        ? "a pooler in statement mode (pooler=statement) refuses a transaction "
                          "of several statements"
                        : "";
         }},
        {"sessions",
         [] {
             const std::string mode = pool_mode();
             return mode == "transaction" || mode == "statement"
                        ? "a pooler in " + mode + " mode (pooler=" + mode +
                              ") keeps no session from one statement to the next"
                        : "";
         }},
        need(
            "cut-off",
            [&hooks] {
                return is_server_backend() || (hooks.hold_write_lock && hooks.patient_url);
            },
            "an embedded database whose test context cannot hold its write lock "
            "(hold_write_lock, patient_url)"),
        need(
            "counted-deletes",
            [&hooks] { return hooks.delete_log_sql || hooks.committed_transactions; },
            "the " + title +
                " test context can count no deletes (delete_log_sql or "
                "committed_transactions)"),
        {"schema-waits",
         [&context, &hooks] {
             return hooks.schema_change_passes_readers
                        ? hooks.schema_change_passes_readers(env(context.url_variable))
                        : std::string();
         }},
        hook_need("grant_table_use_sql", &BackendHooks::grant_table_use_sql),
        hook_need("grant_guard_use_sql", &BackendHooks::grant_guard_use_sql),
        hook_need("bad_urls", &BackendHooks::bad_urls),
        hook_need("delete_log_sql", &BackendHooks::delete_log_sql),
        hook_need("committed_transactions", &BackendHooks::committed_transactions),
        hook_need("hold_write_lock", &BackendHooks::hold_write_lock),
        hook_need("patient_url", &BackendHooks::patient_url),
        hook_need("table_dump_sql", &BackendHooks::table_dump_sql),
        hook_need("odd_timestamp_rows", &BackendHooks::odd_timestamp_rows),
        hook_need("hostile_inputs", &BackendHooks::hostile_inputs),
        hook_need("redacted_urls", &BackendHooks::redacted_urls),
        hook_need("epoch_ms_sql", &BackendHooks::epoch_ms_sql),
        hook_need("app_transaction", &BackendHooks::app_transaction),
        hook_need("client_command", &BackendHooks::client_command),
        hook_need("doctor_facts", &BackendHooks::doctor_facts),
        need(
            "missing_grant_hint", [&hooks] { return !hooks.missing_grant_hint.empty(); },
            "the " + title + " test context has no missing_grant_hint"),
        {"server-script",
         [&context] {
             if (context.script_variable.empty())
                 return context.title + " has no test server script";
             return env(context.script_variable).empty() ? context.script_variable + " is not set"
                                                         : "";
         },
         [&context] { return script_required(context); }},
        {"server-dir",
         [&context] {
             if (context.dir_variable.empty()) return context.title + " has no test server";
             const std::string dir = env(context.dir_variable);
             if (dir.empty()) return context.dir_variable + " is not set";
             std::error_code ec;
             return std::filesystem::is_directory(dir, ec)
                        ? std::string()
                        : context.dir_variable + " names no directory";
         },
         [&context] { return script_required(context); }},
        {"libfaketime",
         [] {
             return libfaketime_path().empty()
                        ? "libfaketime is not installed (apt-get install libfaketime)"
                        : "";
         },
         require_all},
    };
    return needs;
}

}  // namespace sqlock_test
