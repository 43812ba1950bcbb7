#!/usr/bin/env bash
# The test cluster of package weaviate: three Weaviate v1.39.0 nodes inside
# a network namespace that has only a loopback interface, so that nothing
# they do can reach beyond this machine. Needs root (ip netns), curl and Go.
#
#   weaviate/cluster.sh up            build once (cached), start 3 nodes, wait until healthy
#   weaviate/cluster.sh down          stop exactly the nodes it started (by PID), delete the namespace
#   weaviate/cluster.sh status        the nodes' PIDs and what /v1/nodes says
#   weaviate/cluster.sh exec CMD...   run CMD inside the namespace (how tests reach the nodes)
#   weaviate/cluster.sh kill N        SIGKILL node N (0, 1 or 2): for fault tests
#   weaviate/cluster.sh start N       start node N again with its data folder
#   weaviate/cluster.sh cut N M       drop every packet between nodes N and M (both ways)
#   weaviate/cluster.sh pause N       SIGSTOP node N
#   weaviate/cluster.sh heal          drop the nemesis's rules, SIGCONT every node
#   weaviate/cluster.sh faults        print the nemesis's rules and paused nodes
#   weaviate/cluster.sh addrs         print the HTTP addresses, comma-separated
#   weaviate/cluster.sh grpc-addrs    print the gRPC addresses, comma-separated (Options.GRPCAddrs)
#   weaviate/cluster.sh build         only build (or find) the cached server binary
#
# Node i has its own loopback address, 127.0.0.(i+1), and listens there,
# in the namespace, at HTTP 8080+i, gRPC 50051+i, gossip 7100+3i, cluster
# data 7101+3i, Raft 8300+2i and Raft internal RPC 8301+2i (in localhost
# mode Weaviate wants the latter to be the Raft port + 1). HTTP, gossip
# and both Raft ports are bound to the node's address; gRPC and cluster
# data listen on every address of the namespace (the ports are still the
# node's own), because Weaviate v1.39 binds them to ":port" with no
# setting to change it (adapters/handlers/grpc/server.go StartAndListen,
# clusterapi/serve.go and clusterapi/grpc/server.go). The namespace has
# only lo, so they are reachable from 127.0.0.0/8 of the namespace alone.
# Telemetry, profiling and modules are off.
#
# The nemesis (cut, pause, heal) is for the partition test. A cut is a
# pair of nftables rules in a table of the namespace (inet cairn_nemesis),
# nowhere else: packets that node N sends to any port of node M's, and
# that M sends to N's, are dropped. A rule names the sender by the group
# its node runs as (node i runs as root with group 64100+i, "meta
# skgid"), not by source address: Weaviate binds its listeners but not
# its dialers, so every connection a node opens leaves from 127.0.0.1,
# the source the kernel picks for all of 127.0.0.0/8. The receiver is
# named by its address and ports, which no other node shares. Loss and
# delay with tc netem are not offered: the kernel this was written on has
# no sch_netem ("Specified qdisc kind is unknown"). Needs nft (nftables).
#
# Environment: CAIRN_WEAVIATE_NETNS (namespace, default cairn-wv),
# CAIRN_WEAVIATE_STATE (data, logs and PID files, default
# /tmp/cairn-weaviate), CAIRN_WEAVIATE_BIN (a weaviate-server to use
# instead of the cached build), CAIRN_WEAVIATE_RAFT_TIMEOUTS_MULTIPLIER
# (the nodes' RAFT_TIMEOUTS_MULTIPLIER: Weaviate's default 5 makes a
# follower wait 5–10 s without a leader before it stands for election).
set -euo pipefail

version=v1.39.0
ns=${CAIRN_WEAVIATE_NETNS:-cairn-wv}
state=${CAIRN_WEAVIATE_STATE:-/tmp/cairn-weaviate}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/cairn/weaviate-$version
bin=${CAIRN_WEAVIATE_BIN:-$cache/weaviate-server}
raft_multiplier=${CAIRN_WEAVIATE_RAFT_TIMEOUTS_MULTIPLIER:-}
nodes=3

die() { echo "cluster.sh: $*" >&2; exit 1; }

build() {
	if [ -x "$bin" ]; then
		return
	fi
	[ -z "${CAIRN_WEAVIATE_BIN:-}" ] || die "CAIRN_WEAVIATE_BIN=$bin is not executable"
	echo "cluster.sh: building weaviate-server $version into $cache (minutes, ~2 GB peak)" >&2
	mkdir -p "$cache"
	# Outside any module, so that the workspace's go.work plays no part.
	(cd "$cache" && CGO_ENABLED=0 GOWORK=off GOBIN="$cache" \
		nice -n 10 go install "github.com/weaviate/weaviate/cmd/weaviate-server@$version")
	[ -x "$bin" ] || die "build produced no $bin"
}

in_ns() { ip netns exec "$ns" "$@"; }

ns_exists() { ip netns list | awk '{print $1}' | grep -qx "$ns"; }

pidfile() { echo "$state/node$1.pid"; }

# Node i's address, ports, and the group it runs as (the nemesis's rules
# name it by that group).
addr() { echo "127.0.0.$(($1 + 1))"; }
tcp_ports() { echo "$((8080 + $1)), $((50051 + $1)), $((7100 + 3 * $1)), $((7101 + 3 * $1)), $((8300 + 2 * $1)), $((8301 + 2 * $1))"; }
gossip_port() { echo $((7100 + 3 * $1)); }
gid() { echo $((64100 + $1)); }

# alive N: node N's recorded process is running (and is a weaviate-server).
alive() {
	local f pid
	f=$(pidfile "$1")
	[ -f "$f" ] || return 1
	pid=$(cat "$f")
	[ -d "/proc/$pid" ] || return 1
	grep -q weaviate-server "/proc/$pid/cmdline" 2>/dev/null
}

start_node() {
	local i=$1
	alive "$i" && die "node $i is already running (PID $(cat "$(pidfile "$i")"))"
	mkdir -p "$state/data$i"
	local join=""
	for j in $(seq 0 $((nodes - 1))); do
		join+="${join:+,}node$j:$((8300 + 2 * j))"
	done
	# setsid: the node is in a session of its own, so a signal to the
	# caller's process group (Ctrl-C, a test's timeout) does not reach it;
	# only "down" or "kill" stop it, by PID. setsid may fork, so the node
	# writes its own PID (the shell's, which exec keeps) before it starts.
	local pf
	pf=$(pidfile "$i")
	rm -f "$pf"
	in_ns setpriv --regid="$(gid "$i")" --clear-groups \
		env -i PATH="$PATH" HOME="$state" \
		DISABLE_TELEMETRY=true \
		GO_PROFILING_DISABLE=true \
		PROMETHEUS_MONITORING_ENABLED=false \
		AUTHENTICATION_ANONYMOUS_ACCESS_ENABLED=true \
		AUTHORIZATION_ADMINLIST_ENABLED=false \
		DEFAULT_VECTORIZER_MODULE=none \
		ENABLE_MODULES= \
		PERSISTENCE_DATA_PATH="$state/data$i" \
		QUERY_MAXIMUM_RESULTS=100000 \
		AUTOSCHEMA_ENABLED=false \
		CLUSTER_HOSTNAME="node$i" \
		CLUSTER_IN_LOCALHOST=true \
		CLUSTER_BIND_ADDR="$(addr "$i")" \
		CLUSTER_GOSSIP_BIND_PORT=$((7100 + 3 * i)) \
		CLUSTER_DATA_BIND_PORT=$((7101 + 3 * i)) \
		CLUSTER_JOIN=127.0.0.1:7100 \
		RAFT_PORT=$((8300 + 2 * i)) \
		RAFT_INTERNAL_RPC_PORT=$((8301 + 2 * i)) \
		RAFT_JOIN="$join" \
		RAFT_BOOTSTRAP_EXPECT=$nodes \
		GRPC_PORT=$((50051 + i)) \
		${raft_multiplier:+RAFT_TIMEOUTS_MULTIPLIER=$raft_multiplier} \
		setsid sh -c 'echo $$ >"$0.tmp" && mv "$0.tmp" "$0" && exec "$@"' "$pf" \
		"$bin" --scheme http --host "$(addr "$i")" --port $((8080 + i)) \
		--read-timeout=120s --write-timeout=120s \
		>>"$state/node$i.log" 2>&1 </dev/null &
	for _ in $(seq 1 100); do
		[ -f "$pf" ] && return
		sleep 0.05
	done
	die "node $i did not start; see $state/node$i.log"
}

# healthy prints how many nodes node 0..2 (the first that answers) reports
# HEALTHY.
healthy() {
	local i out
	for i in $(seq 0 $((nodes - 1))); do
		alive "$i" || continue
		if out=$(in_ns curl -sf -m 2 "http://$(addr "$i"):$((8080 + i))/v1/nodes" 2>/dev/null); then
			grep -o '"status":"HEALTHY"' <<<"$out" | wc -l
			return
		fi
	done
	echo 0
}

wait_healthy() {
	local want=$1 deadline=$((SECONDS + ${2:-120}))
	while [ "$SECONDS" -lt "$deadline" ]; do
		for i in $(seq 0 $((nodes - 1))); do
			[ -d "/proc/$(cat "$(pidfile "$i")" 2>/dev/null || echo none)" ] || [ "$want" -lt "$nodes" ] ||
				die "node $i exited during start; see $state/node$i.log"
		done
		if [ "$(healthy)" -ge "$want" ]; then
			return
		fi
		sleep 0.5
	done
	die "fewer than $want healthy nodes after ${2:-120} s; logs in $state"
}

up() {
	build
	if ! ns_exists; then
		ip netns add "$ns"
	fi
	in_ns ip link set lo up
	# Only loopback: refuse to start if the namespace has anything else.
	if in_ns ip -o link show | awk -F': ' '{print $2}' | grep -vqx lo; then
		die "namespace $ns has interfaces other than lo"
	fi
	mkdir -p "$state"
	for i in $(seq 0 $((nodes - 1))); do
		alive "$i" || start_node "$i"
	done
	local t0=$SECONDS
	wait_healthy $nodes 180
	echo "cluster.sh: $nodes healthy nodes in namespace $ns after $((SECONDS - t0)) s: $(addrs)"
}

stop_node() {
	local i=$1 sig=${2:-TERM} pid f
	f=$(pidfile "$i")
	[ -f "$f" ] || return 0
	pid=$(cat "$f")
	if alive "$i"; then
		kill "-$sig" "$pid" 2>/dev/null || true
		kill -CONT "$pid" 2>/dev/null || true # a paused node, so that it handles TERM
		for _ in $(seq 1 100); do
			[ -d "/proc/$pid" ] || break
			sleep 0.1
		done
		if [ -d "/proc/$pid" ]; then
			kill -KILL "$pid" 2>/dev/null || true
			sleep 0.2
		fi
	fi
	rm -f "$f"
}

# The nemesis: cut, pause and heal. Its rules live in one table of the
# namespace, which heal (and down, with the namespace) deletes.
table="inet cairn_nemesis"

# drop_from N M: drop what node N sends to node M's address and ports.
drop_from() {
	local n=$1 m=$2
	in_ns nft add rule $table out meta skgid "$(gid "$n")" ip daddr "$(addr "$m")" \
		tcp dport "{ $(tcp_ports "$m") }" drop comment "\"cut $n-$m\""
	in_ns nft add rule $table out meta skgid "$(gid "$n")" ip daddr "$(addr "$m")" \
		udp dport "$(gossip_port "$m")" drop comment "\"cut $n-$m\""
}

cut() {
	local n=$1 m=$2
	[ "$n" != "$m" ] || die "cut needs two different nodes"
	in_ns nft add table $table
	in_ns nft add chain $table out "{ type filter hook output priority 0; policy accept; }"
	drop_from "$n" "$m"
	drop_from "$m" "$n"
}

pause() {
	alive "$1" || die "node $1 is not running"
	kill -STOP "$(cat "$(pidfile "$1")")"
}

heal() {
	if ns_exists && in_ns nft list table $table >/dev/null 2>&1; then
		in_ns nft delete table $table
	fi
	for i in $(seq 0 $((nodes - 1))); do
		if alive "$i"; then
			kill -CONT "$(cat "$(pidfile "$i")")" 2>/dev/null || true
		fi
	done
}

faults() {
	if ns_exists && in_ns nft list table $table >/dev/null 2>&1; then
		in_ns nft list table $table
	else
		echo "no cut"
	fi
	for i in $(seq 0 $((nodes - 1))); do
		if alive "$i" && grep -q '^State:.*T (stopped)' "/proc/$(cat "$(pidfile "$i")")/status"; then
			echo "node$i: paused"
		fi
	done
}

down() {
	heal
	for i in $(seq 0 $((nodes - 1))); do
		stop_node "$i" TERM
	done
	if ns_exists; then
		ip netns del "$ns"
	fi
	rm -rf "$state"
	echo "cluster.sh: stopped; namespace $ns deleted"
}

status() {
	for i in $(seq 0 $((nodes - 1))); do
		if alive "$i"; then
			echo "node$i: PID $(cat "$(pidfile "$i")"), http://$(addr "$i"):$((8080 + i))"
		else
			echo "node$i: not running"
		fi
	done
	if ns_exists; then
		echo "namespace $ns: $(healthy) healthy nodes"
	else
		echo "namespace $ns: absent"
	fi
}

addrs() {
	local out=""
	for i in $(seq 0 $((nodes - 1))); do
		out+="${out:+,}$(addr "$i"):$((8080 + i))"
	done
	echo "$out"
}

grpc_addrs() {
	local out=""
	for i in $(seq 0 $((nodes - 1))); do
		out+="${out:+,}$(addr "$i"):$((50051 + i))"
	done
	echo "$out"
}

node_arg() {
	[[ "${1:-}" =~ ^[0-2]$ ]] || die "want a node number 0..$((nodes - 1)), got '${1:-}'"
}

case "${1:-}" in
up) up ;;
down) down ;;
status) status ;;
build) build; echo "$bin" ;;
addrs) addrs ;;
grpc-addrs) grpc_addrs ;;
exec)
	shift
	ns_exists || die "namespace $ns does not exist (run up first)"
	exec ip netns exec "$ns" "$@"
	;;
cut)
	node_arg "${2:-}"
	node_arg "${3:-}"
	ns_exists || die "namespace $ns does not exist (run up first)"
	cut "$2" "$3"
	;;
pause)
	node_arg "${2:-}"
	pause "$2"
	;;
heal) heal ;;
faults) faults ;;
kill)
	node_arg "${2:-}"
	stop_node "$2" KILL
	;;
start)
	node_arg "${2:-}"
	ns_exists || die "namespace $ns does not exist (run up first)"
	start_node "$2"
	;;
*) die "usage: cluster.sh up|down|status|exec CMD...|kill N|start N|cut N M|pause N|heal|faults|addrs|grpc-addrs|build" ;;
esac
