#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Regenerate ./configure from configure.ac (needs autoconf, pkg-config's pkg.m4).
set -e
cd "$(dirname "$0")"
autoreconf -fi
