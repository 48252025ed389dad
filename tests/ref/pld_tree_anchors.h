/* tests/ref/pld_tree_anchors.h: written by make_pld_tree_anchors.py
 * (dp_accounting 0.6.0, numpy 2.4.6); do not edit. */
#define DP_ACC_100 0.5698778586011682 /* n = 100, grid 0.0001 */
#define DP_ACC_300 0.7773520075140956 /* n = 300, grid 0.001 */
