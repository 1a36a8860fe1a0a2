/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _DMSC_VERSION_H
#define _DMSC_VERSION_H

#define DMSC_VERSION "0.1.0"

#endif /* _DMSC_VERSION_H */
