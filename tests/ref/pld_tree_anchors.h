/* SPDX-License-Identifier: Apache-2.0 */
/* tests/ref/pld_tree_anchors.h: written by make_pld_tree_anchors.py
 * (dp_accounting 0.6.0, numpy 2.4.6); do not edit. */
#define DP_ACC_100 0.5699969135684734 /* n = 100, grid 0.001 */
#define DP_ACC_1000 1.2589637664827777 /* n = 1000, grid 0.001 */
