#!/usr/bin/env python3
"""Writes sbx's zsh and fish completions from its --help.

    scripts/completions.py SBX OUTDIR

writes OUTDIR/_sbx (zsh) and OUTDIR/sbx.fish from `SBX --help` and
`SBX SUB --help` for each subcommand: every option each one lists, with the
first sentence of its description, and the values of the options that take a
fixed set (VALUES below, the same as completions/sbx.bash).  The committed
files in completions/ are this script's output; tests/integration/
completions.sh runs it again and fails on any difference, so the completions
cannot drift from --help.  The bash completion is written by hand (it must
work without the bash-completion package) and checked by running it.
"""
import re
import subprocess
import sys

SUBCOMMANDS = ["run", "learn", "policy", "check", "doctor", "trust"]

# Options whose value is one of a fixed set; the rest take a path, a
# directory, or free text (FILES, DIRS).
VALUES = {
    "--policy": "read-only workspace-write danger-full-access external-sandbox",
    "--network": "restricted limited full",
    "--ask-for-approval": "never on-failure on-request untrusted",
    "--stdin": "inherit null",
    "--keep": "head tail both",
    "--target-os": "linux macos",
    "--reject": "sandbox rules network sandbox,rules",
}
FILES = {"--policy-file", "--rules", "--approver", "--read-only", "--deny", "--read", "--write", "--exec",
         "--write-policy", "--secret-file"}
DIRS = {"--writable-root", "--workspace", "--cwd"}

OPTION = re.compile(r"^  (?:-([a-zA-Z]),)?--([a-z][a-z0-9-]*)(?: (TEXT|INT|UINT)(?: \.\.\.)?)?\s*(.*)$")


def options(sbx, sub):
    """[(short, long, takes_value, description)] as `sbx SUB --help` lists them."""
    text = subprocess.run([sbx] + ([sub] if sub else []) + ["--help"], capture_output=True, text=True,
                          check=True).stdout
    out = []
    for line in text.splitlines():
        m = OPTION.match(line)
        if m:
            desc = re.split(r": |; | \(", m.group(4))[0].rstrip(".")
            out.append((m.group(1), m.group(2), m.group(3) is not None, desc))
    return out


def quote_zsh(text):
    return text.replace("'", "'\\''").replace("[", "\\[").replace("]", "\\]").replace(":", "\\:")


def zsh(all_options):
    lines = ["#compdef sbx", "# zsh completion for sbx(1), written by scripts/completions.py from sbx's --help.", "",
             "_sbx() {", "  local -a subcommands", "  subcommands=("]
    for sub in SUBCOMMANDS:
        lines.append(f"    '{sub}'")
    lines += ["  )", "  if (( CURRENT == 2 )); then", "    _describe 'command' subcommands", "    return",
              "  fi", "  local sub=$words[2]", "  shift words", "  (( CURRENT-- ))", "  case $sub in"]
    for sub in SUBCOMMANDS:
        lines.append(f"    {sub})")
        lines.append("      _arguments -s \\")
        for short, long, takes, desc in all_options[sub]:
            names = f"{{-{short},--{long}}}" if short else f"--{long}"
            repeat = "'*'" if takes and long not in ("policy", "network", "workspace", "cwd") else ""
            exclusive = f"'(-{short} --{long})'" if short and not repeat else ""
            action = ""
            if takes:
                key = f"--{long}"
                if key in VALUES:
                    action = f":{long}:({VALUES[key]})"
                elif key in DIRS:
                    action = f":{long}:_directories"
                elif key in FILES:
                    action = f":{long}:_files"
                else:
                    action = f":{long}: "
            spec = f"{exclusive}{repeat}{names}'[{quote_zsh(desc)}]{action}'"
            lines.append(f"        {spec} \\")
        if sub == "run":
            lines.append("        '(-)*::command:_normal'")
        else:
            lines[-1] = lines[-1][: -len(" \\")]
        lines.append("      ;;")
    lines += ["  esac", "}", "", '_sbx "$@"', ""]
    return "\n".join(lines)


def fish(all_options):
    lines = ["# fish completion for sbx(1), written by scripts/completions.py from sbx's --help.", "",
             "function __sbx_in", "    set -l words (commandline -opc)",
             "    contains -- -- $words; and return 1",
             "    for sub in $argv", "        contains -- $sub $words; and return 0", "    end", "    return 1",
             "end", "",
             f"complete -c sbx -f -n 'not __sbx_in {' '.join(SUBCOMMANDS)}' -a '{' '.join(SUBCOMMANDS)}'"]
    # Each option once, for every subcommand that has it (the policy options).
    subs_of = {}
    for sub in SUBCOMMANDS:
        for option in all_options[sub]:
            subs_of.setdefault(option, []).append(sub)
    for (short, long, takes, desc), subs in subs_of.items():
        parts = [f"complete -c sbx -n '__sbx_in {' '.join(subs)}'"]
        if short:
            parts.append(f"-s {short}")
        parts.append(f"-l {long}")
        key = f"--{long}"
        if takes:
            if key in VALUES:
                parts.append(f"-x -a '{VALUES[key]}'")
            elif key in DIRS:
                parts.append("-x -a '(__fish_complete_directories)'")
            elif key in FILES:
                parts.append("-r -F")
            else:
                parts.append("-x")
        parts.append("-d '" + desc.replace("\\", "\\\\").replace("'", "\\'") + "'")
        lines.append(" ".join(parts))
    lines.append("")
    return "\n".join(lines)


def main():
    sbx, outdir = sys.argv[1], sys.argv[2]
    all_options = {sub: options(sbx, sub) for sub in SUBCOMMANDS}
    with open(f"{outdir}/_sbx", "w") as f:
        f.write(zsh(all_options))
    with open(f"{outdir}/sbx.fish", "w") as f:
        f.write(fish(all_options))


if __name__ == "__main__":
    main()
