#pragma once
// The whole public API of mlpcore.
#include "mlpcore/array_io.h"
#include "mlpcore/device_view.h"
#include "mlpcore/error.h"
#include "mlpcore/model.h"
#include "mlpcore/network.h"
#include "mlpcore/reference.h"
#include "mlpcore/version.h"
