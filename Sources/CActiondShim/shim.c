#include "actiond_shim.h"
