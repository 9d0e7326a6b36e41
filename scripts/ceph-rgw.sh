#!/usr/bin/env bash
# A one-node Ceph cluster with a RADOS Gateway on 127.0.0.1, for pfio's S3 tests.
#
#   scripts/ceph-rgw.sh start [DIR] [PORT]   install (apt-get) if needed, start mon, mgr, one
#                                            memstore OSD and rgw; print the S3 endpoint
#   scripts/ceph-rgw.sh stop [DIR]           stop the daemons and remove DIR
#
# No systemd: every daemon runs from DIR (default /tmp/pfio-ceph). Cluster auth is "none";
# the gateway still checks SigV4 signatures with the keys of user "pfio" (printed in
# DIR/env, which the tests source: PFIO_TEST_CEPH_ENDPOINT, ..._ACCESS_KEY, ..._SECRET_KEY).
set -euo pipefail

cmd=${1:-start}
DIR=${2:-/tmp/pfio-ceph}
PORT=${3:-7480}
CONF=$DIR/ceph.conf
ACCESS_KEY=pfiotestaccesskey
SECRET_KEY=pfiotestsecretkey0123456789

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
    local packages=(ceph-mon ceph-osd ceph-mgr radosgw ceph-common uuid-runtime curl)
    apt-get install -y -q --no-install-recommends "${packages[@]}" \
        || { apt-get update -q && apt-get install -y -q --no-install-recommends "${packages[@]}"; }
}

start() {
    install
    stop
    mkdir -p "$DIR"/{run,log,mon/a,mgr/x,osd/0,rgw}
    local fsid
    fsid=$(uuidgen)
    cat > "$CONF" <<CONF
[global]
fsid = $fsid
mon host = 127.0.0.1:6789
mon initial members = a
auth cluster required = none
auth service required = none
auth client required = none
ms bind msgr2 = false
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
memstore device bytes = 2147483648
osd pool default pg num = 8
osd pool default pgp num = 8
mon max pg per osd = 1000

[mon.a]
mon data = $DIR/mon/a
public addr = 127.0.0.1:6789

[mgr.x]
mgr data = $DIR/mgr/x

[osd.0]
osd data = $DIR/osd/0

[client.rgw.a]
rgw data = $DIR/rgw
rgw frontends = beast endpoint=127.0.0.1:$PORT tcp_nodelay=1
rgw dns name = 127.0.0.1
CONF
    ceph-authtool --create-keyring "$DIR/keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
    monmaptool --create --add a 127.0.0.1:6789 --fsid "$fsid" "$DIR/monmap" >/dev/null
    ceph-mon -c "$CONF" --mkfs -i a --monmap "$DIR/monmap"
    ceph-mon -c "$CONF" -i a
    ceph-mgr -c "$CONF" -i x
    for _ in $(seq 60); do  # the monitor answers commands once it has formed its quorum
        ceph -c "$CONF" --connect-timeout 5 mon stat >/dev/null 2>&1 && break
        sleep 0.5
    done
    local uuid id
    uuid=$(uuidgen)
    id=$(ceph -c "$CONF" osd new "$uuid")
    ceph-osd -c "$CONF" -i "$id" --mkfs --osd-uuid "$uuid" 2>/dev/null
    ceph -c "$CONF" osd crush add "osd.$id" 1 root=default >/dev/null
    ceph-osd -c "$CONF" -i "$id"
    radosgw -c "$CONF" -n client.rgw.a
    for _ in $(seq 120); do
        curl -s -o /dev/null "http://127.0.0.1:$PORT" && break
        sleep 0.5
    done
    radosgw-admin -c "$CONF" user create --uid=pfio --display-name=pfio \
        --access-key="$ACCESS_KEY" --secret-key="$SECRET_KEY" >/dev/null
    cat > "$DIR/env" <<ENV
PFIO_TEST_CEPH_ENDPOINT=http://127.0.0.1:$PORT
PFIO_TEST_CEPH_ACCESS_KEY=$ACCESS_KEY
PFIO_TEST_CEPH_SECRET_KEY=$SECRET_KEY
ENV
    echo "http://127.0.0.1:$PORT"
}

case "$cmd" in
    start) start ;;
    stop) stop ;;
    *) echo "usage: $0 start|stop [DIR] [PORT]" >&2; exit 2 ;;
esac
