/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (libFuzzer runs the target single-threaded) */
/* libFuzzer target for fido_id's report descriptor walk
 * (src/helpers/hid-fido.c, compiled into this target): any bytes, as the
 * program reads them (at most HID_DESCRIPTOR_MAX).
 *
 * Checks: no read outside the input (an exact-size heap copy, ASan); the
 * answer is -EINVAL, 0 or 1.
 * Seed corpus: tests/fuzz/corpus-hid-fido/ (descriptors of tokens,
 * keyboards, mice). */

#include <stdlib.h>
#include <string.h>

#include "../../src/helpers/hid-fido.c"
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        (void)argc;
        (void)argv;
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        uint8_t *copy;
        int r;

        if (size > HID_DESCRIPTOR_MAX)
                size = HID_DESCRIPTOR_MAX;
        /* an exact-size heap copy, so ASan sees any read past the end */
        copy = malloc(size ? size : 1);
        CHECK(copy);
        memcpy(copy, data, size);
        r = hid_fido_is_token(copy, size);
        CHECK(r == -EINVAL || r == 0 || r == 1);
        free(copy);
        return 0;
}
