/*
 * ge_conformance.h: the C ABI through which ge-conformance certifies and fuzzes an engine built
 * as a shared library (C, C++ or anything that can export C functions).
 *
 * The ABI carries the same JSON as the subprocess protocol (docs/protocol.md): a scenario is the
 * JSON that `ge-conformance eval` reads (spec/schema/scenario.schema.json) and an observation is
 * the JSON it prints (spec/schema/observation.schema.json). docs/c-abi.md explains how to build,
 * certify and fuzz an engine through it.
 *
 * An engine exports the four functions below, with C linkage and these exact names.
 *
 * VERSIONS
 *   GE_CONFORMANCE_ABI_VERSION is the version of this header. The harness calls
 *   ge_conformance_abi_version() first, before any other function, and refuses a library that
 *   returns another number (a typed error naming both versions; nothing else is called). The
 *   JSON inside the buffers follows protocol version GE_CONFORMANCE_PROTOCOL_VERSION, which the
 *   hello repeats.
 *
 * BUFFERS AND OWNERSHIP
 *   - Input buffers (the scenario bytes, the sandbox path) belong to the harness and are valid
 *     only during the call: copy what you keep. The scenario is UTF-8 JSON of `scenario_len`
 *     bytes and is NOT terminated by a NUL byte.
 *   - Output buffers (the hello, each answer) belong to the engine: it allocates them any way
 *     it likes, stores their address and length through the out-pointers, and the harness hands
 *     each one back, exactly once and unchanged, to ge_conformance_free() after copying it. The
 *     harness never frees them any other way and never writes into them.
 *   - A function returns 0 when it stored a buffer, anything else when it could not (out of
 *     memory, say); then the harness reads nothing and frees nothing, and the trial fails with
 *     the status. A returned 0 with a NULL buffer is reported the same way.
 *
 * THREADING
 *   The harness never makes two calls into the library at once: every call is made under one
 *   lock, although successive calls may come from different threads. The engine needs no locking
 *   of its own, but must not rely on thread-local state surviving from one call to the next.
 *   Each answer must depend on its scenario alone (the harness asks the same scenario twice
 *   when it compares plans, and shrinks failing scenarios by asking again).
 *
 * WHAT A CRASH MEANS
 *   In-process (`--backend dylib:PATH`) the engine shares the harness's process: a segfault, an
 *   abort, an exception escaping a function (which must be declared noexcept in C++), a call
 *   to exit(), an infinite loop or memory corruption takes the harness down with it or
 *   corrupts its results. The harness then prints which library, which function and which
 *   scenario, and the isolated command to use, and the run ends without a report: with the
 *   signal for a crash, exit status 3 for an exit() inside a call, 4 for a call that did not
 *   return within --timeout-ms. Use the in-process route for fuzzing and quick loops.
 *   Isolated (`--backend 'exec:ge-conformance serve-dylib PATH'`) the library lives in a child
 *   process speaking the subprocess protocol, its address space limited (--memory-limit-mib):
 *   a crash, an exit, a hang or an allocation past the limit fails that one trial, the child
 *   is restarted, and the run goes on. Certify through the isolated route.
 *
 * STANDARD STREAMS
 *   The engine must not write to standard output: the harness points it at standard error
 *   during each call in-process, and for the whole child under serve-dylib, so a stray printf
 *   breaks neither the report nor the protocol. Standard error is free for logs.
 */
#ifndef GE_CONFORMANCE_H
#define GE_CONFORMANCE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this ABI. Bumped on any change to the functions below or to how their buffers
 * are owned; ge_conformance_abi_version() must return it. */
#define GE_CONFORMANCE_ABI_VERSION 1u

/* The version of the JSON vocabulary inside the buffers: the subprocess protocol's version. */
#define GE_CONFORMANCE_PROTOCOL_VERSION 2u

#if defined(_WIN32)
#define GE_CONFORMANCE_EXPORT __declspec(dllexport)
#else
#define GE_CONFORMANCE_EXPORT __attribute__((visibility("default")))
#endif

#if defined(__cplusplus) && __cplusplus >= 201103L
#define GE_CONFORMANCE_NOEXCEPT noexcept
#else
#define GE_CONFORMANCE_NOEXCEPT
#endif

/* Returns GE_CONFORMANCE_ABI_VERSION as the engine was compiled with it. Called first. */
GE_CONFORMANCE_EXPORT uint32_t ge_conformance_abi_version(void) GE_CONFORMANCE_NOEXCEPT;

/* Stores the engine's hello, UTF-8 JSON of one object:
 *
 *   {"protocol":2,"name":"my-engine","version":"1.0.0",
 *    "capabilities":["options","transfer"],"profiles":["documented"]}
 *
 * `protocol` must be GE_CONFORMANCE_PROTOCOL_VERSION; `capabilities` is any subset of options,
 * transfer, memory, session, weights; `profiles` (optional; absent or empty: documented) lists
 * the profiles the engine can be certified against (documented, upstream). Unknown fields are
 * an error. Called once, after ge_conformance_abi_version(). Returns 0 when *hello and
 * *hello_len were set; the buffer is freed with ge_conformance_free(). */
GE_CONFORMANCE_EXPORT int32_t ge_conformance_hello(char **hello, size_t *hello_len)
    GE_CONFORMANCE_NOEXCEPT;

/* Answers one scenario. `scenario` holds `scenario_len` bytes of JSON (no NUL at the end), one
 * object tagged by "capability". `sandbox` is NULL except for the weights capability, where it
 * is the NUL-terminated absolute path of an existing, empty directory the engine does all its
 * file work in (docs/protocol.md, "Requests and responses").
 *
 * Stores in *answer (and its length in *answer_len) exactly one JSON object:
 *
 *   {"type":"observation","observation":{"capability":"options", ...}}
 *   {"type":"not-supported","reason":"transfer is not implemented"}
 *   {"type":"error","message":"internal error: ..."}
 *
 * the three answers of the subprocess protocol without their `id`. The observation's
 * capability must be the scenario's; not-supported for a capability the hello declared is a
 * failure; error fails the trial with the message. Returns 0 when *answer and *answer_len were
 * set; the buffer is freed with ge_conformance_free(). */
GE_CONFORMANCE_EXPORT int32_t ge_conformance_answer(const char *scenario, size_t scenario_len,
                                                    const char *sandbox, char **answer,
                                                    size_t *answer_len) GE_CONFORMANCE_NOEXCEPT;

/* Frees a buffer that ge_conformance_hello() or ge_conformance_answer() stored, given back
 * with the length stored beside it. Called exactly once per buffer. */
GE_CONFORMANCE_EXPORT void ge_conformance_free(char *buffer, size_t buffer_len)
    GE_CONFORMANCE_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif /* GE_CONFORMANCE_H */
