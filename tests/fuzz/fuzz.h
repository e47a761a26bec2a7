/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: fuzz target (single thread) */
#pragma once
/* What every libFuzzer target here shares: the entry points libFuzzer calls
 * and CHECK(), which traps (a crash libFuzzer reports with the input) when a
 * property of the unit under test does not hold. */

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define CHECK(x)                                                                   \
        do {                                                                       \
                if (!(x))                                                          \
                        __builtin_trap();                                          \
        } while (0)
