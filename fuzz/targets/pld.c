/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz target pld: the PLD accountant (connect-the-dots); see pld_common.h. */
#include "pld_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fz_pld_one(data, size, DPZO_PLD_CONNECT_DOTS, "pld");
}
