#include "denial/analyze.h"

#include <algorithm>

#include <fmt/format.h>

#include "denial/fix.h"

namespace sbx {

namespace {

// The proxy's refusals come first (exact, with their own rule and fix); a
// command that failed after one failed of the sandbox.
void add_proxy_denials(DenialAnalysis& a, const RunOutcome& r, const std::vector<Denial>& refused) {
    a.denials.insert(a.denials.begin(), refused.begin(), refused.end());
    a.recorded = true;  // these are exact, whether or not the recorder ran
    if (r.exit_code != 0 && !r.timed_out) {
        a.sandbox_denied = true;
        if (a.reason.empty()) a.reason = "recorded";
    }
}

}  // namespace

bool recorder_ran(const CanonicalPolicy& policy, const HelperStatus& helper) {
    return policy.sandboxed_filesystem() &&
           std::none_of(helper.not_enforced.begin(), helper.not_enforced.end(),
                        [](const std::string& what) { return what.starts_with("recorded denials"); });
}

Denial proxy_refusal(const std::string& host, std::uint16_t port, Fix fix) {
    Denial d;
    d.operation = "connect";
    d.address =
        host.find(':') != std::string::npos ? fmt::format("[{}]:{}", host, port) : fmt::format("{}:{}", host, port);
    d.fix = std::move(fix);
    return d;
}

DenialAnalysis analyze(const Evidence& e, const CanonicalPolicy& policy, const Environment& env) {
    DenialAnalysis a = analyze_denial(e.outcome, e.sandboxed);
    a.denials = e.logged;
    if (e.helper && e.record_denials && recorder_ran(policy, *e.helper))
        a = analyze_recorded(e.outcome, *e.helper, e.logged);
    else if (e.helper) add_recorded_network(a, e.outcome, *e.helper);
    if (!e.refused.empty()) add_proxy_denials(a, e.outcome, e.refused);
    name_lookups(a, e.outcome);
    if (e.sandboxed) explain_denials(a, policy, env);
    return a;
}

}  // namespace sbx
