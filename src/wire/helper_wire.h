// The wire between sbx and its Linux helper, written once: the helper's
// options (sbx writes them in platform/plan.cc linux_helper_args, the helper
// parses them in linux-helper/args.cc) and the keys of the JSON lines the
// helper reports on --status-fd (linux-helper/status.cc writes them,
// denial/helper_status.cc reads them back; status.h shows each line).
// Header only: both executables include it, and it depends on nothing.
// tests/unit/test_helper_wire.cc runs each side into the other.
#pragma once

namespace sbx::wire {

// The helper's options (codex-linux-sandbox(1); CODEX-HELPER.md section 2
// for the ones Codex sends).
namespace option {
inline constexpr char kPolicyCwd[] = "--sandbox-policy-cwd";
inline constexpr char kCommandCwd[] = "--command-cwd";
inline constexpr char kPermissionProfile[] = "--permission-profile";
inline constexpr char kSandboxPolicy[] = "--sandbox-policy";
inline constexpr char kManagedNetwork[] = "--managed-network";
inline constexpr char kTransparentTcp[] = "--transparent-tcp";
inline constexpr char kLegacyLandlock[] = "--use-legacy-landlock";
inline constexpr char kNoProc[] = "--no-proc";
inline constexpr char kInheritPidNamespace[] = "--inherit-pid-namespace";
inline constexpr char kStatusFd[] = "--status-fd";
inline constexpr char kRecordDenials[] = "--record-denials";
inline constexpr char kRecordNetwork[] = "--record-network";
inline constexpr char kProxyFd[] = "--proxy-fd";
inline constexpr char kPrivateTerminal[] = "--private-terminal";
inline constexpr char kLearn[] = "--learn";
inline constexpr char kLearnReads[] = "--learn-reads";
inline constexpr char kMaskFile[] = "--mask-file";
}  // namespace option

// The status lines: one JSON object each, {KIND: DETAIL}.
namespace status {
// {"error": {"step", "reason", "fix", "message"}}
inline constexpr char kError[] = "error";
inline constexpr char kStep[] = "step";
inline constexpr char kReason[] = "reason";
inline constexpr char kFix[] = "fix";
inline constexpr char kMessage[] = "message";
// {"exec_error": {"argv0", "path", "errno", "error", "mode"}}
inline constexpr char kExecError[] = "exec_error";
inline constexpr char kArgv0[] = "argv0";
inline constexpr char kPath[] = "path";
inline constexpr char kErrno[] = "errno";
inline constexpr char kErrorText[] = "error";
inline constexpr char kMode[] = "mode";
// {"not_enforced": {"reason", "items"}}
inline constexpr char kNotEnforced[] = "not_enforced";
inline constexpr char kItems[] = "items";
// {"denied": {"op", "path", "address", "pid", "program"}}
inline constexpr char kDenied[] = "denied";
inline constexpr char kOp[] = "op";
inline constexpr char kAddress[] = "address";
inline constexpr char kPid[] = "pid";
inline constexpr char kProgram[] = "program";
// {"denied_omitted": N}
inline constexpr char kDeniedOmitted[] = "denied_omitted";
}  // namespace status

}  // namespace sbx::wire
