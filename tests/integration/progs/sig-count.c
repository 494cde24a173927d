// Counts deliveries of SIGINT, SIGTERM, SIGHUP and SIGQUIT.
//
//   sig-count READY OUT
//
// Writes its pid to READY once its handlers are in place; 300 ms after the
// first signal it writes "<count of each signal that came>" to OUT ("TERM 1"),
// and exits 7.  A signal that reaches the command twice counts 2.
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t counts[NSIG];

static void on_signal(int sig) { counts[sig]++; }

int main(int argc, char** argv) {
    if (argc != 3) return 2;
    const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
    const char* names[] = {"INT", "TERM", "HUP", "QUIT"};
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    for (int i = 0; i < 4; ++i) sigaction(sigs[i], &sa, NULL);
    FILE* ready = fopen(argv[1], "w");
    if (!ready) return 3;
    fprintf(ready, "%d\n", (int)getpid());
    fclose(ready);
    for (int waited = 0; waited < 600; ++waited) {  // up to 30 s for the first one
        int any = 0;
        for (int i = 0; i < 4; ++i) any |= counts[sigs[i]] != 0;
        if (any) break;
        struct timespec t = {0, 50 * 1000 * 1000};
        nanosleep(&t, NULL);
    }
    struct timespec rest = {0, 300 * 1000 * 1000};
    while (nanosleep(&rest, &rest) != 0) {
    }
    FILE* out = fopen(argv[2], "w");
    if (!out) return 4;
    for (int i = 0; i < 4; ++i)
        if (counts[sigs[i]]) fprintf(out, "%s%s %d", ftell(out) ? " " : "", names[i], (int)counts[sigs[i]]);
    fclose(out);
    return 7;
}
