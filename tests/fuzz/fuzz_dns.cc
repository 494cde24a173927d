// libFuzzer target for the transparent-TCP resolver (linux-helper/transparent.h):
// any datagram a sandboxed command sends to 127.0.0.53 gets either no answer
// (not a query) or one that echoes its id, is a response, carries at most
// one answer, and fits in a UDP datagram; an A or AAAA answer names a
// synthetic address that stands for the name it was asked.
#include <arpa/inet.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>

#include "transparent.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static sbx::helper::SyntheticNames names;  // shared across inputs, as in one sandbox
    const auto answer = sbx::helper::dns_answer(std::span(data, size), names);
    if (!answer) return 0;
    const auto& a = *answer;
    if (a.size() < 12 || a.size() > 512 + 64) std::abort();
    if (a[0] != data[0] || a[1] != data[1]) std::abort();  // the id
    if (!(a[2] & 0x80)) std::abort();                      // a response
    const int answers = a[6] << 8 | a[7];
    if (answers > 1) std::abort();
    if (answers == 1) {
        // The record ends the answer: RDLENGTH (4 or 16) just before the RDATA.
        const bool v4 = a[a.size() - 6] == 0 && a[a.size() - 5] == 4;
        in_addr v4addr{};
        in6_addr v6addr{};
        if (v4) std::memcpy(&v4addr, a.data() + a.size() - 4, 4);
        else std::memcpy(&v6addr, a.data() + a.size() - 16, 16);
        const bool loopback = v4 ? ntohl(v4addr.s_addr) == INADDR_LOOPBACK : IN6_IS_ADDR_LOOPBACK(&v6addr);
        if (!loopback && !(v4 ? names.name_of(v4addr) : names.name_of(v6addr))) std::abort();
    }
    return 0;
}
