/* engine.c: a tiny C engine for the C ABI tests (harness/tests/cabi.rs), one misbehaviour per
 * build, chosen by a macro:
 *
 *   GE_TEST_CRASH        declares options, answers every scenario with an error, and segfaults
 *                        on a scenario setting ge.exec.atomicCleanPolicy to 1
 *   GE_TEST_BAD_JSON     answers text that is not JSON
 *   GE_TEST_NULL_BUFFER  returns 0 from the answer function without storing a buffer
 *   GE_TEST_BAD_HELLO    greets with JSON lacking the engine's name
 *   GE_TEST_ABI_2        reports ABI version 2
 *   GE_TEST_NO_FREE      does not export ge_conformance_free
 *   GE_TEST_OFF_BY_ONE   copies the scenario into a buffer one byte too small for its NUL
 *                        terminator (for AddressSanitizer, docs/c-abi.md), then answers
 *                        not-supported
 *   GE_TEST_EXIT         like GE_TEST_CRASH, but calls exit(0) where that one segfaults
 *   GE_TEST_QUIET_EXIT   like GE_TEST_CRASH, but ends the process with _exit(0) (no atexit
 *                        handler runs) where that one segfaults
 *   GE_TEST_ATEXIT       like GE_TEST_EXIT, after registering an atexit handler of its own
 *                        that calls _exit(0) (it runs before the harness's)
 *   GE_TEST_THREAD_EXIT  answers every scenario with an error and, on its first call, starts a
 *                        thread that calls exit(0) 5 ms later, outside any engine call
 *   GE_TEST_FORK_EXIT    like GE_TEST_CRASH, but forks where that one segfaults: the parent
 *                        calls _exit(0), the child answers and the run goes on in it
 *   GE_TEST_HANG         never returns from the answer function
 *   GE_TEST_STDOUT       printf()s junk on standard output, then answers not-supported
 *   GE_TEST_LONG_LEN     answers with a one-page buffer and reports two pages (the second is
 *                        unmapped, so reading it faults)
 *   GE_TEST_DOUBLE_FREE  frees the buffers it is handed back twice (glibc aborts)
 *   GE_TEST_HEAP_CORRUPT answers not-supported padded to 100000 bytes, after writing past a
 *                        block of its own over the size of the heap's top chunk, so the
 *                        harness's next allocation from the top (the copy of that answer)
 *                        makes glibc abort: a heap the engine corrupted, found by the allocator
 *   GE_TEST_GREEDY       like GE_TEST_CRASH, but where that one segfaults it allocates and
 *                        touches 2 GiB in 1 MiB blocks, answering an error saying how far it
 *                        got: "out of memory after N MiB" or "allocated all 2048 MiB"
 *   GE_TEST_GREEDY_RAISE like GE_TEST_GREEDY, after raising its address-space limit to the
 *                        hard one (serve-dylib's --memory-limit-mib must hold anyway)
 *   GE_TEST_HOLD_STDOUT  answers every scenario with an error; its first call starts a thread
 *                        that takes C stdout's lock (flockfile) and never lets it go, and
 *                        returns once the lock is taken
 *   GE_TEST_CHDIR        answers not-supported; its first call changes the working directory
 *                        to the parent of the one it was started in
 *   GE_TEST_IGNORE_TERM  answers every scenario with an error 20 ms late; its first call
 *                        ignores SIGTERM, SIGINT and SIGHUP from then on and writes the
 *                        process id into the file $GE_TEST_PIDFILE names
 */
#define _DEFAULT_SOURCE /* mmap's MAP_ANONYMOUS under -std=c99 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "ge_conformance.h"

#if defined(GE_TEST_ATEXIT)
/* The handler this build registers: it ends the process with status 0 before the harness's. */
static void quiet_exit(void) { _exit(0); }
#endif

#if defined(GE_TEST_THREAD_EXIT)
/* The thread this build starts: it ends the process 5 ms later, outside any engine call. */
static void *exit_soon(void *unused) {
    (void)unused;
    usleep(5000);
    exit(0);
}
#endif

#if defined(GE_TEST_HOLD_STDOUT)
static volatile int stdout_held = 0;
/* The thread this build starts: it takes stdout's lock and keeps it for ever. */
static void *hold_stdout(void *unused) {
    (void)unused;
    flockfile(stdout); /* the lock this build exists to hold */
    stdout_held = 1;
    for (;;) pause();
    return NULL;
}
#endif

static int32_t give(const char *text, char **buffer, size_t *len) {
    size_t n = strlen(text);
    char *copy = malloc(n ? n : 1);
    if (!copy) return 1;
    memcpy(copy, text, n);
    *buffer = copy;
    *len = n;
    return 0;
}

GE_CONFORMANCE_EXPORT uint32_t ge_conformance_abi_version(void) {
#ifdef GE_TEST_ABI_2
    return 2;
#else
    return GE_CONFORMANCE_ABI_VERSION;
#endif
}

GE_CONFORMANCE_EXPORT int32_t ge_conformance_hello(char **hello, size_t *hello_len) {
#ifdef GE_TEST_BAD_HELLO
    return give("{\"protocol\":2,\"version\":\"0\",\"capabilities\":[\"options\"]}", hello,
                hello_len);
#else
    return give("{\"protocol\":2,\"name\":\"c-test-engine\",\"version\":\"0\","
                "\"capabilities\":[\"options\"]}",
                hello, hello_len);
#endif
}

/* True when the `len` bytes at `text` contain `needle`. */
static int contains(const char *text, size_t len, const char *needle) {
    size_t n = strlen(needle);
    for (size_t i = 0; i + n <= len; ++i)
        if (memcmp(text + i, needle, n) == 0) return 1;
    return 0;
}

GE_CONFORMANCE_EXPORT int32_t ge_conformance_answer(const char *scenario, size_t scenario_len,
                                                    const char *sandbox, char **answer,
                                                    size_t *answer_len) {
    (void)sandbox;
#if defined(GE_TEST_CRASH)
    if (contains(scenario, scenario_len, "\"ge.exec.atomicCleanPolicy\":\"1\"")) {
        volatile int *nowhere = (volatile int *)0;
        *nowhere = 1; /* the crash this build exists for */
    }
    return give("{\"type\":\"error\",\"message\":\"this engine answers nothing\"}", answer,
                answer_len);
#elif defined(GE_TEST_EXIT)
    if (contains(scenario, scenario_len, "\"ge.exec.atomicCleanPolicy\":\"1\""))
        exit(0); /* the exit this build exists for */
    return give("{\"type\":\"error\",\"message\":\"this engine answers nothing\"}", answer,
                answer_len);
#elif defined(GE_TEST_QUIET_EXIT)
    if (contains(scenario, scenario_len, "\"ge.exec.atomicCleanPolicy\":\"1\""))
        _exit(0); /* the exit this build exists for */
    return give("{\"type\":\"error\",\"message\":\"this engine answers nothing\"}", answer,
                answer_len);
#elif defined(GE_TEST_ATEXIT)
    static int registered = 0;
    if (!registered) {
        registered = 1;
        atexit(quiet_exit);
    }
    if (contains(scenario, scenario_len, "\"ge.exec.atomicCleanPolicy\":\"1\""))
        exit(1); /* the exit this build exists for; its handler turns it into status 0 */
    return give("{\"type\":\"error\",\"message\":\"this engine answers nothing\"}", answer,
                answer_len);
#elif defined(GE_TEST_THREAD_EXIT)
    (void)contains;
    (void)scenario;
    (void)scenario_len;
    static int started = 0;
    if (!started) {
        started = 1;
        pthread_t thread;
        pthread_create(&thread, NULL, exit_soon, NULL);
        pthread_detach(thread);
    }
    return give("{\"type\":\"error\",\"message\":\"this engine answers nothing\"}", answer,
                answer_len);
#elif defined(GE_TEST_HOLD_STDOUT)
    (void)contains;
    (void)scenario;
    (void)scenario_len;
    static int started = 0;
    if (!started) {
        started = 1;
        pthread_t thread;
        pthread_create(&thread, NULL, hold_stdout, NULL);
        pthread_detach(thread);
        while (!stdout_held) usleep(1000);
    }
    return give("{\"type\":\"error\",\"message\":\"this engine answers nothing\"}", answer,
                answer_len);
#elif defined(GE_TEST_CHDIR)
    (void)contains;
    (void)scenario;
    (void)scenario_len;
    static int moved = 0;
    if (!moved) {
        moved = 1;
        if (chdir("..") != 0) return 1; /* the move this build exists for */
    }
    return give("{\"type\":\"not-supported\",\"reason\":\"test engine\"}", answer, answer_len);
#elif defined(GE_TEST_IGNORE_TERM)
    (void)contains;
    (void)scenario;
    (void)scenario_len;
    static int ignoring = 0;
    if (!ignoring) {
        ignoring = 1;
        signal(SIGTERM, SIG_IGN); /* the deafness this build exists for */
        signal(SIGINT, SIG_IGN);
        signal(SIGHUP, SIG_IGN);
        const char *pidfile = getenv("GE_TEST_PIDFILE");
        FILE *f = pidfile ? fopen(pidfile, "w") : NULL;
        if (f) {
            fprintf(f, "%d\n", (int)getpid());
            fclose(f);
        }
    }
    usleep(20000);
    return give("{\"type\":\"error\",\"message\":\"this engine answers nothing\"}", answer,
                answer_len);
#elif defined(GE_TEST_FORK_EXIT)
    if (contains(scenario, scenario_len, "\"ge.exec.atomicCleanPolicy\":\"1\"")) {
        if (fork() > 0) _exit(0); /* the exit this build exists for */
    }
    return give("{\"type\":\"error\",\"message\":\"this engine answers nothing\"}", answer,
                answer_len);
#elif defined(GE_TEST_GREEDY) || defined(GE_TEST_GREEDY_RAISE)
    if (contains(scenario, scenario_len, "\"ge.exec.atomicCleanPolicy\":\"1\"")) {
#if defined(GE_TEST_GREEDY_RAISE)
        struct rlimit limit;
        if (getrlimit(RLIMIT_AS, &limit) == 0) {
            limit.rlim_cur = limit.rlim_max; /* the raise this build exists for */
            setrlimit(RLIMIT_AS, &limit);
        }
#endif
        enum { BLOCK = 1 << 20, BLOCKS = 2048 };
        static char *blocks[BLOCKS];
        int got = 0;
        while (got < BLOCKS && (blocks[got] = malloc(BLOCK)) != NULL) {
            memset(blocks[got], 1, BLOCK); /* touched: the memory this build exists to take */
            ++got;
        }
        for (int i = 0; i < got; ++i) free(blocks[i]);
        char message[128];
        if (got < BLOCKS)
            snprintf(message, sizeof message,
                     "{\"type\":\"error\",\"message\":\"out of memory after %d MiB\"}", got);
        else
            snprintf(message, sizeof message,
                     "{\"type\":\"error\",\"message\":\"allocated all %d MiB\"}", got);
        return give(message, answer, answer_len);
    }
    return give("{\"type\":\"error\",\"message\":\"this engine answers nothing\"}", answer,
                answer_len);
#elif defined(GE_TEST_HANG)
    (void)contains;
    (void)scenario;
    (void)scenario_len;
    (void)answer;
    (void)answer_len;
    for (volatile int forever = 1; forever;) {
    } /* the hang this build exists for */
    return 1;
#elif defined(GE_TEST_STDOUT)
    (void)contains;
    (void)scenario;
    (void)scenario_len;
    printf("junk from the engine on standard output\n"); /* the write this build exists for */
    return give("{\"type\":\"not-supported\",\"reason\":\"test engine\"}", answer, answer_len);
#elif defined(GE_TEST_LONG_LEN)
    (void)contains;
    (void)scenario;
    (void)scenario_len;
    long page = sysconf(_SC_PAGESIZE);
    char *pages = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (pages == MAP_FAILED) return 1;
    munmap(pages + page, (size_t)page);
    memset(pages, ' ', (size_t)page);
    *answer = pages;
    *answer_len = 2 * (size_t)page; /* the lie this build exists for */
    return 0;
#elif defined(GE_TEST_HEAP_CORRUPT)
    (void)contains;
    (void)scenario;
    (void)scenario_len;
    enum { ANSWER = 100000 };
    const char *text = "{\"type\":\"not-supported\",\"reason\":\"test engine\"}";
    char *padded = malloc(ANSWER);
    if (!padded) return 1;
    memset(padded, ' ', ANSWER);
    memcpy(padded, text, strlen(text));
    /* A block carved from the top of this thread's heap, then a write just past it: the
     * size of the top chunk, which glibc checks when it next allocates from the top. */
    char *last = malloc(70000);
    if (!last) return 1;
    size_t usable = malloc_usable_size(last);
    memset(last + usable, 0xff, sizeof(size_t)); /* the corruption this build exists for */
    *answer = padded;
    *answer_len = ANSWER;
    return 0;
#elif defined(GE_TEST_BAD_JSON)
    (void)scenario;
    (void)scenario_len;
    return give("{\"type\":\"observation\",\"observation\":", answer, answer_len);
#elif defined(GE_TEST_NULL_BUFFER)
    (void)scenario;
    (void)scenario_len;
    *answer = NULL;
    *answer_len = 0;
    return 0;
#elif defined(GE_TEST_OFF_BY_ONE)
    (void)contains;
    char *copy = malloc(scenario_len ? scenario_len : 1);
    if (!copy) return 1;
    memcpy(copy, scenario, scenario_len);
    ((volatile char *)copy)[scenario_len] = '\0'; /* the memory error this build exists for */
    free(copy);
    return give("{\"type\":\"not-supported\",\"reason\":\"test engine\"}", answer, answer_len);
#else
    (void)contains;
    (void)scenario;
    (void)scenario_len;
    return give("{\"type\":\"not-supported\",\"reason\":\"test engine\"}", answer, answer_len);
#endif
}

#ifndef GE_TEST_NO_FREE
GE_CONFORMANCE_EXPORT void ge_conformance_free(char *buffer, size_t buffer_len) {
    (void)buffer_len;
    free(buffer);
#ifdef GE_TEST_DOUBLE_FREE
    free(buffer); /* the double free this build exists for */
#endif
}
#endif
