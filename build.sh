#!/usr/bin/env bash
# The one entry point of mediaupload.
#   ./build.sh          build dist/ (and dist/mediaupload.tgz, the npm package) and print the
#                       wasm's size against its budget
#   ./build.sh test     install what the tests need, then run every test
#   ./build.sh test go|wasm|browser [FILE...]   one part only (browser: those test files)
#   ./build.sh serve    build dist/, then run the demo server (flags are passed on)
#   ./build.sh bench    build dist/, then print the browser throughput and memory figures
#   ./build.sh soak     build dist/, then run the random-fault soak (MEDIAUPLOAD_SOAK_N uploads,
#                       default 400; MEDIAUPLOAD_SOAK_SEED to repeat a run) and print its figures
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$PWD
export PATH="$(go env GOPATH)/bin:$PATH"

log() { printf '\n== %s\n' "$*" >&2; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

# --- installing what the tests need (CI and a new machine start bare) ----------------------
# The three engines the browser tests run in, from Debian's packages: Chromium, Firefox ESR,
# and WebKitGTK's WebDriver with its MiniBrowser, which needs an X server (Xvfb).
need_browsers() {
	local want=()
	[ -x /usr/bin/chromium ] || want+=(chromium)
	[ -x /usr/bin/firefox-esr ] || want+=(firefox-esr)
	command -v WebKitWebDriver >/dev/null || want+=(webkit2gtk-driver)
	command -v Xvfb >/dev/null || want+=(xvfb)
	[ ${#want[@]} -eq 0 ] && return
	log "installing ${want[*]} (Debian packages)"
	as_root apt-get update -qq
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${want[@]}" >/dev/null
}
need_wasmbrowsertest() {
	command -v wasmbrowsertest >/dev/null && return
	log "installing wasmbrowsertest"
	go install github.com/agnivade/wasmbrowsertest@v0.11.0
}
need_npm() {
	if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
		log "npm ci"
		# puppeteer-core downloads nothing itself; the variable keeps it so whatever pulls it in.
		PUPPETEER_SKIP_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error
	fi
}

# --- dist/ ---------------------------------------------------------------------------------
WASM_RAW_BUDGET=2600000
WASM_GZ_BUDGET=760000
# MEDIAUPLOAD_DIST builds elsewhere (the tests read the same variable), e.g. to keep two
# checkouts' work apart.
DIST=${MEDIAUPLOAD_DIST:-dist}
build() {
	log "building $DIST/"
	rm -rf "$DIST" && mkdir -p "$DIST"
	GOOS=js GOARCH=wasm go build -trimpath -ldflags="-s -w" -o "$DIST/mediaupload.wasm" ./wasm
	# The JS package (web/js/): bundled by esbuild, with the Go glue of the toolchain above.
	node web/js/build.mjs "$DIST" "$(go env GOROOT)/lib/wasm/wasm_exec.js"
	# mediaupload.wasm.br and .gz beside it, for servers that send precompressed files.
	node web/js/compress.mjs "$DIST/mediaupload.wasm"
	# The npm package as one file, under a name that does not change with the version: what
	# README.md's Install says to `npm install` (and a maintainer to `npm publish`).
	local packed
	packed=$(cd "$DIST" && npm pack --silent --pack-destination .)
	mv "$DIST/$packed" "$DIST/mediaupload.tgz"
	echo "npm package: $DIST/mediaupload.tgz ($packed)"
	size_report
}
size_report() {
	local raw gz br floor
	raw=$(stat -c %s "$DIST/mediaupload.wasm")
	gz=$(stat -c %s "$DIST/mediaupload.wasm.gz")
	br=$(stat -c %s "$DIST/mediaupload.wasm.br")
	printf 'wasm size: %d bytes raw (budget %d), %d bytes gzip -9 (budget %d), %d bytes brotli 11\n' \
		"$raw" "$WASM_RAW_BUDGET" "$gz" "$WASM_GZ_BUDGET" "$br"
	# Go's own floor: a program that links syscall/js alone (web/bench/floor), gzipped the same way.
	floor=$(mktemp)
	GOOS=js GOARCH=wasm go build -trimpath -ldflags="-s -w" -o "$floor" ./web/bench/floor
	node -e 'const z = require("zlib"), fs = require("fs"), [f, m] = process.argv.slice(1).map((p) => z.gzipSync(fs.readFileSync(p), { level: 9 }).length);
		console.log(`wasm against Go\x27s floor (a program that links syscall/js alone): ${m} / ${f} bytes gzip -9 = ${(m / f).toFixed(3)}x`)' "$floor" "$DIST/mediaupload.wasm"
	rm -f "$floor"
	if [ "$raw" -gt "$WASM_RAW_BUDGET" ] || [ "$gz" -gt "$WASM_GZ_BUDGET" ]; then
		echo "wasm size over budget" >&2
		return 1
	fi
}

# --- tests ---------------------------------------------------------------------------------
test_static() {
	log "gofmt, go vet"
	local bad
	bad=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './node_modules/*'))
	if [ -n "$bad" ]; then echo "gofmt would change: $bad" >&2; return 1; fi
	go vet ./core/... ./web/...
	GOOS=js GOARCH=wasm go vet ./jsbridge/... ./wasm/... ./web/test/glue/
}
test_native() {
	log "native Go tests (core, servers)"
	go test -count=1 -timeout 10m ./core/... ./web/...
	log "fuzzing every parser of what servers send, the chunk sizer and the hashes in the metadata, briefly"
	local f out
	out=$(mktemp)
	# Every parser of what a server sends (headers, JSON), the chunk sizer and the metadata that
	# states the hashes. A failure shows the fuzzer's own output (and a found input lands in
	# core/testdata/fuzz/).
	# The budget is a count of inputs, not a time: Go 1.26's fuzzer can fail a run whose time
	# is up while a worker is still busy ("context deadline exceeded", no input found;
	# go.dev/issue/75804, fixed in Go 1.27). A count has no deadline to race; 200,000 inputs
	# take about 3 s each here.
	for f in FuzzParseRange FuzzContentRange FuzzResolveLocation FuzzRetryAfter FuzzJSONString FuzzGoogleError FuzzChunkSizer FuzzMetadataWith FuzzXMLError; do
		if ! go test -run '^$' -fuzz "^$f\$" -fuzztime 200000x -timeout 5m ./core >"$out" 2>&1; then
			echo "fuzz $f: FAILED" >&2
			tail -40 "$out" >&2
			rm -f "$out"
			return 1
		fi
		echo "fuzz $f: ok"
	done
	rm -f "$out"
}
test_wasm() {
	log "wasm tests in headless Chromium (wasmbrowsertest)"
	# wasmbrowsertest prints harmless "unknown IPAddressSpace value: Loopback" lines. (pipefail:
	# the go test's status is the pipeline's.)
	GOOS=js GOARCH=wasm go test -count=1 -timeout 3m -exec wasmbrowsertest ./jsbridge/... ./wasm/... 2>&1 |
		grep -v 'unknown IPAddressSpace value'
}
# Runs the browser test files named (default: all of them, and the type check).
test_browser() {
	local files=("$@")
	if [ ${#files[@]} -eq 0 ]; then files=(web/test/*.test.mjs web/test/engines/*.test.mjs); fi
	log "browser tests of $DIST/: in Chromium (web/test/), and in Chromium, Firefox and WebKit (web/test/engines/)"
	go build -o "$TESTTMP/refserver" ./web/cmd/refserver
	go build -o "$TESTTMP/serve" ./web/cmd/serve
	MEDIAUPLOAD_REFSERVER="$TESTTMP/refserver" MEDIAUPLOAD_SERVE="$TESTTMP/serve" \
		MEDIAUPLOAD_TEST_OUT="$ROOT/test-output" node --test --test-concurrency=1 --test-timeout=600000 --test-force-exit \
		"${files[@]}"
	if [ $# -eq 0 ]; then
		log "tsc --noEmit over the typed example"
		npx tsc --noEmit -p web/test/types
	fi
}
# run_tests [go|wasm|browser [FILE...]]: every test, or one part of them (browser: the files
# named, or all).
run_tests() {
	local part=${1:-all}
	[ $# -gt 0 ] && shift
	case "$part" in
	all | go | wasm | browser) ;;
	*)
		echo "usage: ./build.sh test [go|wasm|browser [FILE...]]" >&2
		exit 2
		;;
	esac
	[ "$part" = go ] || need_browsers
	[ "$part" = all ] || [ "$part" = wasm ] && need_wasmbrowsertest
	need_npm
	TESTTMP=$(mktemp -d)
	export TMPDIR="$TESTTMP" # Chromium leaves profiles behind: keep them in one place
	trap 'rm -rf "$TESTTMP"' EXIT
	if [ "$part" = all ] || [ "$part" = go ]; then
		test_static
		test_native
	fi
	[ "$part" = go ] || build
	if [ "$part" = all ] || [ "$part" = wasm ]; then test_wasm; fi
	if [ "$part" = all ] || [ "$part" = browser ]; then test_browser "$@"; fi
	log "tests passed ($part)"
}

case "${1:-build}" in
build)
	need_npm
	build
	;;
test)
	shift
	run_tests "$@"
	;;
serve)
	shift
	need_npm
	build
	exec go run ./web/cmd/serve -dist "$DIST" "$@"
	;;
bench)
	need_browsers
	need_npm
	build
	BENCH_TMP=$(mktemp -d)
	trap 'rm -rf "$BENCH_TMP"' EXIT
	GOOS=js GOARCH=wasm go build -trimpath -ldflags="-s -w" -o "$BENCH_TMP/goloop.wasm" ./web/bench/goloop
	BENCH_GOLOOP="$BENCH_TMP/goloop.wasm" BENCH_WASM_EXEC="$(go env GOROOT)/lib/wasm/wasm_exec.js" node web/bench/bench.mjs
	;;
soak)
	need_browsers
	need_npm
	build
	SOAK_TMP=$(mktemp -d)
	trap 'rm -rf "$SOAK_TMP"' EXIT
	go build -o "$SOAK_TMP/refserver" ./web/cmd/refserver
	TMPDIR="$SOAK_TMP" MEDIAUPLOAD_REFSERVER="$SOAK_TMP/refserver" node web/test/soak.mjs
	;;
*)
	echo "usage: ./build.sh [build|test|serve|bench|soak]" >&2
	exit 2
	;;
esac
