// AddressSanitizer's view of a clone(CLONE_VM | CLONE_VFORK) child that runs
// on a stack of its own (sbx's supervisor and the helper's pid 1 start their
// commands so).  Without it ASan takes the child's stack for the thread's,
// prints "ASan is ignoring requested __asan_handle_no_return" into the
// command's stderr, and leaves the child's frames poisoned in the shared
// shadow memory.  Without ASan every call is empty.  Header only, shared by
// sbx and the helper.
#pragma once

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

}  // namespace sbx
