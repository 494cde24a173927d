// A small C++ program that does what every sbx launch does at least once:
// start the C++ runtime and throw and catch an exception.  tricks.sh links
// it dynamically, -static and -static-pie (as sbx and the helper are).
#include <stdexcept>
#include <string>

int main(int argc, char**) {
    try {
        throw std::runtime_error(std::string("argc ") + std::to_string(argc));
    } catch (const std::exception& e) {
        return e.what()[0] == 'a' ? 0 : 1;
    }
}
