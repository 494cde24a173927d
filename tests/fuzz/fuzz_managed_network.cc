// libFuzzer target for Codex's --managed-network JSON and the proxy variables
// it needs (linux-helper/managed_network.cc): the first line of the input is
// the JSON, every further line one "NAME=VALUE" of the environment.  Any input
// either is refused with a StepError or yields ports to bridge: those of
// loopbackPorts when it has some, else those the variables name, never none.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "managed_network.h"
#include "step_error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    const std::string_view json = text.substr(0, text.find('\n'));
    std::vector<std::string_view> environment;
    for (std::size_t start = json.size() + 1; start < text.size();) {
        const std::size_t end = std::min(text.find('\n', start), text.size());
        environment.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    try {
        const sbx::helper::ManagedNetwork network = sbx::helper::parse_managed_network(json);
        const std::vector<std::uint16_t> ports = sbx::helper::bridged_ports(network, environment);
        if (ports.empty()) std::abort();
        if (!network.loopback_ports.empty() && ports != network.loopback_ports) std::abort();
        if (std::find(ports.begin(), ports.end(), 0) != ports.end()) std::abort();
    } catch (const sbx::helper::StepError&) {
        // A refusal with a message is the expected outcome for bad input.
    }
    return 0;
}
