/* dpzo/dpzo.h: the whole public C API of dpzo's accountant. */
#ifndef DPZO_DPZO_H
#define DPZO_DPZO_H

#define DPZO_VERSION "0.1.0"

#include "dpzo/status.h"
#include "dpzo/event.h"
#include "dpzo/rdp.h"
#include "dpzo/convert.h"
#include "dpzo/calibrate.h"
#include "dpzo/pld.h"
#include "dpzo/lmo.h"
#include "dpzo/profile.h"
#include "dpzo/audit.h"

#endif
