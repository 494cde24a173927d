// The one vfork-style start of sbx and the helper: clone_on_stack runs a
// function in a child that shares the caller's memory (CLONE_VM) on a stack
// of its own, the caller suspended (CLONE_VFORK) until the child has exec'd
// or exited, as posix_spawn does, so that no page tables are copied.  sbx's
// supervisor (exec/spawn_linux.cc) and the helper's pid 1
// (linux-helper/process.cc) start their commands so.  With CloneStack,
// AddressSanitizer's view of that child: without it ASan takes the child's
// stack for the thread's, prints "ASan is ignoring requested
// __asan_handle_no_return" into the command's stderr, and leaves the child's
// frames poisoned in the shared shadow memory.  Without ASan CloneStack's
// calls are empty.  Header only, Linux only.
#pragma once

#include <sched.h>

#include <cerrno>
#include <cstddef>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace sbx {

// One per clone, in memory that the parent and the child share.
class CloneStack {
public:
    CloneStack(void* base, std::size_t size) : base_(base), size_(size) {}

    // In the parent, just before clone().
    void before_clone() {
#if defined(__SANITIZE_ADDRESS__)
        __sanitizer_start_switch_fiber(nullptr, base_, size_);
#endif
    }
    // First thing in the child.
    void in_child() {
#if defined(__SANITIZE_ADDRESS__)
        __sanitizer_finish_switch_fiber(nullptr, &parent_bottom_, &parent_size_);
#endif
    }
    // In the parent once clone() has returned (the child has exec'd or
    // exited, or never ran), before the stack is freed.
    void after_clone() {
#if defined(__SANITIZE_ADDRESS__)
        if (parent_bottom_ == nullptr)  // the child never ran: finish the switch here
            __sanitizer_finish_switch_fiber(nullptr, &parent_bottom_, &parent_size_);
        __sanitizer_start_switch_fiber(nullptr, parent_bottom_, parent_size_);
        __sanitizer_finish_switch_fiber(nullptr, nullptr, nullptr);
        ASAN_UNPOISON_MEMORY_REGION(base_, size_);
#endif
    }

private:
    void* base_;
    std::size_t size_;
    const void* parent_bottom_ = nullptr;
    std::size_t parent_size_ = 0;
};

// Runs entry(arg) in a new process on the stack [base, base + size) with
// clone flags (CLONE_VM | CLONE_VFORK | SIGCHLD; or SIGCHLD alone, a fork
// that runs on that stack, whose copy the caller may then free), ASan told
// of the switch.  Returns the child's pid, or -1 with errno set.
inline pid_t clone_on_stack(void* base, std::size_t size, int flags, int (*entry)(void*), void* arg) {
    struct Start {
        int (*entry)(void*);
        void* arg;
        CloneStack* stack;
    };
    CloneStack clone_stack(base, size);
    Start start{entry, arg, &clone_stack};
    clone_stack.before_clone();
    const pid_t pid = ::clone(
        [](void* p) {
            const auto& s = *static_cast<const Start*>(p);
            s.stack->in_child();
            return s.entry(s.arg);
        },
        static_cast<char*>(base) + size, flags, &start);
    const int saved = errno;
    clone_stack.after_clone();
    errno = saved;
    return pid;
}

}  // namespace sbx
