// What a test program says when it did not run a test (support/needs.hpp,
// support/catch_session.hpp), seen from outside: reports_probe.cpp's tests
// run in a program of their own, one group at a time, and what it prints and
// exits with is checked here. Never a pass for a test that did not run or
// checked nothing.
#include <catch2/catch.hpp>

#include <string>

#include "test_support.hpp"

using Catch::Matchers::Contains;
using sqlock_test::BackendContext;
using sqlock_test::Env;
using sqlock_test::Outcome;

namespace {

const char* const probe = SQLOCK_REPORTS_PROBE;

// The first backend built that is embedded, or that is a server whose URLs
// may name a pooler; null if none.
const BackendContext* embedded() {
    for (const BackendContext& c : sqlock_test::backend_contexts())
        if (c.url_variable.empty()) return &c;
    return nullptr;
}
const BackendContext* pooled_server() {
    for (const BackendContext& c : sqlock_test::backend_contexts())
        if (!c.url_variable.empty() && c.hooks.pool_mode) return &c;
    return nullptr;
}

const sqlock_test::DeclareNeed embedded_backend{
    {"embedded-backend-built",
     [] { return embedded() ? std::string() : std::string("no embedded backend is built"); },
     nullptr}};
const sqlock_test::DeclareNeed pooled_backend{
    {"pooled-backend-built",
     [] {
         return pooled_server()
                    ? std::string()
                    : std::string("no server backend whose URLs name a pooler is built");
     },
     nullptr}};

// The probe's run of `spec` against `backend`, with `url` as its server's
// (none for an embedded backend), in an environment of nothing else of the
// tests' own.
Outcome run_probe(const BackendContext& backend, const std::string& spec,
                  const std::string& url = "", bool require_server = false) {
    Env env{{"SQLOCK_TEST_BACKEND", backend.name}, {"SQLOCK_TEST_REQUIRE_ALL", std::nullopt}};
    for (const BackendContext& c : sqlock_test::backend_contexts()) {
        if (c.url_variable.empty()) continue;
        env[c.url_variable] = std::nullopt;
        env[c.url_variable + "_FROM"] = std::nullopt;
        env[c.require_variable] = std::nullopt;
        env[c.require_variable + "_FROM"] = std::nullopt;
    }
    if (!url.empty()) env[backend.url_variable] = url;
    if (require_server) env[backend.require_variable] = "1";
    const Outcome o = sqlock_test::run({probe, spec}, env);
    UNSCOPED_INFO("probe " << spec << " on " << backend.name << " exited " << o.code << "\n"
                           << o.out << o.err);
    return o;
}

bool has_line(const std::string& text, const std::string& line) {
    return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

}  // namespace

TEST_CASE("a test that asserts nothing fails", "[reports][needs:embedded-backend-built]") {
    const Outcome nothing = run_probe(*embedded(), "[nothing]");
    CHECK(nothing.code != 0);
    CHECK_THAT(nothing.out, Contains("No assertions in test case 'probe: a test that asserts "
                                     "nothing'"));
    CHECK(has_line(nothing.out, "SQLOCK_TEST_CASES: 0 passed, 1 failed, 0 skipped"));
    // A section without sections of its own that asserts nothing fails too.
    const Outcome section = run_probe(*embedded(), "[nothing-section]");
    CHECK(section.code != 0);
    CHECK_THAT(section.out, Contains("No assertions in section 'checks nothing'"));
    CHECK(has_line(section.out, "SQLOCK_TEST_CASES: 0 passed, 1 failed, 0 skipped"));
}

TEST_CASE("a test whose need is missing is not run, and is counted as skipped with its reason",
          "[reports][needs:embedded-backend-built]") {
    const BackendContext& backend = *embedded();
    const Outcome o = run_probe(backend, "[backend]");
    CHECK(o.code == 0);
    CHECK(has_line(o.out, "SQLOCK_TEST_NOT_RUN: probe: needs a server: [needs:server]: " +
                              backend.title + " is an embedded database, not a server"));
    CHECK(o.out.find("SQLOCK_TEST_NOT_RUN: probe: needs an embedded") == std::string::npos);
    CHECK(o.out.find("SQLOCK_TEST_NOT_RUN: probe: applies") == std::string::npos);
    CHECK_THAT(o.out, Contains("All tests passed") && Contains("in 2 test cases"));
    CHECK(has_line(o.out, "SQLOCK_TEST_CASES: 2 passed, 0 failed, 1 skipped"));
    // The others ran: the ctest entry is not a skip.
    CHECK(o.out.find("SQLOCK_TEST_SKIPPED:") == std::string::npos);
    // Nor is it registered for a listing.
    const Outcome listed = run_probe(backend, "--list-test-names-only");
    CHECK_THAT(listed.out, Contains("probe: needs an embedded database"));
    CHECK(listed.out.find("probe: needs a server") == std::string::npos);
}

TEST_CASE("a run none of whose tests applies is reported as skipped, each test with its reason",
          "[reports][needs:embedded-backend-built]") {
    const Outcome o = run_probe(*embedded(), "[never]");
    CHECK(o.code == 0);
    CHECK(has_line(o.out,
                   "SQLOCK_TEST_NOT_RUN: probe: needs what is never there: "
                   "[needs:probe-never-met]: the probe's need is never met"));
    CHECK_THAT(o.out, Contains("SQLOCK_TEST_SKIPPED: "));
    CHECK(has_line(o.out, "SQLOCK_TEST_CASES: 0 passed, 0 failed, 1 skipped"));
}

TEST_CASE("a need the run requires fails its test instead of skipping it",
          "[reports][needs:embedded-backend-built]") {
    const Outcome o = run_probe(*embedded(), "[required]");
    CHECK(o.code != 0);
    CHECK_THAT(o.out, Contains("SQLOCK_TEST_FAILED_NEED: probe: needs what the run requires: "
                               "[needs:probe-required]: the probe's required need is missing"));
    CHECK(o.out.find("SQLOCK_TEST_SKIPPED:") == std::string::npos);
    CHECK(has_line(o.out, "SQLOCK_TEST_CASES: 0 passed, 1 failed, 0 skipped"));
    // Where the test does not apply anyway (another need no set-up can
    // meet), it is skipped, naming both.
    const Outcome elsewhere = run_probe(*embedded(), "[required-elsewhere]");
    CHECK(elsewhere.code == 0);
    CHECK_THAT(elsewhere.out, Contains("SQLOCK_TEST_NOT_RUN: probe: needs what the run requires, "
                                       "where it does not apply: [needs:probe-never-met]: ") &&
                                  Contains("[needs:probe-required]: "));
    CHECK(has_line(elsewhere.out, "SQLOCK_TEST_CASES: 0 passed, 0 failed, 1 skipped"));
}

TEST_CASE("a tag that names no declared need fails the program",
          "[reports][needs:embedded-backend-built]") {
    const Outcome o = run_probe(*embedded(), "[.unknown]");
    CHECK(o.code != 0);
    CHECK_THAT(o.err, Contains("test names a need nobody declared") &&
                          Contains("[needs:probe-no-such-need]"));
    CHECK(o.out.find("ran although") == std::string::npos);
}

TEST_CASE("a helper of the old style fails in a test without its tag",
          "[reports][needs:embedded-backend-built]") {
    const Outcome o = run_probe(*embedded(), "[old-style]");
    CHECK(o.code != 0);
    // (Catch2 wraps the message at spaces: each part apart.)
    CHECK_THAT(o.out, Contains("only_on_server_backend(\"the") && Contains("[needs:server]:"));
    CHECK(has_line(o.out, "SQLOCK_TEST_CASES: 0 passed, 1 failed, 0 skipped"));
}

TEST_CASE("through a pooler, the tests that need transactions or sessions are left out by mode",
          "[reports][needs:pooled-backend-built]") {
    const BackendContext& backend = *pooled_server();
    // The probe's tests of this group never connect: any URL will do.
    const std::string url = "test://sqlock@127.0.0.1:1/probe";
    const Outcome direct = run_probe(backend, "[pool]", url);
    CHECK(direct.code == 0);
    CHECK(has_line(direct.out, "SQLOCK_TEST_CASES: 3 passed, 0 failed, 0 skipped"));

    const Outcome session = run_probe(backend, "[pool]", url + "?pooler=session");
    CHECK(has_line(session.out, "SQLOCK_TEST_CASES: 3 passed, 0 failed, 0 skipped"));

    const Outcome transaction = run_probe(backend, "[pool]", url + "?pooler=transaction");
    CHECK(transaction.code == 0);
    CHECK_THAT(transaction.out, Contains("SQLOCK_TEST_NOT_RUN: probe: needs sessions: "
                                         "[needs:sessions]: a pooler in transaction mode"));
    CHECK(has_line(transaction.out, "SQLOCK_TEST_CASES: 2 passed, 0 failed, 1 skipped"));

    const Outcome statement = run_probe(backend, "[pool]", url + "?pooler=statement");
    CHECK(statement.code == 0);
    CHECK_THAT(statement.out, Contains("SQLOCK_TEST_NOT_RUN: probe: needs transactions: "
                                       "[needs:transactions]: a pooler in statement mode"));
    CHECK_THAT(statement.out, Contains("SQLOCK_TEST_NOT_RUN: probe: needs sessions: "));
    CHECK(has_line(statement.out, "SQLOCK_TEST_CASES: 1 passed, 0 failed, 2 skipped"));
}

TEST_CASE("a server backend without a server skips every test, each with the reason",
          "[reports][needs:pooled-backend-built]") {
    const BackendContext& backend = *pooled_server();
    const Outcome o = run_probe(backend, "[backend]");
    CHECK(o.code == 0);
    const std::string why = "no " + backend.title + " server (set " + backend.url_variable + ")";
    CHECK(has_line(o.out, "SQLOCK_TEST_NOT_RUN: probe: applies everywhere: " + why));
    CHECK(has_line(o.out, "SQLOCK_TEST_NOT_RUN: probe: needs a server: " + why));
    CHECK(has_line(o.out, "SQLOCK_TEST_SKIPPED: " + why));
    CHECK(has_line(o.out, "SQLOCK_TEST_CASES: 0 passed, 0 failed, 3 skipped"));
    // Where the server is required, its absence is a failure.
    const Outcome required = run_probe(backend, "[backend]", "", /*require_server=*/true);
    CHECK(required.code != 0);
    CHECK(required.out.find("SQLOCK_TEST_SKIPPED:") == std::string::npos);
}
