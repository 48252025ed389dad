# SPDX-License-Identifier: Apache-2.0
"""dpzo._structs: ctypes mirrors of the library's option and result structs.

Internal, shared by the modules of the package. Each Structure matches its C typedef field
by field (include/dpzo/convert.h, pld.h, calibrate.h); python/tests/test_accountants.py
checks sizes and offsets against a C compiler.
"""
from __future__ import annotations

import ctypes

__all__ = ["RdpOptions", "DpResult", "PldOptions", "PldResult", "Calibration",
           "CONVERSIONS", "ORDER_GRIDS", "PLD_CONNECT_DOTS", "PLD_PRV"]

c_double = ctypes.c_double

# dpzo_conversion
CONVERSIONS = {"improved": 0, "standard": 1}
# dpzo_order_grid
ORDERS_CONTINUOUS, ORDERS_OPACUS, ORDERS_TF, ORDERS_DP_ACCOUNTING, ORDERS_CUSTOM = range(5)
ORDER_GRIDS = {"continuous": ORDERS_CONTINUOUS, "default": ORDERS_CONTINUOUS,
               "opacus": ORDERS_OPACUS, "tf": ORDERS_TF,
               "dp_accounting": ORDERS_DP_ACCOUNTING}
# dpzo_pld_method
PLD_CONNECT_DOTS, PLD_PRV = 0, 1


class RdpOptions(ctypes.Structure):
    """dpzo_rdp_options."""

    _fields_ = [("conversion", ctypes.c_int), ("grid", ctypes.c_int),
                ("orders", ctypes.POINTER(c_double)), ("n_orders", ctypes.c_size_t),
                ("alpha_max", c_double)]


class DpResult(ctypes.Structure):
    """dpzo_dp_result."""

    _fields_ = [("epsilon", c_double), ("epsilon_estimate", c_double), ("delta", c_double),
                ("delta_estimate", c_double), ("order", c_double), ("rdp", c_double),
                ("order_at_edge", ctypes.c_int), ("rounding", c_double)]


class PldOptions(ctypes.Structure):
    """dpzo_pld_options."""

    _fields_ = [("method", ctypes.c_int), ("grid", c_double), ("eps_error", c_double),
                ("delta_error", c_double), ("memory_limit", ctypes.c_size_t),
                ("rdp", ctypes.POINTER(RdpOptions)), ("ladder", ctypes.c_int)]


class PldResult(ctypes.Structure):
    """dpzo_pld_result."""

    _fields_ = [("epsilon", c_double), ("epsilon_lower", c_double),
                ("epsilon_estimate", c_double), ("epsilon_upper", c_double),
                ("delta", c_double), ("delta_lower", c_double), ("delta_estimate", c_double),
                ("delta_upper", c_double), ("fallback", ctypes.c_int),
                ("reason", ctypes.c_char * 200), ("rdp_epsilon", c_double),
                ("grid", c_double), ("eps_error", c_double), ("delta_error", c_double),
                ("fft_size", ctypes.c_size_t), ("memory_bytes", ctypes.c_size_t),
                ("tilt", c_double)]


class Calibration(ctypes.Structure):
    """dpzo_calibration."""

    _fields_ = [("value", c_double), ("epsilon", c_double), ("order", c_double),
                ("other_side", c_double), ("epsilon_other_side", c_double),
                ("evaluations", ctypes.c_int), ("epsilon_lower", c_double)]
