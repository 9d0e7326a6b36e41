#!/usr/bin/env bash
# Runs a command (the test suite) with a Ceph RADOS Gateway on 127.0.0.1 beside it, where one
# can be installed and started (root with apt-get: `make test` on CI and on Debian/Ubuntu
# machines), and stops the gateway afterwards. Where Ceph cannot run, the command runs
# anyway and the Ceph-parametrized S3 tests skip with a message.
#
#   scripts/with-ceph.sh COMMAND [ARG...]
#
# PFIO_TEST_CEPH=0 skips Ceph altogether; PFIO_TEST_CEPH=1 makes a failed start an error.
# A gateway already running in the same directory is restarted, and stopped at the end.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
dir=${PFIO_CEPH_DIR:-/tmp/pfio-ceph}
log=$(mktemp -t pfio-ceph-start.XXXXXX.log)
started=0

why_not() {
    [ "${PFIO_TEST_CEPH:-auto}" = 0 ] && echo "PFIO_TEST_CEPH=0" && return
    [ "$(id -u)" != 0 ] && echo "not root (the gateway is installed with apt-get)" && return
    command -v radosgw >/dev/null || command -v apt-get >/dev/null || echo "no apt-get"
}

reason=$(why_not)
if [ -z "$reason" ]; then
    echo "starting a Ceph RADOS Gateway for the S3 tests (log: $log) ..."
    if "$here/ceph-rgw.sh" start "$dir" >"$log" 2>&1; then
        started=1
        trap '"$here/ceph-rgw.sh" stop "$dir" >/dev/null 2>&1' EXIT
        set -a; . "$dir/env"; set +a  # PFIO_TEST_CEPH_ENDPOINT, ..._ACCESS_KEY, ..._SECRET_KEY
        echo "Ceph RADOS Gateway at $PFIO_TEST_CEPH_ENDPOINT"
    else
        "$here/ceph-rgw.sh" stop "$dir" >/dev/null 2>&1
        reason="it did not start; the last lines of $log:"$'\n'"$(tail -n 5 "$log")"
    fi
fi
if [ "$started" = 0 ]; then
    echo "no Ceph RADOS Gateway: $reason; the S3 tests run on moto only"
    [ "${PFIO_TEST_CEPH:-auto}" = 1 ] && exit 1
fi
"$@"
