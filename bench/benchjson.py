# SPDX-License-Identifier: Apache-2.0
"""JSON-safe values for the benchmark scripts (anchors.py, anchors_pld.py): non-finite
numbers become the strings "inf", "-inf" and "nan"; numpy scalars and arrays become plain
Python values (numpy is not imported here)."""
import math
import numbers


def jnum(x):
    """A JSON-safe number: finite floats/ints as is, others as strings."""
    if x is None:
        return None
    if isinstance(x, bool) or getattr(getattr(x, "dtype", None), "kind", "") == "b":
        return bool(x)
    if isinstance(x, numbers.Integral):
        return int(x)
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def jsonable(obj):
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)) or hasattr(obj, "tolist") and getattr(obj, "ndim", 0) > 0:
        return [jsonable(v) for v in obj]
    if isinstance(obj, str) or obj is None:
        return obj
    try:
        return jnum(obj)
    except (TypeError, ValueError):
        return str(obj)
