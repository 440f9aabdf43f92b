/* SPDX-License-Identifier: MIT */
/* The OMPD conformance plugin in the TR 2.001 ABI: see ompd_conformance.c. */
#define CQ_CONFORMANCE_TR 1
#include "tr_prototypes.h"
#include "ompd_conformance.c"
