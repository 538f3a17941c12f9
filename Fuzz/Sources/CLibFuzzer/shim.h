#include <stddef.h>
#include <stdint.h>

/// libFuzzer's entry point for programs with their own main (compiler-rt, FuzzerDriver.cpp).
/// Provided by the runtime that `-sanitize=fuzzer` links; no library to link here.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*UserCb)(const uint8_t *Data, size_t Size));
