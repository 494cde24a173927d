// Kept only for mounts.h and root_view.{h,cc}, which another change is
// rewriting now: every other file of the helper includes util/fd.h (sbx::Fd,
// which the helper's namespace sees as Fd).  Once those include util/fd.h
// too, this file goes.
#pragma once

#include "util/fd.h"
