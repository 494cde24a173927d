#pragma once

namespace sbx::cli {

// Parses argv and runs the command; returns sbx's exit status.  Throws
// sbx::Error for every refusal (the caller prints it and exits 125).
int main(int argc, char** argv);

}  // namespace sbx::cli
