#ifndef QUIRE_CFUZZER_H
#define QUIRE_CFUZZER_H

#include <stddef.h>
#include <stdint.h>

/*
 * libFuzzer's driver, for a program with a main of its own (SwiftPM links one into every executable): it
 * comes from the toolchain's libclang_rt.fuzzer_no_main, which scripts/fuzz links into the fuzz build.
 * Declared only; an ordinary build never calls it.
 */
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
