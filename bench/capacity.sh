#!/usr/bin/env bash
# The load generator's capacity: the SSE chunks per second `bin/nereid bench` records from a
# trivial streaming endpoint (the tests' FakeSseServer: 256 one-token chunks per request, no
# delay, on 127.0.0.1), with STREAMS concurrent streams (default 256), 4 requests per stream.
# Both sides share this machine's cores, so the figure is a lower bound for the generator alone.
#   bench/capacity.sh [STREAMS]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
# shellcheck source=../bin/lib/jdk.sh
. bin/lib/jdk.sh
nereid_select_jdk
streams=${1:-256}
./mvnw -B -ntp -q -pl bench -am verify -Dtest=GeneratorCapacityTest -Dsurefire.failIfNoSpecifiedTests=false \
  -Dbench.capacity.streams="$streams" 2>&1 | grep '^bench capacity:'
