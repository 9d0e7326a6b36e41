#!/usr/bin/env bash
# A one-node Ceph cluster with a RADOS Gateway on 127.0.0.1, for pfio's S3 tests and benchmarks.
#
#   scripts/ceph-rgw.sh start [DIR] [PORT]   install (apt-get) if needed, start mon, mgr, one
#                                            memstore OSD and rgw; print the S3 endpoint
#   scripts/ceph-rgw.sh stop [DIR]           stop the daemons and remove DIR
#
# No systemd: every daemon runs from DIR (default /tmp/pfio-ceph). Cluster auth is "none";
# the gateway still checks SigV4 signatures with the keys of user "pfio" (printed in
# DIR/env, which the tests source: PFIO_TEST_CEPH_ENDPOINT, ..._ACCESS_KEY, ..._SECRET_KEY).
#
# The monitor speaks msgr v1 only, so its address says so ("v1:"): an address without a type on
# a port other than 6789 would be taken for a v2 one, which the daemons do not speak.
#
# The OSD keeps objects in memory (memstore), up to 8 GiB; what an overwrite or a delete frees
# is collected within a minute (Ceph's default waits 2 hours, and repeated benchmarks filled
# the store: a full OSD makes every write wait forever).
#
# Every port is a free one, so that gateways in different DIRs run side by side: the monitor
# and the gateway (unless PORT is given) take a port the kernel reports free, the manager and
# the OSD bind the first free ones of Ceph's own range (6800-7300). A start that fails (a port
# taken in between, a monitor slow to serve commands) is retried from scratch, up to 3 times.
set -euo pipefail

cmd=${1:-start}
DIR=${2:-/tmp/pfio-ceph}
PORT=${3:-}
CONF=$DIR/ceph.conf
ACCESS_KEY=pfiotestaccesskey
SECRET_KEY=pfiotestsecretkey0123456789
ATTEMPTS=3

log() { echo "ceph-rgw: $*" >&2; }

stop() {
    local pids=() pid
    if [ -d "$DIR/run" ]; then
        for pidfile in "$DIR"/run/*.pid; do
            [ -e "$pidfile" ] && pids+=("$(cat "$pidfile")")
        done
    fi
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for _ in $(seq 50); do
        local alive=0
        for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
        [ "$alive" = 0 ] && break
        sleep 0.2
    done
    for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
    rm -rf "$DIR"
}

install() {
    command -v radosgw >/dev/null && command -v ceph-mon >/dev/null && return
    export DEBIAN_FRONTEND=noninteractive
    local packages=(ceph-mon ceph-osd ceph-mgr radosgw ceph-common uuid-runtime curl python3)
    apt-get install -y -q --no-install-recommends "${packages[@]}" \
        || { apt-get update -q && apt-get install -y -q --no-install-recommends "${packages[@]}"; }
}

free_port() {  # a TCP port of 127.0.0.1 that nothing listens on now
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# retry SECONDS COMMAND...: run COMMAND until it succeeds, every half second, for at most
# SECONDS; the output of the last try is shown when it never succeeds.
retry() {
    local seconds=$1 out tries=0
    shift
    local deadline=$((SECONDS + seconds))
    while :; do
        tries=$((tries + 1))
        if out=$("$@" 2>&1); then
            [ "$tries" -gt 1 ] && log "$1: ready after $tries tries"
            [ -n "$out" ] && echo "$out"
            return 0
        fi
        if [ "$SECONDS" -ge "$deadline" ]; then
            log "gave up after ${seconds}s: $*: $out"
            return 1
        fi
        sleep 0.5
    done
}

ceph_cli() { ceph -c "$CONF" --connect-timeout 10 "$@"; }

# The monitor answers "mon stat" before it serves every command: the commands the CLI
# needs first ("get_command_descriptions") can still fail with EPERM for a moment after the
# quorum forms. Ready means a command that goes through the command table succeeds.
mon_ready() { ceph_cli mon stat >/dev/null && ceph_cli osd ls >/dev/null; }

osd_up() { [ "$(ceph_cli osd stat -f json | python3 -c 'import json, sys; print(json.load(sys.stdin)["num_up_osds"])')" -ge 1 ]; }

rgw_answers() { curl -sf -o /dev/null --max-time 5 "http://127.0.0.1:$1"; }

write_conf() {
    local fsid=$1 mon_port=$2 rgw_port=$3
    cat > "$CONF" <<CONF
[global]
fsid = $fsid
mon host = v1:127.0.0.1:$mon_port
mon initial members = a
auth cluster required = none
auth service required = none
auth client required = none
ms bind msgr2 = false
public network = 127.0.0.0/8
osd pool default size = 1
osd pool default min size = 1
mon allow pool size one = true
mon allow pool delete = true
osd crush chooseleaf type = 0
mon data avail crit = 0
mon warn on pool no redundancy = false
run dir = $DIR/run
pid file = $DIR/run/\$name.pid
admin socket = $DIR/run/\$name.asok
log file = $DIR/log/\$name.log
keyring = $DIR/keyring
osd objectstore = memstore
osd class update on start = false
osd crush update on start = false
memstore device bytes = 8589934592
osd pool default pg num = 8
osd pool default pgp num = 8
mon max pg per osd = 1000

[mon.a]
mon data = $DIR/mon/a
public addr = v1:127.0.0.1:$mon_port

[mgr.x]
mgr data = $DIR/mgr/x

[osd.0]
osd data = $DIR/osd/0

[client.rgw.a]
rgw data = $DIR/rgw
rgw frontends = beast endpoint=127.0.0.1:$rgw_port tcp_nodelay=1
rgw dns name = 127.0.0.1
rgw gc obj min wait = 10
rgw gc processor period = 30
CONF
}

# One attempt at the whole cluster, in a fresh DIR; fails (non-zero) at the first step that
# does not come up in time. A daemon's launcher returns once the daemon has started (the OSD's
# only once it reached the monitor), so each is bounded by `timeout`.
start_once() {
    local fsid mon_port rgw_port uuid id
    mkdir -p "$DIR"/{run,log,mon/a,mgr/x,osd/0,rgw}
    fsid=$(uuidgen)
    mon_port=$(free_port)
    rgw_port=${PORT:-$(free_port)}
    write_conf "$fsid" "$mon_port" "$rgw_port"
    ceph-authtool --create-keyring "$DIR/keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
    monmaptool --create --addv a "[v1:127.0.0.1:$mon_port]" --fsid "$fsid" "$DIR/monmap" >/dev/null
    ceph-mon -c "$CONF" --mkfs -i a --monmap "$DIR/monmap"
    timeout 60 ceph-mon -c "$CONF" -i a
    retry 60 mon_ready || return 1
    timeout 60 ceph-mgr -c "$CONF" -i x
    uuid=$(uuidgen)
    id=$(retry 30 ceph_cli osd new "$uuid") || return 1  # the same uuid gives the same id
    timeout 60 ceph-osd -c "$CONF" -i "$id" --mkfs --osd-uuid "$uuid" 2>/dev/null
    retry 30 ceph_cli osd crush add "osd.$id" 1 root=default >/dev/null || return 1
    timeout 60 ceph-osd -c "$CONF" -i "$id"
    retry 60 osd_up || return 1
    timeout 60 radosgw -c "$CONF" -n client.rgw.a
    retry 90 rgw_answers "$rgw_port" || return 1
    # (a test makes a bucket of its own: the default limit of 1,000 buckets a user is
    # reached within one run of the suite)
    retry 30 radosgw-admin -c "$CONF" user create --uid=pfio --display-name=pfio \
        --max-buckets=1000000 \
        --access-key="$ACCESS_KEY" --secret-key="$SECRET_KEY" >/dev/null || return 1
    cat > "$DIR/env" <<ENV
PFIO_TEST_CEPH_ENDPOINT=http://127.0.0.1:$rgw_port
PFIO_TEST_CEPH_ACCESS_KEY=$ACCESS_KEY
PFIO_TEST_CEPH_SECRET_KEY=$SECRET_KEY
ENV
    echo "http://127.0.0.1:$rgw_port"
}

start() {
    install
    local attempt
    for attempt in $(seq "$ATTEMPTS"); do
        stop
        # a subshell, so that a failing step under `set -e` ends this attempt, not the script
        # (not as an `if` condition: that would switch `set -e` off inside)
        set +e
        (set -e; start_once)
        local status=$?
        set -e
        [ "$status" = 0 ] && return 0
        log "attempt $attempt of $ATTEMPTS failed; the last lines of the logs in $DIR/log:"
        tail -n 3 "$DIR"/log/*.log >&2 2>/dev/null || true
    done
    stop
    log "no gateway after $ATTEMPTS attempts"
    return 1
}

case "$cmd" in
    start) start ;;
    stop) stop ;;
    *) echo "usage: $0 start|stop [DIR] [PORT]" >&2; exit 2 ;;
esac
