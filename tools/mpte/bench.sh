#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Run the MPTE benchmark (see bench.py); options pass through.
exec python3 "$(dirname "$0")/bench.py" "$@"
